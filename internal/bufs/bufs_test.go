package bufs

import "testing"

// TestGrowReusesOrReallocates: within capacity the same array comes back
// with its values; beyond it a new zeroed one.
func TestGrowReusesOrReallocates(t *testing.T) {
	s := make([]float32, 3, 8)
	s[0] = 7
	g := Grow(s, 6)
	if len(g) != 6 || &g[0] != &s[0] || g[0] != 7 {
		t.Errorf("Grow within capacity: len %d, same array %v, g[0] %v", len(g), &g[0] == &s[0], g[0])
	}
	h := Grow(s, 9)
	if len(h) != 9 || &h[0] == &s[0] || h[0] != 0 {
		t.Errorf("Grow beyond capacity: len %d, same array %v, h[0] %v", len(h), &h[0] == &s[0], h[0])
	}
	if n := testing.AllocsPerRun(100, func() { g = Grow(g, 5) }); n != 0 {
		t.Errorf("Grow within capacity allocates %v times", n)
	}
}

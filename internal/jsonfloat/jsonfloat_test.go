package jsonfloat

import (
	"math"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	for _, bits := range []int{32, 64} {
		for _, v := range []float64{0, -1.5, 0.1, float64(float32(0.1)), 3.4028234663852886e38, 5e-324, math.Inf(1), math.Inf(-1), math.NaN()} {
			if bits == 32 {
				v = float64(float32(v))
			}
			got, err := Parse(Marshal(v, bits), bits)
			if err != nil {
				t.Fatalf("%d bits, %v: %v", bits, v, err)
			}
			if got != v && !(math.IsNaN(got) && math.IsNaN(v)) {
				t.Errorf("%d bits: %v came back as %v (json %s)", bits, v, got, Marshal(v, bits))
			}
		}
	}
}

func TestParseRejects(t *testing.T) {
	for _, in := range []string{`"x"`, `1e39`, `"Inf"`, `true`, ``, `"1"`} {
		bits := 64
		if in == `1e39` {
			bits = 32
		}
		if v, err := Parse([]byte(in), bits); err == nil {
			t.Errorf("Parse(%s, %d) = %v, want an error", in, bits, v)
		}
	}
}

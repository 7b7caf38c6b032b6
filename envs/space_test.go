package envs

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

func testSpaces() map[string]Space {
	inf := float32(math.Inf(1))
	dict, err := NewDict([]string{"image", "pos"}, []Space{NewBox(0, 1, 1, 3, 2), Discrete{N: 3, Start: -1}})
	if err != nil {
		panic(err)
	}
	return map[string]Space{
		"box":            NewBox(-1, 2, 3),
		"box image":      NewBox(0, 255, 3, 4, 5),
		"box unbounded":  NewBox(-inf, inf, 2),
		"box half":       Box{Dims: []int{2}, Low: []float32{0, -inf}, High: []float32{inf, 5}},
		"discrete":       Discrete{N: 4},
		"discrete start": Discrete{N: 3, Start: 2},
		"multidiscrete":  MultiDiscrete{Nvec: []int{2, 3, 4}},
		"multibinary":    MultiBinary{N: 5},
		"dict":           dict,
	}
}

func TestSpaceSamplesAreContained(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for name, s := range testSpaces() {
		t.Run(name, func(t *testing.T) {
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
			x := make([]float32, s.FlatSize())
			for range 1000 {
				s.Sample(rng, x)
				if !s.Contains(x) {
					t.Fatalf("sample %v not in %v", x, s)
				}
			}
		})
	}
}

func TestSpaceShapesAndSizes(t *testing.T) {
	tests := []struct {
		space Space
		shape []int
		flat  int
	}{
		{NewBox(0, 1, 3, 4, 5), []int{3, 4, 5}, 60},
		{Discrete{N: 7}, []int{}, 1},
		{MultiDiscrete{Nvec: []int{2, 3}}, []int{2}, 2},
		{MultiBinary{N: 4}, []int{4}, 4},
		{testSpaces()["dict"], []int{7}, 7},
	}
	for _, tt := range tests {
		if got := tt.space.Shape(); !reflect.DeepEqual(got, tt.shape) {
			t.Errorf("%v: shape %v, want %v", tt.space, got, tt.shape)
		}
		if got := tt.space.FlatSize(); got != tt.flat {
			t.Errorf("%v: flat size %d, want %d", tt.space, got, tt.flat)
		}
	}
}

func TestSpaceContains(t *testing.T) {
	nan := float32(math.NaN())
	tests := []struct {
		space Space
		x     []float32
		want  bool
	}{
		{NewBox(-1, 1, 2), []float32{-1, 1}, true},
		{NewBox(-1, 1, 2), []float32{0, 1.01}, false},
		{NewBox(-1, 1, 2), []float32{0, nan}, false},
		{NewBox(-1, 1, 2), []float32{0}, false},
		{Discrete{N: 3}, []float32{2}, true},
		{Discrete{N: 3}, []float32{3}, false},
		{Discrete{N: 3}, []float32{1.5}, false},
		{Discrete{N: 3}, []float32{-1}, false},
		{Discrete{N: 3, Start: -1}, []float32{-1}, true},
		{Discrete{N: 3, Start: -1}, []float32{2}, false},
		{MultiDiscrete{Nvec: []int{2, 3}}, []float32{1, 2}, true},
		{MultiDiscrete{Nvec: []int{2, 3}}, []float32{2, 0}, false},
		{MultiBinary{N: 2}, []float32{0, 1}, true},
		{MultiBinary{N: 2}, []float32{0, 0.5}, false},
		{testSpaces()["dict"], []float32{0, 0, 0, 0, 0, 0, 1}, true},
		{testSpaces()["dict"], []float32{0, 0, 0, 0, 0, 2, 1}, false},
		{testSpaces()["dict"], []float32{0, 0, 0, 0, 0, 0, 2}, false},
	}
	for _, tt := range tests {
		if got := tt.space.Contains(tt.x); got != tt.want {
			t.Errorf("%v.Contains(%v) = %v, want %v", tt.space, tt.x, got, tt.want)
		}
	}
}

func TestSpaceValidateRejects(t *testing.T) {
	tests := []struct {
		space Space
		want  string
	}{
		{Box{Dims: []int{2}, Low: []float32{0, 2}, High: []float32{1, 1}}, "index 1"},
		{Box{Dims: []int{2}, Low: []float32{0}, High: []float32{1}}, "needs 2 bounds"},
		{Box{}, "at least one dimension"},
		{Discrete{N: 0}, "n = 0"},
		{MultiDiscrete{Nvec: []int{2, 0}}, "nvec[1]"},
		{MultiDiscrete{}, "0 entries"},
		{Box{Dims: []int{2, -2}, Low: []float32{0, 0, 0, 0}, High: []float32{1, 1, 1, 1}}, "positive dimensions"},
		{Box{Dims: []int{7, 7905747460161236407}, Low: []float32{0}, High: []float32{1}}, "positive dimensions"},
		{MultiDiscrete{Nvec: []int{1 << 40}}, "nvec[0]"},
		{MultiBinary{N: -1}, "n = -1"},
		{Dict{Keys: []string{"a", "a"}, Spaces: []Space{Discrete{N: 1}, Discrete{N: 1}}}, `"a"`},
		{Dict{Keys: []string{"a"}, Spaces: []Space{Discrete{N: 0}}}, `key "a"`},
	}
	for _, tt := range tests {
		err := tt.space.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%#v: error %v, want one mentioning %q", tt.space, err, tt.want)
		}
	}
}

func TestSpaceJSONRoundTrip(t *testing.T) {
	for name, s := range testSpaces() {
		data, err := MarshalSpace(s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		back, err := UnmarshalSpace(data)
		if err != nil {
			t.Fatalf("%s: %v (json %s)", name, err, data)
		}
		if !reflect.DeepEqual(back, s) {
			t.Errorf("%s: round trip gave %#v, want %#v (json %s)", name, back, s, data)
		}
	}
}

func TestSpaceJSONRejectsBadInput(t *testing.T) {
	for _, in := range []string{
		`{"type":"torus"}`,
		`{"type":"discrete","n":0}`,
		`{"type":"box","shape":[2],"low":[0,"x"],"high":[1,1]}`,
		`{"type":"discrete","n":2,"colour":"red"}`,
		`{"type":"dict","keys":["a"],"spaces":[{"type":"discrete"}]}`,
		`not json`,
		`{"type":"discrete","n":2,"low":[0]}`,
		`{"type":"discrete","n":2} {"type":"discrete","n":3}`,
		`{"type":"box","shape":[1],"low":[1e39],"high":[1e40]}`,
	} {
		if s, err := UnmarshalSpace([]byte(in)); err == nil {
			t.Errorf("UnmarshalSpace(%s) = %v, want an error", in, s)
		}
	}
}

func TestSampleMaskedNeverPicksIllegal(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	d := Discrete{N: 5}
	mask := []bool{false, true, false, true, false}
	md := MultiDiscrete{Nvec: []int{3, 2}}
	mdMask := []bool{false, false, true, true, false}
	seen := map[float32]int{}
	x := make([]float32, 2)
	for range 2000 {
		d.SampleMasked(rng, mask, x[:1])
		if !MaskAllows(d, mask, x[:1]) {
			t.Fatalf("discrete sampled illegal %v", x[0])
		}
		seen[x[0]]++
		md.SampleMasked(rng, mdMask, x)
		if x[0] != 2 || x[1] != 0 || !MaskAllows(md, mdMask, x) {
			t.Fatalf("multi-discrete sampled %v under mask %v", x, mdMask)
		}
	}
	if len(seen) != 2 || seen[1] < 900 || seen[3] < 900 {
		t.Errorf("legal choices not drawn uniformly: %v", seen)
	}
	d.SampleMasked(rng, make([]bool, 5), x[:1])
	if x[0] != 0 {
		t.Errorf("all-masked sample = %v, want Start (0) as Gymnasium", x[0])
	}
}

func TestMaskAllows(t *testing.T) {
	d := Discrete{N: 2}
	md := MultiDiscrete{Nvec: []int{2, 2}}
	tests := []struct {
		space  Space
		mask   []bool
		action []float32
		want   bool
	}{
		{d, nil, []float32{1}, true},
		{d, []bool{false, true}, []float32{1}, true},
		{d, []bool{false, true}, []float32{0}, false},
		{d, []bool{false, true}, []float32{1.7}, false},
		{d, []bool{true, true, true}, []float32{1}, false},
		{d, nil, []float32{2}, false},
		{md, []bool{true, false, false, true}, []float32{0, 1}, true},
		{md, []bool{true, false, false, true}, []float32{0, 0}, false},
		{md, []bool{true, false, false, true}, []float32{0}, false},
	}
	for _, tt := range tests {
		if got := MaskAllows(tt.space, tt.mask, tt.action); got != tt.want {
			t.Errorf("MaskAllows(%v, %v, %v) = %v, want %v", tt.space, tt.mask, tt.action, got, tt.want)
		}
	}
}

func TestMaskSize(t *testing.T) {
	tests := []struct {
		space Space
		n     int
		ok    bool
	}{
		{Discrete{N: 4}, 4, true},
		{MultiDiscrete{Nvec: []int{2, 3}}, 5, true},
		{MultiBinary{N: 3}, 0, false},
		{NewBox(0, 1, 2), 0, false},
	}
	for _, tt := range tests {
		n, ok := MaskSize(tt.space)
		if n != tt.n || ok != tt.ok {
			t.Errorf("MaskSize(%v) = %d, %v; want %d, %v", tt.space, n, ok, tt.n, tt.ok)
		}
	}
}

// TestSameSpace: spaces are the same when type, shape and every bound bit
// agree; infinite bounds compare equal.
func TestSameSpace(t *testing.T) {
	inf := float32(math.Inf(1))
	box := func(hi float32) Space { return Box{Dims: []int{2}, Low: []float32{-1, -inf}, High: []float32{1, hi}} }
	for _, c := range []struct {
		x, y Space
		same bool
	}{
		{box(inf), box(inf), true},
		{box(inf), box(3), false},
		{box(1), box(math.Nextafter32(1, 2)), false},
		{Discrete{N: 3}, Discrete{N: 3}, true},
		{Discrete{N: 3}, Discrete{N: 3, Start: 1}, false},
		{Discrete{N: 2}, MultiBinary{N: 2}, false},
		{MultiDiscrete{Nvec: []int{2, 3}}, MultiDiscrete{Nvec: []int{2, 3}}, true},
	} {
		if got := SameSpace(c.x, c.y); got != c.same {
			t.Errorf("SameSpace(%v, %v) = %v, want %v", c.x, c.y, got, c.same)
		}
	}
}

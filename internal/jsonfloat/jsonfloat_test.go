package jsonfloat

import (
	"encoding/json"
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

// TestTypesRoundTrip: F64 and F32 in encoding/json keep every value,
// non-finite ones as strings, and Convert of nil is JSON's [].
func TestTypesRoundTrip(t *testing.T) {
	type rec struct {
		A []F64 `json:"a"`
		B []F32 `json:"b"`
		E []F64 `json:"e"`
	}
	in := rec{A: Convert[F64]([]float64{math.Inf(-1), 0.1, -0}), B: Convert[F32]([]float32{3.4028235e38, float32(math.Inf(1)), 1e-45}),
		E: Convert[F64]([]float64(nil))}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":["-inf",0.1,0],"b":[3.4028235e+38,"inf",1e-45],"e":[]}`; string(b) != want {
		t.Errorf("JSON %s, want %s", b, want)
	}
	var out rec
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	got64, got32 := Convert[float64](out.A), Convert[float32](out.B)
	if !math.IsInf(got64[0], -1) || got64[1] != 0.1 || got32[0] != math.MaxFloat32 || !math.IsInf(float64(got32[1]), 1) || got32[2] != 1e-45 {
		t.Errorf("read back %v %v", got64, got32)
	}
	if err := json.Unmarshal([]byte(`{"a":["infinity"]}`), &out); err == nil {
		t.Error(`"infinity" was read as a float`)
	}
}

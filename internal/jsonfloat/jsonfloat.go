// Package jsonfloat writes and reads floating-point numbers in JSON so that
// they survive exactly, infinities and NaN included: a finite value in the
// shortest form that parses back to the same float32 or float64, ±Inf and
// NaN as the strings "inf", "-inf" and "nan". Space bounds (F32), and
// normaliser statistics and checkpointed fitnesses (F64) use it.
package jsonfloat

import (
	"fmt"
	"math"
	"strconv"
)

// Marshal returns the JSON form of v rounded to bits (32 or 64) bits.
func Marshal(v float64, bits int) []byte {
	switch {
	case math.IsInf(v, 1):
		return []byte(`"inf"`)
	case math.IsInf(v, -1):
		return []byte(`"-inf"`)
	case math.IsNaN(v):
		return []byte(`"nan"`)
	}
	return strconv.AppendFloat(nil, v, 'g', -1, bits)
}

// Parse reads what Marshal writes: a JSON number within the range of a
// float of the given bits, or one of the three strings.
func Parse(b []byte, bits int) (float64, error) {
	switch string(b) {
	case `"inf"`:
		return math.Inf(1), nil
	case `"-inf"`:
		return math.Inf(-1), nil
	case `"nan"`:
		return math.NaN(), nil
	}
	v, err := strconv.ParseFloat(string(b), bits)
	if err != nil || len(b) == 0 || (b[0] != '-' && (b[0] < '0' || b[0] > '9')) {
		return 0, fmt.Errorf("%.40q is not a float%d number, \"inf\", \"-inf\" or \"nan\"", b, bits)
	}
	return v, nil
}

// F64 is a float64 that JSON holds exactly (Marshal and Parse at 64 bits):
// normaliser statistics, fitnesses (a diverged agent's is −Inf).
type F64 float64

// MarshalJSON implements json.Marshaler.
func (f F64) MarshalJSON() ([]byte, error) { return Marshal(float64(f), 64), nil }

// UnmarshalJSON implements json.Unmarshaler.
func (f *F64) UnmarshalJSON(b []byte) error {
	v, err := Parse(b, 64)
	*f = F64(v)
	return err
}

// F32 is a float32 that JSON holds exactly (Marshal and Parse at 32 bits):
// space bounds.
type F32 float32

// MarshalJSON implements json.Marshaler.
func (f F32) MarshalJSON() ([]byte, error) { return Marshal(float64(f), 32), nil }

// UnmarshalJSON implements json.Unmarshaler.
func (f *F32) UnmarshalJSON(b []byte) error {
	v, err := Parse(b, 32)
	*f = F32(v)
	return err
}

// Convert returns x converted element by element, between a float slice
// and its JSON form ([]float64 ↔ []F64, []float32 ↔ []F32).
func Convert[To, From ~float32 | ~float64](x []From) []To {
	out := make([]To, len(x)) // not nil for nil x: JSON "[]", as written before
	for i, v := range x {
		out[i] = To(v)
	}
	return out
}

// Package jsonfloat writes and reads floating-point numbers in JSON so that
// they survive exactly, infinities and NaN included: a finite value in the
// shortest form that parses back to the same float32 or float64, ±Inf and
// NaN as the strings "inf", "-inf" and "nan". Space bounds (float32) and
// normaliser statistics (float64) in agent files use it.
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

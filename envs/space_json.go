package envs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/evolverl/evolve/internal/jsonfloat"
)

// spaceJSON is the tagged JSON form of every space. Spaces are saved inside
// agent checkpoints, so this form is part of the file format: add fields,
// never rename them.
type spaceJSON struct {
	Type   string            `json:"type"`
	Shape  []int             `json:"shape,omitempty"`
	Low    []jsonfloat.F32   `json:"low,omitempty"`
	High   []jsonfloat.F32   `json:"high,omitempty"`
	N      int               `json:"n,omitempty"`
	Start  int               `json:"start,omitempty"`
	Nvec   []int             `json:"nvec,omitempty"`
	Keys   []string          `json:"keys,omitempty"`
	Spaces []json.RawMessage `json:"spaces,omitempty"`
}

// MarshalSpace returns the JSON form of s, e.g.
// {"type":"box","shape":[4],"low":[...],"high":[...]} or
// {"type":"discrete","n":2}.
func MarshalSpace(s Space) ([]byte, error) {
	var j spaceJSON
	switch s := s.(type) {
	case Box:
		j = spaceJSON{Type: "box", Shape: s.Dims, Low: jsonfloat.Convert[jsonfloat.F32](s.Low), High: jsonfloat.Convert[jsonfloat.F32](s.High)}
	case Discrete:
		j = spaceJSON{Type: "discrete", N: s.N, Start: s.Start}
	case MultiDiscrete:
		j = spaceJSON{Type: "multi_discrete", Nvec: s.Nvec}
	case MultiBinary:
		j = spaceJSON{Type: "multi_binary", N: s.N}
	case Dict:
		j = spaceJSON{Type: "dict", Keys: s.Keys}
		for i, sub := range s.Spaces {
			b, err := MarshalSpace(sub)
			if err != nil {
				return nil, fmt.Errorf("dict key %q: %w", s.Keys[i], err)
			}
			j.Spaces = append(j.Spaces, b)
		}
	default:
		return nil, fmt.Errorf("envs: cannot marshal space of type %T", s)
	}
	return json.Marshal(j)
}

// UnmarshalSpace parses the JSON form written by MarshalSpace and validates
// the result. Unknown fields are an error.
func UnmarshalSpace(data []byte) (Space, error) {
	var j spaceJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return nil, fmt.Errorf("space: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("space: data after the JSON object")
	}
	if err := j.onlyFields(); err != nil {
		return nil, err
	}
	var s Space
	switch j.Type {
	case "box":
		s = Box{Dims: j.Shape, Low: jsonfloat.Convert[float32](j.Low), High: jsonfloat.Convert[float32](j.High)}
	case "discrete":
		s = Discrete{N: j.N, Start: j.Start}
	case "multi_discrete":
		s = MultiDiscrete{Nvec: j.Nvec}
	case "multi_binary":
		s = MultiBinary{N: j.N}
	case "dict":
		d := Dict{Keys: j.Keys}
		for i, raw := range j.Spaces {
			sub, err := UnmarshalSpace(raw)
			if err != nil {
				return nil, fmt.Errorf("space: dict entry %d: %w", i, err)
			}
			d.Spaces = append(d.Spaces, sub)
		}
		s = d
	default:
		return nil, fmt.Errorf("space: unknown type %q (want box, discrete, multi_discrete, multi_binary or dict)", j.Type)
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("space: %w", err)
	}
	return s, nil
}

// onlyFields rejects fields that do not belong to the space's type, so that
// a hand-edited or corrupt file fails loudly instead of being half-read.
func (j *spaceJSON) onlyFields() error {
	set := map[string]bool{
		"shape": j.Shape != nil, "low": j.Low != nil, "high": j.High != nil,
		"n": j.N != 0, "start": j.Start != 0, "nvec": j.Nvec != nil,
		"keys": j.Keys != nil, "spaces": j.Spaces != nil,
	}
	allowed := map[string][]string{
		"box":            {"shape", "low", "high"},
		"discrete":       {"n", "start"},
		"multi_discrete": {"nvec"},
		"multi_binary":   {"n"},
		"dict":           {"keys", "spaces"},
	}[j.Type]
	for _, f := range []string{"shape", "low", "high", "n", "start", "nvec", "keys", "spaces"} {
		if set[f] && !slices.Contains(allowed, f) {
			return fmt.Errorf("space: field %q does not belong to a %q space", f, j.Type)
		}
	}
	return nil
}

// SameSpace reports whether x and y are the same space: the same type,
// shape and bounds bit for bit (by their JSON form). A space MarshalSpace
// refuses is the same as no other.
func SameSpace(x, y Space) bool {
	a, err1 := MarshalSpace(x)
	b, err2 := MarshalSpace(y)
	return err1 == nil && err2 == nil && bytes.Equal(a, b)
}

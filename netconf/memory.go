package netconf

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// EncoderMemory is the Encoder of the mutations that change a network's memory model
// (Spec.Memories); it is not an encoder a Spec can name.
const EncoderMemory EncoderKind = "memory"

// validateMemories checks Memories: recurrent kinds, no repeats, the encoder among them.
func (s Spec) validateMemories() error {
	if len(s.Memories) == 0 {
		return nil
	}
	for i, m := range s.Memories {
		if !isMemoryModel(m) {
			return fmt.Errorf("%q is not a memory model: want %q or %q", m, EncoderLSTM, EncoderGRU)
		}
		if slices.Contains(s.Memories[:i], m) {
			return fmt.Errorf("%q is listed twice", m)
		}
	}
	if !slices.Contains(s.Memories, s.Encoder) {
		return fmt.Errorf("%q does not list the encoder %q (the model the network starts as)", s.Memories, s.Encoder)
	}
	return nil
}

// WithMemory returns s with its recurrent encoder changed to the model kind (an LSTM or a
// GRU), with the same layers and hidden units and the same bounds; the other model's
// table is dropped. s must have a recurrent encoder; kind may be s's own (a copy).
func (s Spec) WithMemory(kind EncoderKind) (Spec, error) {
	m := s.Memory()
	switch {
	case m == nil:
		return Spec{}, fmt.Errorf("%s: no recurrent encoder to change", s)
	case !isMemoryModel(kind):
		return Spec{}, fmt.Errorf("%q is not a memory model: want %q or %q", kind, EncoderLSTM, EncoderGRU)
	}
	c := s.Clone()
	sizes := *m
	c.Encoder, c.LSTM, c.GRU = kind, nil, nil
	if kind == EncoderGRU {
		c.GRU = &sizes
	} else {
		c.LSTM = &sizes
	}
	return c, nil
}

// isMemoryModel reports whether kind is a model a memory gene may switch between: an LSTM
// or a GRU, which share their sizes.
func isMemoryModel(kind EncoderKind) bool { return kind == EncoderLSTM || kind == EncoderGRU }

// memorySwitch is the memory.switch mutation: the network's recurrent encoder becomes
// another model of Memories, drawn uniformly, with the same sizes. Its weights are new
// (Transfer initialises the new model's tensors and keeps the latent, head and output,
// which read the same hidden units).
func memorySwitch(s Spec, rng *rand.Rand) (Spec, string, bool) {
	const name = "memory.switch"
	if !s.Recurrent() || len(s.Memories) < 2 {
		return s.Clone(), name + ": no other memory model", false
	}
	others := slices.DeleteFunc(slices.Clone(s.Memories), func(k EncoderKind) bool { return k == s.Encoder })
	if len(others) == 0 {
		return s.Clone(), name + ": no other memory model", false
	}
	to := others[rng.IntN(len(others))]
	c, err := s.WithMemory(to)
	if err != nil {
		return s.Clone(), name + ": " + err.Error(), false
	}
	return checked(s, c, fmt.Sprintf("%s: %s -> %s", name, s.Encoder, to))
}

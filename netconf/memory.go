package netconf

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// EncoderMemory is the Encoder of the mutations that change a network's memory model
// (Spec.Memories); it is not an encoder a Spec can name.
const EncoderMemory EncoderKind = "memory"

// validateMemories checks Memories: memory models, no repeats, the encoder among them.
// The tables of the listed models are validateMemoryTables'.
func (s Spec) validateMemories() error {
	if len(s.Memories) == 0 {
		return nil
	}
	for i, m := range s.Memories {
		if !m.Recurrent() {
			return fmt.Errorf("%q is not a memory model: want %q, %q or %q", m, EncoderLSTM, EncoderGRU, EncoderTransformer)
		}
		if slices.Contains(s.Memories[:i], m) {
			return fmt.Errorf("%q is listed twice", m)
		}
	}
	if !slices.Contains(s.Memories, s.Encoder) {
		if !s.Encoder.Recurrent() {
			return fmt.Errorf("%s with encoder %q: a memory gene needs the encoder to be one of its models", listText(s.Memories), s.Encoder)
		}
		return fmt.Errorf("%s does not list the encoder %q: list it, or set the encoder to a listed model", listText(s.Memories), s.Encoder)
	}
	return nil
}

// listText writes models as TOML writes the list: ["lstm", "gru"].
func listText(models []EncoderKind) string {
	q := make([]string, len(models))
	for i, m := range models {
		q[i] = strconv.Quote(string(m))
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// validateMemoryTables checks the tables of the memory models the gene lists beside the
// encoder's: a listed Transformer's, and while the encoder is a Transformer the sizes a
// listed LSTM or GRU would take. Errors name the table ("transformer: context 0").
func (s Spec) validateMemoryTables() error {
	if s.Encoder != EncoderTransformer && slices.Contains(s.Memories, EncoderTransformer) {
		if s.Transformer == nil {
			return fmt.Errorf("memory: %s lists the transformer, but the [transformer] table is missing", listText(s.Memories))
		}
		if err := wrapField("transformer", s.Transformer.Validate()); err != nil {
			return err
		}
	}
	recurrent := slices.Contains(s.Memories, EncoderLSTM) || slices.Contains(s.Memories, EncoderGRU)
	if s.Encoder == EncoderTransformer && recurrent {
		// An LSTM and a GRU share one table of sizes, whichever of the two it is.
		name, t := string(EncoderLSTM), s.LSTM
		if t == nil {
			name, t = string(EncoderGRU), s.GRU
		}
		if t != nil {
			return wrapField(name, t.Validate())
		}
	}
	return nil
}

// WithMemory returns s with its memory model changed to kind: an LSTM or a GRU take the
// layers and hidden units of the one s has (they share their sizes: the other's table is
// dropped), or of the table s keeps while it is a Transformer; a Transformer takes s's
// Transformer table. The tables of the models not in use stay in the spec, so switching
// back restores their sizes. s must have an encoder with memory; kind may be s's own (a
// copy).
func (s Spec) WithMemory(kind EncoderKind) (Spec, error) {
	switch {
	case !s.Recurrent():
		return Spec{}, fmt.Errorf("%s: no memory model to change", s)
	case !kind.Recurrent():
		return Spec{}, fmt.Errorf("%q is not a memory model: want %q, %q or %q", kind, EncoderLSTM, EncoderGRU, EncoderTransformer)
	}
	c := s.Clone()
	if kind == EncoderTransformer {
		if c.Transformer == nil {
			return Spec{}, fmt.Errorf("%s: no [transformer] table for the transformer", s)
		}
		c.Encoder = kind
		return c, nil
	}
	m := s.Memory()
	if m == nil { // a Transformer: the recurrent sizes it keeps
		m = cmpOr(s.LSTM, s.GRU)
	}
	if m == nil {
		d := DefaultLSTM()
		m = &d
	}
	sizes := *m
	c.Encoder, c.LSTM, c.GRU = kind, nil, nil
	if kind == EncoderGRU {
		c.GRU = &sizes
	} else {
		c.LSTM = &sizes
	}
	return c, nil
}

// cmpOr returns a if it is not nil, else b.
func cmpOr(a, b *LSTM) *LSTM {
	if a != nil {
		return a
	}
	return b
}

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

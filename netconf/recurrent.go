package netconf

import "fmt"

// This file holds the sizes of the encoders with a recurrent state (LSTM and GRU, which
// share them) and what a Spec says about its memory: whether it carries a state between
// steps, of what size, and which sizes table is in use.

// LSTM is a stack of Layers LSTM layers of Hidden units each (PyTorch's equations and gate
// order i, f, g, o). A GRU is sized by the same fields.
type LSTM struct {
	Hidden int `toml:"hidden" json:"hidden"`
	Layers int `toml:"layers" json:"layers"`
	// MinHidden, MaxHidden, MinLayers and MaxLayers bound what architecture
	// mutations may make of Hidden and Layers.
	MinHidden int `toml:"min_hidden" json:"min_hidden"`
	MaxHidden int `toml:"max_hidden" json:"max_hidden"`
	MinLayers int `toml:"min_layers" json:"min_layers"`
	MaxLayers int `toml:"max_layers" json:"max_layers"`
}

// GRU is a stack of Layers GRU layers of Hidden units each (PyTorch's equations and gate
// order r, z, n): the sizes and bounds of an LSTM, so that a network can change its memory
// model and keep them.
type GRU = LSTM

// DefaultLSTM returns the default LSTM (and GRU) encoder: 64 hidden units, 1 layer, 1–3
// layers, 16–512 hidden units.
func DefaultLSTM() LSTM {
	return LSTM{Hidden: 64, Layers: 1, MinHidden: DefaultMinNodes, MaxHidden: DefaultMaxNodes,
		MinLayers: DefaultMinLSTMLayers, MaxLayers: DefaultMaxLSTMLayers}
}

func (l *LSTM) fillDefaults() {
	d := DefaultLSTM()
	setIfZero(&l.Hidden, d.Hidden)
	setIfZero(&l.Layers, d.Layers)
	setIfZero(&l.MinHidden, d.MinHidden)
	setIfZero(&l.MaxHidden, d.MaxHidden)
	setIfZero(&l.MinLayers, d.MinLayers)
	setIfZero(&l.MaxLayers, d.MaxLayers)
}

// Validate checks an LSTM's sizes against its own bounds.
func (l LSTM) Validate() error {
	if l.MinHidden < 1 || l.MaxHidden < l.MinHidden {
		return fmt.Errorf("min_hidden %d, max_hidden %d: want 1 <= min_hidden <= max_hidden", l.MinHidden, l.MaxHidden)
	}
	if l.MinLayers < 1 || l.MaxLayers < l.MinLayers {
		return fmt.Errorf("min_layers %d, max_layers %d: want 1 <= min_layers <= max_layers", l.MinLayers, l.MaxLayers)
	}
	if l.Hidden < l.MinHidden || l.Hidden > l.MaxHidden {
		return fmt.Errorf("hidden %d: want %d to %d", l.Hidden, l.MinHidden, l.MaxHidden)
	}
	if l.Layers < l.MinLayers || l.Layers > l.MaxLayers {
		return fmt.Errorf("layers %d: want %d to %d", l.Layers, l.MinLayers, l.MaxLayers)
	}
	return nil
}

// Recurrent reports whether s has an encoder with a state carried from step to step, an
// LSTM, a GRU or a Transformer (a Dict network never has one).
func (s Spec) Recurrent() bool {
	return s.Memory() != nil || s.Encoder == EncoderTransformer && s.Transformer != nil && !s.Dict()
}

// Memory returns the sizes of s's recurrent encoder: s.LSTM or s.GRU, whichever s.Encoder
// names, or nil when s has none (a Dict network never has one).
func (s Spec) Memory() *LSTM {
	switch {
	case s.Dict():
		return nil
	case s.Encoder == EncoderLSTM:
		return s.LSTM
	case s.Encoder == EncoderGRU:
		return s.GRU
	}
	return nil
}

// StateSize is the number of floats of recurrent state the network carries per sequence
// between steps: h and c of every LSTM layer (2·Layers·Hidden), h of every GRU layer
// (Layers·Hidden), a Transformer's window of the Context − 1 inputs before the step and
// how many of them belong to the episode ((Context − 1)·input + 1), or 0 when s is not
// Recurrent.
func (s Spec) StateSize() int {
	m := s.Memory()
	switch {
	case s.Recurrent() && s.Encoder == EncoderTransformer:
		return (s.Transformer.Context-1)*s.Input[0] + 1
	case m == nil:
		return 0
	case s.Encoder == EncoderGRU:
		return m.Layers * m.Hidden
	}
	return 2 * m.Layers * m.Hidden
}

// outSize is the width of the MLP's output for an input of width in: its last layer's,
// or in itself when it has no layer.

package netconf

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// EncoderTransformer names the causal Transformer encoder over a window of the last
// Context steps (see Transformer).
const EncoderTransformer EncoderKind = "transformer"

// Transformer is a causal Transformer encoder over the last Context inputs of the current
// episode: each input is embedded (a Linear to Width units plus a learned position), then
// Layers pre-LayerNorm encoder layers of Heads heads and an MLP of MLP units (PyTorch's
// TransformerEncoderLayer with norm_first, ReLU), a final LayerNorm, and the window's last
// position is the encoder's output. An episode's start cuts the window: no position
// attends across it.
type Transformer struct {
	Layers  int `toml:"layers" json:"layers"`
	Heads   int `toml:"heads" json:"heads"`
	Width   int `toml:"width" json:"width"`
	MLP     int `toml:"mlp" json:"mlp"`
	Context int `toml:"context" json:"context"`
	// MinLayers … MaxContext bound what architecture mutations may make of
	// Layers, Width and Context.
	MinLayers  int `toml:"min_layers" json:"min_layers"`
	MaxLayers  int `toml:"max_layers" json:"max_layers"`
	MinWidth   int `toml:"min_width" json:"min_width"`
	MaxWidth   int `toml:"max_width" json:"max_width"`
	MinContext int `toml:"min_context" json:"min_context"`
	MaxContext int `toml:"max_context" json:"max_context"`
}

// DefaultTransformer returns the default Transformer encoder: 1 layer (1–3), 4 heads,
// width 64 (16–256), MLP 128 (twice the width), a context of 16 steps (2–128).
func DefaultTransformer() Transformer {
	return Transformer{Layers: 1, Heads: 4, Width: 64, MLP: 128, Context: 16,
		MinLayers: 1, MaxLayers: 3, MinWidth: 16, MaxWidth: 256, MinContext: 2, MaxContext: 128}
}

func (t *Transformer) fillDefaults() {
	d := DefaultTransformer()
	for _, f := range []struct {
		v *int
		d int
	}{{&t.Layers, d.Layers}, {&t.Heads, d.Heads}, {&t.Width, d.Width}, {&t.MLP, d.MLP},
		{&t.Context, d.Context}, {&t.MinLayers, d.MinLayers}, {&t.MaxLayers, d.MaxLayers}, {&t.MinWidth, d.MinWidth},
		{&t.MaxWidth, d.MaxWidth}, {&t.MinContext, d.MinContext}, {&t.MaxContext, d.MaxContext}} {
		setIfZero(f.v, f.d)
	}
}

// Validate checks a Transformer's sizes against its bounds; heads must divide the width.
func (t Transformer) Validate() error {
	switch {
	case t.MinLayers < 1 || t.MaxLayers < t.MinLayers:
		return fmt.Errorf("min_layers %d, max_layers %d: want 1 <= min_layers <= max_layers", t.MinLayers, t.MaxLayers)
	case t.Layers < t.MinLayers || t.Layers > t.MaxLayers:
		return fmt.Errorf("layers %d: want %d to %d", t.Layers, t.MinLayers, t.MaxLayers)
	case t.MinWidth < 1 || t.MaxWidth < t.MinWidth:
		return fmt.Errorf("min_width %d, max_width %d: want 1 <= min_width <= max_width", t.MinWidth, t.MaxWidth)
	case t.Width < t.MinWidth || t.Width > t.MaxWidth:
		return fmt.Errorf("width %d: want %d to %d", t.Width, t.MinWidth, t.MaxWidth)
	case t.Heads < 1 || t.Width%t.Heads != 0:
		return fmt.Errorf("heads %d: want a divisor of width %d", t.Heads, t.Width)
	case t.MLP < 1 || t.MLP > 1<<16:
		return fmt.Errorf("mlp %d: want 1 to %d", t.MLP, 1<<16)
	case t.MinContext < 1 || t.MaxContext < t.MinContext:
		return fmt.Errorf("min_context %d, max_context %d: want 1 <= min_context <= max_context", t.MinContext, t.MaxContext)
	case t.Context < t.MinContext || t.Context > t.MaxContext:
		return fmt.Errorf("context %d: want %d to %d", t.Context, t.MinContext, t.MaxContext)
	}
	return nil
}

// transformerSlots yields the Transformer encoder's tensors: the embedding and the
// positions, then per layer l the attention's LayerNorm and projections
// (encoder.transformer.l.attn.{norm,q,k,v,out}.*) and the MLP's LayerNorm and two layers
// (l.mlp.{norm,0,1}.*), and the final LayerNorm (encoder.transformer.norm.*).
func transformerSlots(yield func(slot) bool, prefix string, in int, t Transformer) bool {
	D, F := t.Width, t.MLP
	zeroAfter := "" // the previous layer's attn.out.weight, for the branch ends of an appended layer
	linear := func(name string, rows, cols int) bool {
		w := slot{TensorSpec: TensorSpec{prefix + "." + name + ".weight", []int{rows, cols}, RoleWeight}, gain: 1, outAxis: 1}
		b := biasSlot(prefix+"."+name+".bias", cols)
		if strings.HasSuffix(name, ".attn.out") || strings.HasSuffix(name, ".mlp.1") {
			w.zeroAfter, b.zeroAfter = zeroAfter, zeroAfter
		}
		return yield(w) && yield(b)
	}
	norm := func(name string) bool {
		return yield(slot{TensorSpec: TensorSpec{prefix + "." + name + ".weight", []int{D}, RoleNormScale}}) &&
			yield(slot{TensorSpec: TensorSpec{prefix + "." + name + ".bias", []int{D}, RoleNormShift}})
	}
	pos := slot{TensorSpec: TensorSpec{prefix + ".pos", []int{t.Context, D}, RoleWeight}, gain: 1, outAxis: 1, newestLast: true}
	if !(linear("embed", in, D) && yield(pos)) {
		return false
	}
	for l := range t.Layers {
		p := strconv.Itoa(l) + "."
		ok := norm(p+"attn.norm") && linear(p+"attn.q", D, D) && linear(p+"attn.k", D, D) && linear(p+"attn.v", D, D) &&
			linear(p+"attn.out", D, D) && norm(p+"mlp.norm") && linear(p+"mlp.0", D, F) && linear(p+"mlp.1", F, D)
		if !ok {
			return false
		}
		zeroAfter = prefix + "." + p + "attn.out.weight"
	}
	return norm("norm")
}

// transformerOp changes a Transformer's sizes.
type transformerOp func(t *Transformer, rng *rand.Rand) (string, bool)

// encoderTransformer applies op to a Transformer encoder's sizes.
func encoderTransformer(op transformerOp, name string) func(Spec, *rand.Rand) (Spec, string, bool) {
	return func(s Spec, rng *rand.Rand) (Spec, string, bool) {
		if s.Encoder != EncoderTransformer || s.Transformer == nil || s.Dict() {
			return s.Clone(), name + ": no Transformer encoder", false
		}
		c := s.Clone()
		d, ok := op(c.Transformer, rng)
		if !ok {
			return s.Clone(), name + ": " + d, false
		}
		return checked(s, c, name+": "+d)
	}
}

func transformerAddLayer(t *Transformer, _ *rand.Rand) (string, bool) {
	return stepLayers(&t.Layers, +1, t.MinLayers, t.MaxLayers)
}

func transformerRemoveLayer(t *Transformer, _ *rand.Rand) (string, bool) {
	return stepLayers(&t.Layers, -1, t.MinLayers, t.MaxLayers)
}

// transformerResize changes one size in direction dir, drawn uniformly: the context, the
// MLP's width, the heads (to the next divisor of the width) or the width (by a multiple of
// the heads, so they still divide it).
func transformerResize(dir int) transformerOp {
	return func(t *Transformer, rng *rand.Rand) (string, bool) {
		switch rng.IntN(4) {
		case 0:
			return resizeScalar(&t.Context, dir, []int{1, 2, 4}, t.MinContext, t.MaxContext, "context", rng)
		case 1:
			return resizeScalar(&t.MLP, dir, mlpNodeSteps(), max(1, t.MinWidth), 4*t.MaxWidth, "mlp", rng)
		case 2:
			old := t.Heads
			for h := old + dir; h >= 1 && h <= t.Width; h += dir {
				if t.Width%h == 0 {
					t.Heads = h
					return fmt.Sprintf("heads %d -> %d", old, h), true
				}
			}
			return fmt.Sprintf("heads %d: no other divisor of width %d that way", old, t.Width), false
		}
		old := t.Width
		step := t.Heads * []int{1, 2, 4}[rng.IntN(3)]
		w := old + dir*step
		if w < t.MinWidth || w > t.MaxWidth {
			return fmt.Sprintf("width %d by %d leaves %d to %d", old, dir*step, t.MinWidth, t.MaxWidth), false
		}
		t.Width = w
		return fmt.Sprintf("width %d -> %d", old, w), true
	}
}

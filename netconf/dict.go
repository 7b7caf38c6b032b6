package netconf

import (
	"fmt"
	"strings"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// KeyInput is the encoder of one key of a Dict observation: an MLP for a flat key (Input
// [features]) or a CNN for an image key (Input [C, H, W]). Each key also has its own latent
// layer of the network's Latent.Size units.
type KeyInput struct {
	Key     string      `toml:"key" json:"key"`
	Encoder EncoderKind `toml:"encoder" json:"encoder"` // "mlp" or "cnn"
	MLP     *MLP        `toml:"mlp,omitempty" json:"mlp,omitempty"`
	CNN     *CNN        `toml:"cnn,omitempty" json:"cnn,omitempty"`
	Input   []int       `toml:"input,omitempty" json:"input,omitempty"`
}

// Dict reports whether s is a network for Dict observations: one encoder and latent layer
// per entry of s.Inputs, whose latents are concatenated (in the order of Inputs) and fed to
// the head. Such a network ignores s.Encoder, s.MLP, s.CNN and s.LSTM (they stay the
// configuration the per-key encoders were derived from), and its s.Input is [total], the
// sum of the keys' flat sizes: the flat Dict observation, keys in order.
func (s Spec) Dict() bool { return len(s.Inputs) > 0 }

// LatentWidth is the width of what the head reads: Latent.Size, or for a Dict network
// Latent.Size per key.
func (s Spec) LatentWidth() int {
	if s.Dict() {
		return s.Latent.Size * len(s.Inputs)
	}
	return s.Latent.Size
}

func (k KeyInput) clone() KeyInput {
	if k.MLP != nil {
		m := k.MLP.clone()
		k.MLP = &m
	}
	if k.CNN != nil {
		c := k.CNN.clone()
		k.CNN = &c
	}
	k.Input = append([]int(nil), k.Input...)
	return k
}

// validKey reports whether key can name tensors: letters, digits, '_' and '-' only, so a
// tensor name such as "encoder.<key>.mlp.0.weight" reads unambiguously.
func validKey(key string) error {
	if key == "" {
		return fmt.Errorf("key %q: empty", key)
	}
	for _, r := range key {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return fmt.Errorf("key %q: tensors are named after keys, want letters, digits, '_' or '-' only", key)
		}
	}
	return nil
}

// validateArchitecture checks the key's name and its encoder against its bounds.
func (k KeyInput) validateArchitecture() error {
	if err := validKey(k.Key); err != nil {
		return err
	}
	var err error
	switch k.Encoder {
	case EncoderMLP:
		if k.MLP == nil {
			return fmt.Errorf("key %q: encoder \"mlp\" without its mlp table", k.Key)
		}
		err = wrapField("mlp", k.MLP.Validate())
	case EncoderCNN:
		if k.CNN == nil {
			return fmt.Errorf("key %q: encoder \"cnn\" without its cnn table", k.Key)
		}
		err = wrapField("cnn", k.CNN.Validate())
	default:
		return fmt.Errorf("key %q: encoder %q: a dict key takes %q or %q", k.Key, k.Encoder, EncoderMLP, EncoderCNN)
	}
	if err != nil {
		return fmt.Errorf("key %q: %w", k.Key, err)
	}
	return nil
}

// validate checks the architecture and that the input fits the encoder.
func (k KeyInput) validate() error {
	if err := k.validateArchitecture(); err != nil {
		return err
	}
	if k.Encoder == EncoderCNN {
		if _, err := k.CNN.OutputShape(k.Input); err != nil {
			return fmt.Errorf("key %q: %w", k.Key, err)
		}
		return nil
	}
	if len(k.Input) != 1 || k.Input[0] < 1 {
		return fmt.Errorf("key %q: input %v: an mlp encoder wants [features] with features >= 1", k.Key, k.Input)
	}
	return nil
}

// validateInputsArchitecture checks every key's architecture and that keys are unique.
func (s Spec) validateInputsArchitecture() error {
	seen := make(map[string]bool, len(s.Inputs))
	for i, k := range s.Inputs {
		if seen[k.Key] {
			return fmt.Errorf("inputs[%d]: key %q repeated", i, k.Key)
		}
		seen[k.Key] = true
		if err := k.validateArchitecture(); err != nil {
			return fmt.Errorf("inputs[%d]: %w", i, err)
		}
	}
	return nil
}

// validateInputs checks every key and that s.Input is the flat size of all keys.
func (s Spec) validateInputs() error {
	total := 0
	for i, k := range s.Inputs {
		if err := k.validate(); err != nil {
			return fmt.Errorf("inputs[%d]: %w", i, err)
		}
		total += shapeSize(k.Input)
	}
	if len(s.Input) != 1 || s.Input[0] != total {
		return fmt.Errorf("input %v: a dict network wants [%d], the keys' flat sizes summed", s.Input, total)
	}
	return nil
}

// outSize is the width of the key's encoder output (its latent layer's input).
func (k KeyInput) outSize() int {
	if k.Encoder == EncoderCNN {
		o, _ := k.CNN.OutputShape(k.Input)
		return o[0] * o[1] * o[2]
	}
	return k.MLP.outSize(k.Input[0])
}

// prefix returns the tensor-name prefix of the key's encoder, e.g. "encoder.pos.mlp".
func (k KeyInput) prefix() string { return "encoder." + k.Key + "." + string(k.Encoder) }

// latentName returns the tensor-name prefix of the key's latent layer, "latent.<key>".
func (k KeyInput) latentName() string { return "latent." + k.Key }

// string describes the key's encoder, e.g. "pos: mlp[64 64] relu".
func (k KeyInput) string() string {
	switch {
	case k.Encoder == EncoderMLP && k.MLP != nil:
		ln := ""
		if k.MLP.LayerNorm {
			ln = " ln"
		}
		return fmt.Sprintf("%s: mlp%v %s%s", k.Key, k.MLP.Hidden, k.MLP.Activation, ln)
	case k.Encoder == EncoderCNN && k.CNN != nil:
		return fmt.Sprintf("%s: cnn%v k%v s%v %s", k.Key, k.CNN.Channels, k.CNN.Kernels, k.CNN.Strides, k.CNN.Activation)
	}
	return fmt.Sprintf("%s: %q", k.Key, k.Encoder)
}

func (s Spec) inputsString() string {
	parts := make([]string, len(s.Inputs))
	for i, k := range s.Inputs {
		parts[i] = k.string()
	}
	return "dict{" + strings.Join(parts, ", ") + "}"
}

// dictSlots appends the tensors of every key's encoder and latent layer.
func dictSlots(l []slot, s Spec) []slot {
	for _, k := range s.Inputs {
		if k.Encoder == EncoderCNN {
			l = cnnSlots(l, k.prefix(), k.Input[0], *k.CNN)
			o, _ := k.CNN.OutputShape(k.Input)
			l = append(l, slot{name: k.latentName() + ".weight", shape: []int{o[0], o[1], o[2], s.Latent.Size},
				role: roleWeight, gain: sqrt2, outAxis: 3})
		} else {
			l = mlpSlots(l, k.prefix(), k.Input[0], *k.MLP, "")
			l = append(l, slot{name: k.latentName() + ".weight", shape: []int{k.outSize(), s.Latent.Size},
				role: roleWeight, gain: sqrt2, outAxis: 1})
		}
		l = append(l, slot{name: k.latentName() + ".bias", shape: []int{s.Latent.Size}, role: roleBias})
	}
	return l
}

// latentSegments names, for the layer that reads a Dict network's concatenated latents,
// the latent bias of each key in order: its length is the key's block of input rows.
func (s Spec) latentSegments() []string {
	segs := make([]string, len(s.Inputs))
	for i, k := range s.Inputs {
		segs[i] = k.latentName() + ".bias"
	}
	return segs
}

// copySegments copies an old weight that read concatenated latents block by block, so each
// key's rows stay with their key when latent sizes change. It reports false (and copies
// nothing) when old's rows are not the old latents' sizes summed.
func copySegments(d []float32, sl slot, o *Tensor, old Params) bool {
	oldSizes := make([]int, len(sl.segs))
	total := 0
	for i, name := range sl.segs {
		if t := old.Tensor(name); t != nil && len(t.Shape) == 1 {
			oldSizes[i] = t.Shape[0]
		}
		total += oldSizes[i]
	}
	if len(o.Shape) != 2 || o.Shape[0] != total {
		return false
	}
	newSize := sl.shape[0] / len(sl.segs)
	cols := min(o.Shape[1], sl.shape[1])
	oOff := 0
	for i, n := range oldSizes {
		ext := []int{min(n, newSize), cols}
		copyBlock(d, sl.shape, []int{i * newSize, 0}, o.Data, o.Shape, []int{oOff, 0}, ext)
		oOff += n
	}
	return true
}

// dictEncoders adds every key's encoder and latent layer (with the head's activation) on the
// columns of the flat input x [rows, total] that hold the key, and returns the latents
// concatenated, [rows, LatentWidth].
func (b *builder) dictEncoders(s Spec, x *G.Node) (*G.Node, error) {
	if err := wantShape(x, -1, s.Input[0]); err != nil {
		return nil, err
	}
	r := x.Shape()[0]
	lats := make([]*G.Node, 0, len(s.Inputs))
	off := 0
	for _, k := range s.Inputs {
		n := shapeSize(k.Input)
		part, err := columns(x, off, off+n)
		if err != nil {
			return nil, fmt.Errorf("key %q: columns %d to %d of the input: %w", k.Key, off, off+n, err)
		}
		off += n
		var enc *G.Node
		if k.Encoder == EncoderCNN {
			img, err := G.Reshape(part, tensor.Shape{r, k.Input[0], k.Input[1], k.Input[2]})
			if err != nil {
				return nil, fmt.Errorf("key %q: %w", k.Key, err)
			}
			if enc, err = b.cnn(img, k.prefix(), *k.CNN); err == nil {
				enc, err = flatten(enc)
			}
			if err != nil {
				return nil, fmt.Errorf("key %q: %w", k.Key, err)
			}
		} else if enc, err = b.mlp(part, k.prefix(), *k.MLP); err != nil {
			return nil, fmt.Errorf("key %q: %w", k.Key, err)
		}
		lat, err := b.dense(enc, k.latentName())
		if err == nil {
			lat, err = b.act(lat, s.Head.Activation)
		}
		if err != nil {
			return nil, fmt.Errorf("key %q latent: %w", k.Key, err)
		}
		lats = append(lats, lat)
	}
	if len(lats) == 1 {
		return lats[0], nil
	}
	return G.Concat(1, lats...)
}

// columns returns columns [from, to) of the matrix x as a matrix [rows, to-from].
func columns(x *G.Node, from, to int) (*G.Node, error) {
	if from == 0 && to == x.Shape()[1] {
		return x, nil
	}
	c, err := G.Slice(x, nil, G.S(from, to))
	if err != nil {
		return nil, err
	}
	if to-from == 1 || c.Shape().Dims() != 2 {
		return G.Reshape(c, tensor.Shape{x.Shape()[0], to - from})
	}
	return c, nil
}

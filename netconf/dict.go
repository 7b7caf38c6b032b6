package netconf

import (
	"fmt"
	"strings"
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
// the head. Such a network ignores s.Encoder, s.MLP, s.CNN, s.LSTM and s.GRU (they stay the
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

// FeatureWidth is the width of the features the output layer reads: the
// head's last hidden layer, or the latent when the head has none. gSDE's
// exploration noise is a linear map of them.
func (s Spec) FeatureWidth() int {
	if h := s.Head.Hidden; len(h) > 0 {
		return h[len(h)-1]
	}
	return s.LatentWidth()
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

// EncoderOutSize is the width of the key's encoder output, its latent layer's input: the
// last MLP layer's width (the input's when it has none) or C·H·W of the CNN's last feature
// map. k must be valid.
func (k KeyInput) EncoderOutSize() int {
	if k.Encoder == EncoderCNN {
		o, _ := k.CNN.OutputShape(k.Input)
		return o[0] * o[1] * o[2]
	}
	return k.MLP.outSize(k.Input[0])
}

// EncoderPrefix returns the tensor-name prefix of the key's encoder, "encoder.<key>.<kind>"
// (e.g. "encoder.pos.mlp"): its layers are EncoderPrefix().{i}.weight and so on.
func (k KeyInput) EncoderPrefix() string { return "encoder." + k.Key + "." + string(k.Encoder) }

// LatentPrefix returns the tensor-name prefix of the key's latent layer, "latent.<key>":
// its tensors are LatentPrefix().weight and LatentPrefix().bias.
func (k KeyInput) LatentPrefix() string { return "latent." + k.Key }

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

// dictSlots yields the tensors of every key's encoder and latent layer and reports whether
// yield wants more.
func dictSlots(yield func(slot) bool, s Spec) bool {
	for _, k := range s.Inputs {
		lw := slot{TensorSpec: TensorSpec{k.LatentPrefix() + ".weight", nil, RoleWeight}, gain: sqrt2, outAxis: 1}
		var ok bool
		if k.Encoder == EncoderCNN {
			ok = cnnSlots(yield, k.EncoderPrefix(), k.Input[0], *k.CNN)
			o, _ := k.CNN.OutputShape(k.Input)
			lw.Shape, lw.outAxis = []int{o[0], o[1], o[2], s.Latent.Size}, 3
		} else {
			ok = mlpSlots(yield, k.EncoderPrefix(), k.Input[0], *k.MLP, "")
			lw.Shape = []int{k.EncoderOutSize(), s.Latent.Size}
		}
		if !ok || !yield(lw) || !yield(biasSlot(k.LatentPrefix()+".bias", s.Latent.Size)) {
			return false
		}
	}
	return true
}

// latentSegments names, for the layer that reads a Dict network's concatenated latents,
// the latent bias of each key in order: its length is the key's block of input rows.
func (s Spec) latentSegments() []string {
	segs := make([]string, len(s.Inputs))
	for i, k := range s.Inputs {
		segs[i] = k.LatentPrefix() + ".bias"
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
	newSize := sl.Shape[0] / len(sl.segs)
	cols := min(o.Shape[1], sl.Shape[1])
	oOff := 0
	for i, n := range oldSizes {
		ext := []int{min(n, newSize), cols}
		copyBlock(d, sl.Shape, []int{i * newSize, 0}, o.Data, o.Shape, []int{oOff, 0}, ext)
		oOff += n
	}
	return true
}

// DictTable names the table a spec holds beside its encoder's for a Dict observation's
// keys — "cnn" for an MLP encoder's spec, "mlp" for a CNN's — or "". A Dict network encodes
// its 1-D keys with the MLP table and its image keys with the CNN table, so it may hold
// both; any other network must not.
func (s Spec) DictTable() string {
	switch {
	case s.Encoder == EncoderMLP && s.CNN != nil:
		return string(EncoderCNN)
	case s.Encoder == EncoderCNN && s.MLP != nil:
		return string(EncoderMLP)
	}
	return ""
}

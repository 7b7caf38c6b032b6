package netconf

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// EncoderKind names the encoder of a network: "mlp", "cnn", "lstm", "gru" or "transformer".
type EncoderKind string

// The encoder kinds a Spec can name.
const (
	EncoderMLP  EncoderKind = "mlp"
	EncoderCNN  EncoderKind = "cnn"
	EncoderLSTM EncoderKind = "lstm"
	EncoderGRU  EncoderKind = "gru"
)

// Recurrent reports whether k is an encoder with memory, whose state is carried from step
// to step: an LSTM, a GRU or a Transformer (its window of past inputs).
func (k EncoderKind) Recurrent() bool {
	return k == EncoderLSTM || k == EncoderGRU || k == EncoderTransformer
}

// Activation names a pointwise nonlinearity, spelled as in PyTorch's torch.nn.
type Activation string

// The activations change_activation draws from.
const (
	ReLU      Activation = "ReLU"
	Tanh      Activation = "Tanh"
	ELU       Activation = "ELU"       // α = 1
	GELU      Activation = "GELU"      // tanh approximation (PyTorch's approximate="tanh")
	LeakyReLU Activation = "LeakyReLU" // negative slope LeakyReLUSlope
	Softsign  Activation = "Softsign"  // x / (1 + |x|)
	Sigmoid   Activation = "Sigmoid"
)

// LeakyReLUSlope is LeakyReLU's negative slope, PyTorch's default.
const LeakyReLUSlope = 0.01

// LayerNormEps is the epsilon of every LayerNorm, PyTorch's default: a normalised row is
// (x − mean) / √(var + LayerNormEps), with the biased variance.
const LayerNormEps = 1e-5

// Activations returns every supported activation in a fixed order.
func Activations() []Activation {
	return []Activation{ReLU, Tanh, ELU, GELU, LeakyReLU, Softsign, Sigmoid}
}

// Validate reports whether a is one of Activations.
func (a Activation) Validate() error {
	if slices.Contains(Activations(), a) {
		return nil
	}
	return fmt.Errorf("activation %q: want one of %v", a, Activations())
}

// Gains of the output layer's orthogonal init (CleanRL and AgileRL use the same values): a
// small policy output starts close to uniform / zero-mean actions, a value output at scale 1.
const (
	PolicyGain = 0.01
	ValueGain  = 1.0
)

// Defaults in the spirit of AgileRL.
const (
	DefaultMinMLPLayers  = 1
	DefaultMaxMLPLayers  = 3
	DefaultMinNodes      = 16
	DefaultMaxNodes      = 512
	DefaultMinCNNLayers  = 1
	DefaultMaxCNNLayers  = 6
	DefaultMinChannels   = 8
	DefaultMaxChannels   = 256
	DefaultMinLSTMLayers = 1
	DefaultMaxLSTMLayers = 3
	DefaultLatentSize    = 32
	DefaultMinLatent     = 8
	DefaultMaxLatent     = 128
)

// MLP is a stack of fully connected layers: Linear → [LayerNorm] → activation per entry of
// Hidden. It describes both an MLP encoder and a network's head.
type MLP struct {
	Hidden     []int      `toml:"hidden" json:"hidden"`         // units per layer, input side first
	Activation Activation `toml:"activation" json:"activation"` // after every layer
	LayerNorm  bool       `toml:"layer_norm" json:"layer_norm"` // LayerNorm (LayerNormEps) before the activation
	MinLayers  int        `toml:"min_layers" json:"min_layers"` // bounds for add/remove_layer
	MaxLayers  int        `toml:"max_layers" json:"max_layers"` //
	MinNodes   int        `toml:"min_nodes" json:"min_nodes"`   // bounds for every entry of Hidden
	MaxNodes   int        `toml:"max_nodes" json:"max_nodes"`   //
}

// CNN is a stack of unpadded 2-D convolutions over NCHW images, each followed by the
// activation; the last feature map is flattened in (C, H, W) order.
type CNN struct {
	Channels   []int      `toml:"channels" json:"channels"` // output channels per layer
	Kernels    []int      `toml:"kernels" json:"kernels"`   // square kernel size per layer
	Strides    []int      `toml:"strides" json:"strides"`   // stride per layer (both axes)
	Activation Activation `toml:"activation" json:"activation"`
	// MinLayers, MaxLayers, MinChannels and MaxChannels bound what
	// architecture mutations may make of the stack (0: the defaults).
	MinLayers   int `toml:"min_layers" json:"min_layers"`
	MaxLayers   int `toml:"max_layers" json:"max_layers"`
	MinChannels int `toml:"min_channels" json:"min_channels"`
	MaxChannels int `toml:"max_channels" json:"max_channels"`
}

// Latent is the fully connected layer between encoder and head; it uses the head's
// activation.
type Latent struct {
	Size int `toml:"size" json:"size"`
	// Min and Max bound what architecture mutations may make of Size.
	Min int `toml:"min" json:"min"`
	Max int `toml:"max" json:"max"`
}

// Spec describes one network: encoder → latent → head → output layer.
//
// Encoder names which of MLP, CNN, LSTM, GRU and Transformer is used; the others are ignored
// (and may be nil). Input and Output come from the environment's spaces and are set by the
// agent, not by users: Input is [features] for MLP, LSTM, GRU and Transformer encoders,
// [C, H, W] for a CNN, and [total] for a Dict network (Inputs). OutputGain
// is the gain of the output layer's orthogonal init (PolicyGain or ValueGain).
type Spec struct {
	Encoder EncoderKind `toml:"encoder" json:"encoder"`
	MLP     *MLP        `toml:"mlp,omitempty" json:"mlp,omitempty"`
	CNN     *CNN        `toml:"cnn,omitempty" json:"cnn,omitempty"`
	LSTM    *LSTM       `toml:"lstm,omitempty" json:"lstm,omitempty"`
	GRU     *GRU        `toml:"gru,omitempty" json:"gru,omitempty"`
	// Transformer sizes a "transformer" encoder.
	Transformer *Transformer `toml:"transformer,omitempty" json:"transformer,omitempty"`
	// Memories, when it lists more than one model, makes the recurrent encoder's model a
	// gene: the memory.switch mutation changes Encoder to another model of the list,
	// keeping the sizes (see WithMemory). Every entry is a recurrent kind, Encoder among
	// them.
	Memories   []EncoderKind `toml:"memory,omitempty" json:"memory,omitempty"`
	Latent     Latent        `toml:"latent" json:"latent"`
	Head       MLP           `toml:"head" json:"head"`
	Input      []int         `toml:"input,omitempty" json:"input,omitempty"`
	Output     int           `toml:"output,omitempty" json:"output,omitempty"`
	OutputGain float64       `toml:"output_gain,omitempty" json:"output_gain,omitempty"`
	// Inputs, when not empty, makes this a network for Dict observations: one encoder per
	// key, in the Dict's key order (see Dict). The agent derives it from the observation
	// space; architecture mutations then change it.
	Inputs []KeyInput `toml:"inputs,omitempty" json:"inputs,omitempty"`
}

// DefaultMLP returns the default MLP encoder: [64, 64], ReLU, no layer norm, 1–3 layers,
// 16–512 nodes.
func DefaultMLP() MLP {
	return MLP{Hidden: []int{64, 64}, Activation: ReLU,
		MinLayers: DefaultMinMLPLayers, MaxLayers: DefaultMaxMLPLayers,
		MinNodes: DefaultMinNodes, MaxNodes: DefaultMaxNodes}
}

// DefaultHead returns the default head: [64] with the MLP bounds.
func DefaultHead() MLP {
	m := DefaultMLP()
	m.Hidden = []int{64}
	return m
}

// DefaultCNN returns the default CNN encoder: channels [32, 32], kernels [3, 3], strides
// [2, 2], ReLU, 1–6 layers, 8–256 channels.
func DefaultCNN() CNN {
	return CNN{Channels: []int{32, 32}, Kernels: []int{3, 3}, Strides: []int{2, 2},
		Activation: ReLU, MinLayers: DefaultMinCNNLayers, MaxLayers: DefaultMaxCNNLayers,
		MinChannels: DefaultMinChannels, MaxChannels: DefaultMaxChannels}
}

// DefaultLatent returns the default latent layer: 32 units, 8–128.
func DefaultLatent() Latent {
	return Latent{Size: DefaultLatentSize, Min: DefaultMinLatent, Max: DefaultMaxLatent}
}

// DefaultSpec returns the default network with the given encoder; the caller still sets
// Input, Output and OutputGain.
func DefaultSpec(kind EncoderKind) Spec {
	s := Spec{Encoder: kind, Latent: DefaultLatent(), Head: DefaultHead()}
	s.FillDefaults()
	return s
}

// FillDefaults replaces every zero-valued field of s (and of the sub-spec its encoder names)
// by its default: a nil slice, an empty string, a zero number. It cannot tell a zero that was
// meant from one that was left out, so an MLP's min_layers = 0 (an MLP without hidden layers,
// valid) becomes the default 1; an empty but non-nil Hidden is kept. A reader of config files
// that knows which keys were written should fill only the absent ones (evo.ParseConfig does,
// from the TOML metadata).
func (s *Spec) FillDefaults() {
	if s.Encoder == "" {
		s.Encoder = EncoderMLP
	}
	switch s.Encoder {
	case EncoderMLP:
		if s.MLP == nil {
			s.MLP = &MLP{}
		}
		s.MLP.fillDefaults(DefaultMLP())
	case EncoderCNN:
		if s.CNN == nil {
			s.CNN = &CNN{}
		}
		s.CNN.fillDefaults()
	case EncoderLSTM:
		if s.LSTM == nil {
			s.LSTM = &LSTM{}
		}
		s.LSTM.fillDefaults()
	case EncoderGRU:
		if s.GRU == nil {
			s.GRU = &GRU{}
		}
		s.GRU.fillDefaults()
	case EncoderTransformer:
		if s.Transformer == nil {
			s.Transformer = &Transformer{}
		}
		s.Transformer.fillDefaults()
	}
	d := DefaultLatent()
	setIfZero(&s.Latent.Size, d.Size)
	setIfZero(&s.Latent.Min, d.Min)
	setIfZero(&s.Latent.Max, d.Max)
	s.Head.fillDefaults(DefaultHead())
}

func setIfZero(v *int, d int) {
	if *v == 0 {
		*v = d
	}
}

func (m *MLP) fillDefaults(d MLP) {
	if m.Hidden == nil {
		m.Hidden = d.Hidden
	}
	if m.Activation == "" {
		m.Activation = d.Activation
	}
	setIfZero(&m.MinLayers, d.MinLayers)
	setIfZero(&m.MaxLayers, d.MaxLayers)
	setIfZero(&m.MinNodes, d.MinNodes)
	setIfZero(&m.MaxNodes, d.MaxNodes)
}

func (c *CNN) fillDefaults() {
	d := DefaultCNN()
	if c.Channels == nil {
		c.Channels = d.Channels
	}
	if c.Kernels == nil {
		c.Kernels = d.Kernels
	}
	if c.Strides == nil {
		c.Strides = d.Strides
	}
	if c.Activation == "" {
		c.Activation = d.Activation
	}
	setIfZero(&c.MinLayers, d.MinLayers)
	setIfZero(&c.MaxLayers, d.MaxLayers)
	setIfZero(&c.MinChannels, d.MinChannels)
	setIfZero(&c.MaxChannels, d.MaxChannels)
}

// Clone returns a deep copy of s: no slice or pointer is shared with s.
func (s Spec) Clone() Spec {
	c := s
	if s.MLP != nil {
		m := s.MLP.clone()
		c.MLP = &m
	}
	if s.CNN != nil {
		n := s.CNN.clone()
		c.CNN = &n
	}
	if s.LSTM != nil {
		l := *s.LSTM
		c.LSTM = &l
	}
	if s.GRU != nil {
		g := *s.GRU
		c.GRU = &g
	}
	c.Memories = slices.Clone(s.Memories)
	if s.Transformer != nil {
		t := *s.Transformer
		c.Transformer = &t
	}
	c.Head = s.Head.clone()
	c.Input = slices.Clone(s.Input)
	if s.Inputs != nil {
		c.Inputs = make([]KeyInput, len(s.Inputs))
		for i, k := range s.Inputs {
			c.Inputs[i] = k.clone()
		}
	}
	return c
}

func (m MLP) clone() MLP {
	m.Hidden = slices.Clone(m.Hidden)
	return m
}

func (c CNN) clone() CNN {
	c.Channels = slices.Clone(c.Channels)
	c.Kernels = slices.Clone(c.Kernels)
	c.Strides = slices.Clone(c.Strides)
	return c
}

// Validate checks an MLP's sizes against its own bounds.
func (m MLP) Validate() error {
	if err := m.Activation.Validate(); err != nil {
		return err
	}
	// An MLP may have no hidden layer (min_layers 0): a head without one
	// is the latent followed directly by the output layer.
	if m.MinLayers < 0 || m.MaxLayers < max(m.MinLayers, 1) {
		return fmt.Errorf("min_layers %d, max_layers %d: want 0 <= min_layers <= max_layers, max_layers >= 1", m.MinLayers, m.MaxLayers)
	}
	if m.MinNodes < 1 || m.MaxNodes < m.MinNodes {
		return fmt.Errorf("min_nodes %d, max_nodes %d: want 1 <= min_nodes <= max_nodes", m.MinNodes, m.MaxNodes)
	}
	if n := len(m.Hidden); n < m.MinLayers || n > m.MaxLayers {
		if n == 0 {
			return fmt.Errorf("hidden %v has no layers: want %d to %d (min_layers = 0 allows none)", m.Hidden, m.MinLayers, m.MaxLayers)
		}
		return fmt.Errorf("hidden %v has %d layers: want %d to %d", m.Hidden, n, m.MinLayers, m.MaxLayers)
	}
	for i, h := range m.Hidden {
		if h < m.MinNodes || h > m.MaxNodes {
			return fmt.Errorf("hidden[%d] = %d: want %d to %d nodes", i, h, m.MinNodes, m.MaxNodes)
		}
	}
	return nil
}

// Validate checks a CNN's layers against its own bounds. Whether its output is at least
// 1×1 depends on the input and is checked by OutputShape and Spec.Validate.
func (c CNN) Validate() error {
	if err := c.Activation.Validate(); err != nil {
		return err
	}
	if c.MinLayers < 1 || c.MaxLayers < c.MinLayers {
		return fmt.Errorf("min_layers %d, max_layers %d: want 1 <= min_layers <= max_layers", c.MinLayers, c.MaxLayers)
	}
	if c.MinChannels < 1 || c.MaxChannels < c.MinChannels {
		return fmt.Errorf("min_channels %d, max_channels %d: want 1 <= min_channels <= max_channels", c.MinChannels, c.MaxChannels)
	}
	n := len(c.Channels)
	if len(c.Kernels) != n || len(c.Strides) != n {
		return fmt.Errorf("channels %v, kernels %v, strides %v: want one entry per layer in each", c.Channels, c.Kernels, c.Strides)
	}
	if n < c.MinLayers || n > c.MaxLayers {
		return fmt.Errorf("channels %v has %d layers: want %d to %d", c.Channels, n, c.MinLayers, c.MaxLayers)
	}
	for i := range n {
		if ch := c.Channels[i]; ch < c.MinChannels || ch > c.MaxChannels {
			return fmt.Errorf("channels[%d] = %d: want %d to %d", i, ch, c.MinChannels, c.MaxChannels)
		}
		if k := c.Kernels[i]; k < 1 {
			return fmt.Errorf("kernels[%d] = %d: want at least 1", i, k)
		}
		if s := c.Strides[i]; s < 1 {
			return fmt.Errorf("strides[%d] = %d: want at least 1", i, s)
		}
	}
	return nil
}

// OutputShape returns the (C, H, W) feature map the CNN makes of an input [c, h, w], or an
// error naming the first layer whose output would be smaller than 1×1. Each layer maps a
// side n to (n - kernel) / stride + 1 (no padding, rounding down).
func (c CNN) OutputShape(in []int) ([3]int, error) {
	if len(in) != 3 || in[0] < 1 || in[1] < 1 || in[2] < 1 {
		return [3]int{}, fmt.Errorf("cnn input %v: want [channels, height, width], all positive", in)
	}
	ch, h, w := in[0], in[1], in[2]
	for i := range c.Channels {
		k, s := c.Kernels[i], c.Strides[i]
		if h < k || w < k {
			hint := ""
			if in[2] < in[0] && in[2] < in[1] {
				// Gymnasium's images are [H, W, C].
				hint = "; the input looks channels-last ([H, W, C]: its last dimension is the smallest), and the CNN reads [C, H, W] (a gym: env's option channels_first = true moves the channels first)"
			}
			return [3]int{}, fmt.Errorf("cnn layer %d: kernel %d does not fit its %dx%d input (input %v, kernels %v, strides %v): output would be smaller than 1x1%s",
				i, k, h, w, in, c.Kernels, c.Strides, hint)
		}
		ch, h, w = c.Channels[i], (h-k)/s+1, (w-k)/s+1
	}
	return [3]int{ch, h, w}, nil
}

// Validate checks the latent size against its bounds.
func (l Latent) Validate() error {
	if l.Min < 1 || l.Max < l.Min {
		return fmt.Errorf("min %d, max %d: want 1 <= min <= max", l.Min, l.Max)
	}
	if l.Size < l.Min || l.Size > l.Max {
		return fmt.Errorf("size %d: want %d to %d", l.Size, l.Min, l.Max)
	}
	return nil
}

// ValidateArchitecture checks what a user configures — encoder, latent, head — without
// Input, Output and OutputGain, which the agent sets later from the environment.
func (s Spec) ValidateArchitecture() error {
	var err error
	switch s.Encoder {
	case EncoderMLP:
		if s.MLP == nil {
			return errors.New(`encoder "mlp": the [mlp] table is missing`)
		}
		err = wrapField("mlp", s.MLP.Validate())
	case EncoderCNN:
		if s.CNN == nil {
			return errors.New(`encoder "cnn": the [cnn] table is missing`)
		}
		err = wrapField("cnn", s.CNN.Validate())
	case EncoderLSTM:
		if s.LSTM == nil {
			return errors.New(`encoder "lstm": the [lstm] table is missing`)
		}
		err = wrapField("lstm", s.LSTM.Validate())
	case EncoderGRU:
		if s.GRU == nil {
			return errors.New(`encoder "gru": the [gru] table is missing`)
		}
		err = wrapField("gru", s.GRU.Validate())
	case EncoderTransformer:
		if s.Transformer == nil {
			return errors.New(`encoder "transformer": the [transformer] table is missing`)
		}
		err = wrapField("transformer", s.Transformer.Validate())
	default:
		return fmt.Errorf("encoder %q: want one of %q, %q, %q, %q, %q", s.Encoder, EncoderMLP, EncoderCNN, EncoderLSTM, EncoderGRU, EncoderTransformer)
	}
	if err != nil {
		return err
	}
	switch s.DictTable() { // the other table of a Dict network's keys
	case string(EncoderCNN):
		err = wrapField("cnn", s.CNN.Validate())
	case string(EncoderMLP):
		err = wrapField("mlp", s.MLP.Validate())
	}
	if err != nil {
		return err
	}
	if err := wrapField("memory", s.validateMemories()); err != nil {
		return err
	}
	if err := s.validateMemoryTables(); err != nil {
		return err
	}
	if err := wrapField("latent", s.Latent.Validate()); err != nil {
		return err
	}
	if err := s.validateInputsArchitecture(); err != nil {
		return err
	}
	return wrapField("head", s.Head.Validate())
}

// Validate checks the whole spec: the architecture, the input shape the encoder needs, the
// CNN's output being at least 1×1, the output size and the output gain.
func (s Spec) Validate() error {
	if err := s.ValidateArchitecture(); err != nil {
		return err
	}
	switch {
	case s.Dict():
		if err := s.validateInputs(); err != nil {
			return err
		}
	case s.Encoder == EncoderCNN:
		if _, err := s.CNN.OutputShape(s.Input); err != nil {
			return err
		}
	default:
		if len(s.Input) != 1 || s.Input[0] < 1 {
			return fmt.Errorf("input %v: a %s encoder wants [features] with features >= 1", s.Input, s.Encoder)
		}
	}
	if s.Output < 1 {
		return fmt.Errorf("output %d: want at least 1", s.Output)
	}
	if !(s.OutputGain > 0) {
		return fmt.Errorf("output_gain %v: want > 0 (PolicyGain %v or ValueGain %v)", s.OutputGain, PolicyGain, ValueGain)
	}
	return nil
}

func wrapField(field string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", field, err)
}

// String returns a compact one-line description, e.g. "mlp[64 64] ReLU latent 32 head[64]
// ReLU", or for a Dict network "dict{pos: mlp[64 64] ReLU, img: cnn[32 32] k[3 3] s[2 2]
// ReLU} latent 32 head[64] ReLU".
func (s Spec) String() string {
	var b strings.Builder
	switch {
	case s.Dict():
		b.WriteString(s.inputsString())
	case s.Encoder == EncoderMLP:
		if s.MLP != nil {
			fmt.Fprintf(&b, "mlp%v %s", s.MLP.Hidden, s.MLP.Activation)
			if s.MLP.LayerNorm {
				b.WriteString(" ln")
			}
		}
	case s.Encoder == EncoderCNN:
		if s.CNN != nil {
			fmt.Fprintf(&b, "cnn%v k%v s%v %s", s.CNN.Channels, s.CNN.Kernels, s.CNN.Strides, s.CNN.Activation)
		}
	case s.Memory() != nil:
		fmt.Fprintf(&b, "%s %dx%d", s.Encoder, s.Memory().Layers, s.Memory().Hidden)
	case s.Encoder == EncoderTransformer && s.Transformer != nil:
		t := s.Transformer
		fmt.Fprintf(&b, "transformer %dx%d h%d f%d k%d", t.Layers, t.Width, t.Heads, t.MLP, t.Context)
	default:
		fmt.Fprintf(&b, "%q", s.Encoder)
	}
	fmt.Fprintf(&b, " latent %d head%v %s", s.Latent.Size, s.Head.Hidden, s.Head.Activation)
	if s.Head.LayerNorm {
		b.WriteString(" ln")
	}
	return b.String()
}

// EncoderOutSize is the width of the encoder's output, the latent layer's input: the last
// MLP layer's width (the input's when it has none), C·H·W of the CNN's last feature map, or
// the LSTM's or GRU's hidden size. s must be valid and not a Dict network (see KeyInput.EncoderOutSize).
func (s Spec) EncoderOutSize() int {
	switch s.Encoder {
	case EncoderMLP:
		return s.MLP.outSize(s.Input[0])
	case EncoderCNN:
		o, _ := s.CNN.OutputShape(s.Input)
		return o[0] * o[1] * o[2]
	case EncoderTransformer:
		return s.Transformer.Width
	default:
		return s.Memory().Hidden
	}
}

func (m MLP) outSize(in int) int {
	if len(m.Hidden) == 0 {
		return in
	}
	return m.Hidden[len(m.Hidden)-1]
}

package netconf

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// MutationKind groups mutations the way evolution draws them: a share of architecture
// mutations adds or removes layers, the rest resize layers; activation changes are drawn
// separately.
type MutationKind string

// The kinds of Mutation.
const (
	KindLayer      MutationKind = "layer"      // add or remove a layer
	KindNode       MutationKind = "node"       // resize a layer (nodes, channels, kernel)
	KindActivation MutationKind = "activation" // change the activation
)

// Mutation is a named architecture mutation.
//
// Apply never modifies its argument. It returns a new spec, a one-line description and
// whether it changed anything; when it cannot apply (a bound is reached, the encoder is of
// another kind) it returns an unchanged copy, a description of why, and false. Every spec it
// returns is valid: checked with Validate when s.Input is set, else with
// ValidateArchitecture (a CNN's output size depends on the input).
type Mutation struct {
	Name    string       // e.g. "mlp.add_layer"
	Kind    MutationKind //
	Encoder EncoderKind  // the encoder it mutates (EncoderDict: one key's); "" when it applies to any network
	Apply   func(s Spec, rng *rand.Rand) (Spec, string, bool)
}

// Sizes a mutation adds or removes, drawn uniformly.
func mlpNodeSteps() []int     { return []int{16, 32, 64} }
func cnnChannelSteps() []int  { return []int{8, 16, 32} }
func latentNodeSteps() []int  { return []int{8, 16, 32} }
func cnnKernelChoices() []int { return []int{1, 2, 3, 4, 5, 6, 7} }

// Mutations returns every mutation, in a fixed order (a new slice each call).
func Mutations() []Mutation {
	return []Mutation{
		{"mlp.add_layer", KindLayer, EncoderMLP, encoderMLP(mlpAddLayer, "mlp.add_layer")},
		{"mlp.remove_layer", KindLayer, EncoderMLP, encoderMLP(mlpRemoveLayer, "mlp.remove_layer")},
		{"mlp.add_node", KindNode, EncoderMLP, encoderMLP(mlpAddNode, "mlp.add_node")},
		{"mlp.remove_node", KindNode, EncoderMLP, encoderMLP(mlpRemoveNode, "mlp.remove_node")},
		{"cnn.add_layer", KindLayer, EncoderCNN, encoderCNN(cnnAddLayer, "cnn.add_layer")},
		{"cnn.remove_layer", KindLayer, EncoderCNN, encoderCNN(cnnRemoveLayer, "cnn.remove_layer")},
		{"cnn.add_channel", KindNode, EncoderCNN, encoderCNN(cnnAddChannel, "cnn.add_channel")},
		{"cnn.remove_channel", KindNode, EncoderCNN, encoderCNN(cnnRemoveChannel, "cnn.remove_channel")},
		{"cnn.change_kernel", KindNode, EncoderCNN, cnnChangeKernel},
		{"lstm.add_layer", KindLayer, EncoderLSTM, encoderRecurrent(EncoderLSTM, lstmAddLayer, "lstm.add_layer")},
		{"lstm.remove_layer", KindLayer, EncoderLSTM, encoderRecurrent(EncoderLSTM, lstmRemoveLayer, "lstm.remove_layer")},
		{"lstm.add_node", KindNode, EncoderLSTM, encoderRecurrent(EncoderLSTM, lstmAddNode, "lstm.add_node")},
		{"lstm.remove_node", KindNode, EncoderLSTM, encoderRecurrent(EncoderLSTM, lstmRemoveNode, "lstm.remove_node")},
		{"gru.add_layer", KindLayer, EncoderGRU, encoderRecurrent(EncoderGRU, lstmAddLayer, "gru.add_layer")},
		{"gru.remove_layer", KindLayer, EncoderGRU, encoderRecurrent(EncoderGRU, lstmRemoveLayer, "gru.remove_layer")},
		{"gru.add_node", KindNode, EncoderGRU, encoderRecurrent(EncoderGRU, lstmAddNode, "gru.add_node")},
		{"gru.remove_node", KindNode, EncoderGRU, encoderRecurrent(EncoderGRU, lstmRemoveNode, "gru.remove_node")},
		{"transformer.add_layer", KindLayer, EncoderTransformer, encoderTransformer(transformerAddLayer, "transformer.add_layer")},
		{"transformer.remove_layer", KindLayer, EncoderTransformer, encoderTransformer(transformerRemoveLayer, "transformer.remove_layer")},
		{"transformer.add_node", KindNode, EncoderTransformer, encoderTransformer(transformerResize(+1), "transformer.add_node")},
		{"transformer.remove_node", KindNode, EncoderTransformer, encoderTransformer(transformerResize(-1), "transformer.remove_node")},
		{"memory.switch", KindLayer, EncoderMemory, memorySwitch},
		{"dict.mlp.add_layer", KindLayer, EncoderDict, perKey(EncoderMLP, "dict.mlp.add_layer")},
		{"dict.mlp.remove_layer", KindLayer, EncoderDict, perKey(EncoderMLP, "dict.mlp.remove_layer")},
		{"dict.mlp.add_node", KindNode, EncoderDict, perKey(EncoderMLP, "dict.mlp.add_node")},
		{"dict.mlp.remove_node", KindNode, EncoderDict, perKey(EncoderMLP, "dict.mlp.remove_node")},
		{"dict.cnn.add_layer", KindLayer, EncoderDict, perKey(EncoderCNN, "dict.cnn.add_layer")},
		{"dict.cnn.remove_layer", KindLayer, EncoderDict, perKey(EncoderCNN, "dict.cnn.remove_layer")},
		{"dict.cnn.add_channel", KindNode, EncoderDict, perKey(EncoderCNN, "dict.cnn.add_channel")},
		{"dict.cnn.remove_channel", KindNode, EncoderDict, perKey(EncoderCNN, "dict.cnn.remove_channel")},
		{"dict.cnn.change_kernel", KindNode, EncoderDict, perKey(EncoderCNN, "dict.cnn.change_kernel")},
		{"latent.add_node", KindNode, "", latentResize(+1, "latent.add_node")},
		{"latent.remove_node", KindNode, "", latentResize(-1, "latent.remove_node")},
		{"head.add_layer", KindLayer, "", head(mlpAddLayer, "head.add_layer")},
		{"head.remove_layer", KindLayer, "", head(mlpRemoveLayer, "head.remove_layer")},
		{"head.add_node", KindNode, "", head(mlpAddNode, "head.add_node")},
		{"head.remove_node", KindNode, "", head(mlpRemoveNode, "head.remove_node")},
		{"change_activation", KindActivation, "", changeActivation},
	}
}

// EncoderDict is the Encoder of the mutations that change one key's encoder of a Dict
// network (Spec.Dict); it is not an encoder a Spec can name.
const EncoderDict EncoderKind = "dict"

// MutationsFor returns the mutations that apply to s's encoder kind (and those for any
// network); for a Dict network, the per-key encoder mutations ("dict.…") instead of the
// encoder's; and memory.switch when s lists more than one memory model (Spec.Memories).
func MutationsFor(s Spec) []Mutation {
	kind := s.Encoder
	if s.Dict() {
		kind = EncoderDict
	}
	memory := s.Recurrent() && len(s.Memories) > 1
	var ms []Mutation
	for _, m := range Mutations() {
		if m.Encoder == "" || m.Encoder == kind || memory && m.Encoder == EncoderMemory {
			ms = append(ms, m)
		}
	}
	return ms
}

// LookupMutation returns the mutation called name.
func LookupMutation(name string) (Mutation, bool) {
	for _, m := range Mutations() {
		if m.Name == name {
			return m, true
		}
	}
	return Mutation{}, false
}

// checked returns (c, desc, true) if c is valid, else an unchanged copy of s.
func checked(s, c Spec, desc string) (Spec, string, bool) {
	var err error
	if len(c.Input) > 0 {
		err = c.Validate()
	} else {
		err = c.ValidateArchitecture()
	}
	if err != nil {
		return s.Clone(), desc + ": not applied, result would be invalid: " + err.Error(), false
	}
	return c, desc, true
}

// mlpOp mutates an MLP in place; it returns a description and whether it applied.
type mlpOp func(m *MLP, rng *rand.Rand) (string, bool)

func encoderMLP(op mlpOp, name string) func(Spec, *rand.Rand) (Spec, string, bool) {
	return func(s Spec, rng *rand.Rand) (Spec, string, bool) {
		if s.Encoder != EncoderMLP || s.MLP == nil || s.Dict() {
			return s.Clone(), name + ": no MLP encoder", false
		}
		c := s.Clone()
		d, ok := op(c.MLP, rng)
		if !ok {
			return s.Clone(), name + ": " + d, false
		}
		return checked(s, c, name+": "+d)
	}
}

func head(op mlpOp, name string) func(Spec, *rand.Rand) (Spec, string, bool) {
	return func(s Spec, rng *rand.Rand) (Spec, string, bool) {
		c := s.Clone()
		d, ok := op(&c.Head, rng)
		if !ok {
			return s.Clone(), name + ": " + d, false
		}
		return checked(s, c, name+": "+d)
	}
}

// mlpAddLayer appends a layer as wide as the last one (Transfer makes it a pass-through).
// An MLP without layers gets one of 64 nodes (within its bounds), which Transfer makes the
// identity on its first min(in, 64) units.
func mlpAddLayer(m *MLP, _ *rand.Rand) (string, bool) {
	if len(m.Hidden) >= m.MaxLayers {
		return fmt.Sprintf("already at max_layers %d", m.MaxLayers), false
	}
	old := slices.Clone(m.Hidden)
	width := min(max(64, m.MinNodes), m.MaxNodes)
	if len(m.Hidden) > 0 {
		width = m.Hidden[len(m.Hidden)-1]
	}
	m.Hidden = append(m.Hidden, width)
	return fmt.Sprintf("hidden %v -> %v", old, m.Hidden), true
}

func mlpRemoveLayer(m *MLP, _ *rand.Rand) (string, bool) {
	if len(m.Hidden) <= m.MinLayers {
		return fmt.Sprintf("already at min_layers %d", m.MinLayers), false
	}
	old := slices.Clone(m.Hidden)
	m.Hidden = m.Hidden[:len(m.Hidden)-1]
	return fmt.Sprintf("hidden %v -> %v", old, m.Hidden), true
}

func mlpAddNode(m *MLP, rng *rand.Rand) (string, bool) {
	return resizeOne(m.Hidden, +1, mlpNodeSteps(), m.MinNodes, m.MaxNodes, "nodes", rng)
}

func mlpRemoveNode(m *MLP, rng *rand.Rand) (string, bool) {
	return resizeOne(m.Hidden, -1, mlpNodeSteps(), m.MinNodes, m.MaxNodes, "nodes", rng)
}

// resizeOne grows (dir +1) or shrinks (dir −1) one entry of sizes, chosen uniformly among
// those that can still move, by a step drawn from steps, clipped to [lo, hi].
func resizeOne(sizes []int, dir int, steps []int, lo, hi int, what string, rng *rand.Rand) (string, bool) {
	var movable []int
	for i, v := range sizes {
		if (dir > 0 && v < hi) || (dir < 0 && v > lo) {
			movable = append(movable, i)
		}
	}
	if len(movable) == 0 {
		if dir > 0 {
			return fmt.Sprintf("every layer already at the maximum of %d %s", hi, what), false
		}
		return fmt.Sprintf("every layer already at the minimum of %d %s", lo, what), false
	}
	i := movable[rng.IntN(len(movable))]
	step := steps[rng.IntN(len(steps))]
	old := sizes[i]
	sizes[i] = min(max(old+dir*step, lo), hi)
	return fmt.Sprintf("layer %d %s %d -> %d", i, what, old, sizes[i]), true
}

type cnnOp func(c *CNN, rng *rand.Rand) (string, bool)

func encoderCNN(op cnnOp, name string) func(Spec, *rand.Rand) (Spec, string, bool) {
	return func(s Spec, rng *rand.Rand) (Spec, string, bool) {
		if s.Encoder != EncoderCNN || s.CNN == nil || s.Dict() {
			return s.Clone(), name + ": no CNN encoder", false
		}
		c := s.Clone()
		d, ok := op(c.CNN, rng)
		if !ok {
			return s.Clone(), name + ": " + d, false
		}
		return checked(s, c, name+": "+d)
	}
}

// cnnAddLayer appends a 1×1, stride-1 convolution with as many channels as the last layer:
// it keeps the feature map's shape, so it can never make the output smaller than 1×1, and
// Transfer can make it an exact pass-through. change_kernel may widen it later.
func cnnAddLayer(c *CNN, _ *rand.Rand) (string, bool) {
	if len(c.Channels) >= c.MaxLayers {
		return fmt.Sprintf("already at max_layers %d", c.MaxLayers), false
	}
	last := len(c.Channels) - 1
	c.Channels = append(c.Channels, c.Channels[last])
	c.Kernels = append(c.Kernels, 1)
	c.Strides = append(c.Strides, 1)
	return fmt.Sprintf("channels %v kernels %v strides %v", c.Channels, c.Kernels, c.Strides), true
}

func cnnRemoveLayer(c *CNN, _ *rand.Rand) (string, bool) {
	if len(c.Channels) <= c.MinLayers {
		return fmt.Sprintf("already at min_layers %d", c.MinLayers), false
	}
	n := len(c.Channels) - 1
	c.Channels, c.Kernels, c.Strides = c.Channels[:n], c.Kernels[:n], c.Strides[:n]
	return fmt.Sprintf("channels %v kernels %v strides %v", c.Channels, c.Kernels, c.Strides), true
}

func cnnAddChannel(c *CNN, rng *rand.Rand) (string, bool) {
	return resizeOne(c.Channels, +1, cnnChannelSteps(), c.MinChannels, c.MaxChannels, "channels", rng)
}

func cnnRemoveChannel(c *CNN, rng *rand.Rand) (string, bool) {
	return resizeOne(c.Channels, -1, cnnChannelSteps(), c.MinChannels, c.MaxChannels, "channels", rng)
}

// cnnChangeKernel gives one layer another kernel size from 1 to 7, drawn uniformly among the
// (layer, size) pairs that keep the spec valid — with an input, the output stays at least 1×1.
func cnnChangeKernel(s Spec, rng *rand.Rand) (Spec, string, bool) {
	const name = "cnn.change_kernel"
	if s.Encoder != EncoderCNN || s.CNN == nil || s.Dict() {
		return s.Clone(), name + ": no CNN encoder", false
	}
	type choice struct{ layer, k int }
	var ok []choice
	for i, k := range s.CNN.Kernels {
		for _, nk := range cnnKernelChoices() {
			if nk == k {
				continue
			}
			c := s.Clone()
			c.CNN.Kernels[i] = nk
			if _, _, valid := checked(s, c, ""); valid {
				ok = append(ok, choice{i, nk})
			}
		}
	}
	if len(ok) == 0 {
		return s.Clone(), name + ": no other kernel size fits the input", false
	}
	ch := ok[rng.IntN(len(ok))]
	c := s.Clone()
	old := c.CNN.Kernels[ch.layer]
	c.CNN.Kernels[ch.layer] = ch.k
	return c, fmt.Sprintf("%s: layer %d kernel %d -> %d", name, ch.layer, old, ch.k), true
}

// recurrentOp changes the sizes of an LSTM or GRU encoder.
type recurrentOp func(l *LSTM, rng *rand.Rand) (string, bool)

// encoderRecurrent applies op to the sizes of a kind (LSTM or GRU) encoder.
func encoderRecurrent(kind EncoderKind, op recurrentOp, name string) func(Spec, *rand.Rand) (Spec, string, bool) {
	return func(s Spec, rng *rand.Rand) (Spec, string, bool) {
		if s.Encoder != kind || s.Memory() == nil {
			return s.Clone(), fmt.Sprintf("%s: no %s encoder", name, strings.ToUpper(string(kind))), false
		}
		c := s.Clone()
		d, ok := op(c.Memory(), rng)
		if !ok {
			return s.Clone(), name + ": " + d, false
		}
		return checked(s, c, name+": "+d)
	}
}

func lstmAddLayer(l *LSTM, _ *rand.Rand) (string, bool) {
	return stepLayers(&l.Layers, +1, l.MinLayers, l.MaxLayers)
}

func lstmRemoveLayer(l *LSTM, _ *rand.Rand) (string, bool) {
	return stepLayers(&l.Layers, -1, l.MinLayers, l.MaxLayers)
}

// stepLayers moves a stack's layer count by one in direction dir within [lo, hi].
func stepLayers(n *int, dir, lo, hi int) (string, bool) {
	switch {
	case dir > 0 && *n >= hi:
		return fmt.Sprintf("already at max_layers %d", hi), false
	case dir < 0 && *n <= lo:
		return fmt.Sprintf("already at min_layers %d", lo), false
	}
	*n += dir
	return fmt.Sprintf("layers %d -> %d", *n-dir, *n), true
}

func lstmAddNode(l *LSTM, rng *rand.Rand) (string, bool) {
	return resizeScalar(&l.Hidden, +1, mlpNodeSteps(), l.MinHidden, l.MaxHidden, "hidden", rng)
}

func lstmRemoveNode(l *LSTM, rng *rand.Rand) (string, bool) {
	return resizeScalar(&l.Hidden, -1, mlpNodeSteps(), l.MinHidden, l.MaxHidden, "hidden", rng)
}

// resizeScalar moves *v by a step drawn from steps in direction dir, clipped to [lo, hi].
func resizeScalar(v *int, dir int, steps []int, lo, hi int, what string, rng *rand.Rand) (string, bool) {
	if dir > 0 && *v >= hi {
		return fmt.Sprintf("%s %d already at the maximum %d", what, *v, hi), false
	}
	if dir < 0 && *v <= lo {
		return fmt.Sprintf("%s %d already at the minimum %d", what, *v, lo), false
	}
	old := *v
	*v = min(max(old+dir*steps[rng.IntN(len(steps))], lo), hi)
	return fmt.Sprintf("%s %d -> %d", what, old, *v), true
}

func latentResize(dir int, name string) func(Spec, *rand.Rand) (Spec, string, bool) {
	return func(s Spec, rng *rand.Rand) (Spec, string, bool) {
		c := s.Clone()
		d, ok := resizeScalar(&c.Latent.Size, dir, latentNodeSteps(), c.Latent.Min, c.Latent.Max, "size", rng)
		if !ok {
			return s.Clone(), name + ": " + d, false
		}
		return checked(s, c, name+": "+d)
	}
}

// changeActivation sets one new activation, drawn uniformly among the others, for the whole
// network: the encoder's (MLP or CNN; every key's of a Dict network), the latent's and the
// head's.
func changeActivation(s Spec, rng *rand.Rand) (Spec, string, bool) {
	const name = "change_activation"
	cur := s.Head.Activation
	var others []Activation
	for _, a := range Activations() {
		if a != cur {
			others = append(others, a)
		}
	}
	a := others[rng.IntN(len(others))]
	c := s.Clone()
	c.Head.Activation = a
	if c.MLP != nil {
		c.MLP.Activation = a
	}
	if c.CNN != nil {
		c.CNN.Activation = a
	}
	for _, k := range c.Inputs {
		if k.MLP != nil {
			k.MLP.Activation = a
		}
		if k.CNN != nil {
			k.CNN.Activation = a
		}
	}
	return checked(s, c, fmt.Sprintf("%s: %s -> %s", name, cur, a))
}

// perKey returns the mutation "dict.<kind>.<op>" of a Dict network: the encoder mutation
// "<kind>.<op>" applied to one key's encoder. Keys with a kind encoder are tried in an order
// drawn from rng, and the first key the mutation changes (validly) is the one changed, so
// it only fails to apply when it applies to no key.
func perKey(kind EncoderKind, name string) func(Spec, *rand.Rand) (Spec, string, bool) {
	return func(s Spec, rng *rand.Rand) (Spec, string, bool) {
		inner, _ := LookupMutation(strings.TrimPrefix(name, "dict.")) // looked up here: Mutations builds this
		var keys []int
		for i, k := range s.Inputs {
			if k.Encoder == kind {
				keys = append(keys, i)
			}
		}
		if len(keys) == 0 {
			return s.Clone(), fmt.Sprintf("%s: no dict key with a %s encoder", name, kind), false
		}
		var why []string
		for _, j := range rng.Perm(len(keys)) {
			k := s.Inputs[keys[j]]
			// The key's encoder seen as a one-encoder network, so the encoder mutation
			// checks what it checks there (a CNN's output must stay at least 1x1).
			view := Spec{Encoder: k.Encoder, MLP: k.MLP, CNN: k.CNN, Latent: s.Latent, Head: s.Head,
				Output: 1, OutputGain: 1}
			if len(s.Input) > 0 {
				view.Input = k.Input
			}
			v, desc, ok := inner.Apply(view.Clone(), rng)
			desc = strings.TrimPrefix(desc, inner.Name+": ")
			if !ok {
				why = append(why, k.Key+": "+desc)
				continue
			}
			c := s.Clone()
			c.Inputs[keys[j]].MLP, c.Inputs[keys[j]].CNN = v.MLP, v.CNN
			return checked(s, c, fmt.Sprintf("%s: key %s: %s", name, k.Key, desc))
		}
		return s.Clone(), name + ": " + strings.Join(why, "; "), false
	}
}

package netconf

import (
	"fmt"
	"iter"
	"math"
	"slices"
	"strconv"
)

// Role says what a tensor is, and so how Init fills it.
type Role int

// The roles of a network's tensors.
const (
	RoleWeight    Role = iota // a dense weight matrix, an LSTM gate matrix or a conv kernel: orthogonal × gain
	RoleBias                  // a bias: zeros
	RoleNormScale             // a LayerNorm scale: ones
	RoleNormShift             // a LayerNorm shift: zeros
)

// String returns the role's name: "weight", "bias", "norm scale" or "norm shift".
func (r Role) String() string {
	switch r {
	case RoleWeight:
		return "weight"
	case RoleBias:
		return "bias"
	case RoleNormScale:
		return "norm scale"
	case RoleNormShift:
		return "norm shift"
	}
	return "Role(" + strconv.Itoa(int(r)) + ")"
}

// TensorSpec describes one tensor of a network's layout (see Params for the names and
// shapes).
type TensorSpec struct {
	Name  string
	Shape []int
	Role  Role
}

// Size returns the number of values of the tensor, the product of its shape.
func (t TensorSpec) Size() int { return shapeSize(t.Shape) }

// Layout returns the tensors of a valid spec in their canonical order, the order of the
// Params that Init, Zeros and Transfer return. It fails with s.Validate's error.
func Layout(s Spec) ([]TensorSpec, error) {
	l, err := layout(s)
	if err != nil {
		return nil, err
	}
	ts := make([]TensorSpec, len(l))
	for i, sl := range l {
		ts[i] = TensorSpec{Name: sl.Name, Shape: slices.Clone(sl.Shape), Role: sl.Role}
	}
	return ts, nil
}

// paramLimit is where ParamCount saturates.
const paramLimit = int64(1) << 62

// ParamCount returns the number of float32 values of s's layout — Params.Size of Init(s) —
// without allocating them, saturating at 1<<62. So a spec read from an untrusted file
// (hidden [1e9], a billion LSTM layers) can be refused before anything is allocated for it;
// its cost does not grow with the number of LSTM layers. It fails with s.Validate's error.
func ParamCount(s Spec) (int64, error) {
	if err := s.Validate(); err != nil {
		return 0, err
	}
	if s.Memory() == nil || s.Memory().Layers <= 2 {
		return countValues(s), nil
	}
	// Every recurrent layer after the first has the shapes of the second: count the network
	// with one and with two layers, and add the difference once per further layer.
	one, two := s.Clone(), s.Clone()
	one.Memory().Layers, two.Memory().Layers = 1, 2
	n1, n2 := countValues(one), countValues(two)
	if n2 == paramLimit {
		return paramLimit, nil
	}
	return satAdd(n2, satMul(int64(s.Memory().Layers-2), n2-n1)), nil
}

// countValues sums the sizes of s's tensors, saturating at paramLimit.
func countValues(s Spec) int64 {
	var n int64
	for sl := range slots(s) {
		size := int64(1)
		for _, d := range sl.Shape {
			size = satMul(size, int64(d))
		}
		if n = satAdd(n, size); n == paramLimit {
			break
		}
	}
	return n
}

// satAdd and satMul are + and · on non-negative counts, saturating at paramLimit.
func satAdd(x, y int64) int64 {
	if x > paramLimit-y {
		return paramLimit
	}
	return x + y
}

func satMul(x, y int64) int64 {
	if x == 0 || y == 0 {
		return 0
	}
	if x > paramLimit/y {
		return paramLimit
	}
	return x * y
}

// LSTMGates returns PyTorch's gate order, the suffixes of an LSTM layer's per-gate tensors
// (a function, so no package state can change it).
func LSTMGates() [4]string { return [4]string{"i", "f", "g", "o"} }

// GRUGates returns PyTorch's gate order of a GRU layer: reset, update, new.
func GRUGates() [3]string { return [3]string{"r", "z", "n"} }

// Gates returns the gate suffixes of a recurrent encoder's per-gate tensors: LSTMGates for
// an LSTM, GRUGates for a GRU, nil for the others.
func Gates(kind EncoderKind) []string {
	switch kind {
	case EncoderLSTM:
		g := LSTMGates()
		return g[:]
	case EncoderGRU:
		g := GRUGates()
		return g[:]
	}
	return nil
}

// slot is one tensor of a spec's layout with what Init and Transfer need to know about it.
type slot struct {
	TensorSpec
	gain    float64 // of the orthogonal init of a weight
	outAxis int     // axis of Shape that indexes the layer's output units
	// centred: axes 2 and 3 (a conv kernel) are aligned at their centres, so a kernel that
	// grows from 1 to 3 keeps its old tap in the middle.
	centred bool
	// newestLast: axis 0 is a window of steps ending at the current one (a Transformer's
	// positions), aligned at its end, so that a window that grows or shrinks keeps each
	// position's row for the same distance back.
	newestLast bool
	// prev is the weight of the previous layer of the same MLP or CNN stack; a layer whose
	// weight is new while prev existed was appended and starts as a pass-through.
	prev string
	// zeroAfter names the previous layer's tensor of a residual stack (a Transformer's) on
	// the tensors that end one of a layer's residual branches: a layer appended where that
	// tensor existed starts with them zero, so that it adds nothing to its input.
	zeroAfter string
	// segs is set on the weight that reads a Dict network's concatenated latents: the latent
	// bias of each key, whose lengths give the key's block of input rows (see copySegments).
	segs []string
}

// rows is the number of rows of the matrix the orthogonal init sees (the rest of the shape
// is its columns): the input size of a dense weight, the output channels of a conv weight,
// C·H·W of the latent weight after a CNN.
func (sl slot) rows() int {
	if sl.outAxis == 0 {
		return sl.Shape[0]
	}
	return shapeSize(sl.Shape) / sl.Shape[len(sl.Shape)-1]
}

const sqrt2 = math.Sqrt2

// layout lists the tensors of a valid spec in their canonical order.
func layout(s Spec) ([]slot, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return slices.Collect(slots(s)), nil
}

// slots yields the tensors of a valid spec in their canonical order, one at a time, so that
// counting them allocates nothing.
func slots(s Spec) iter.Seq[slot] {
	return func(yield func(slot) bool) {
		if s.Dict() {
			_ = dictSlots(yield, s) && headSlots(yield, s, s.Inputs[0].LatentPrefix()+".weight", s.latentSegments())
			return
		}
		var ok bool
		switch s.Encoder {
		case EncoderMLP:
			ok = mlpSlots(yield, "encoder.mlp", s.Input[0], *s.MLP, "")
		case EncoderCNN:
			ok = cnnSlots(yield, "encoder.cnn", s.Input[0], *s.CNN)
		case EncoderLSTM, EncoderGRU:
			ok = recurrentSlots(yield, "encoder."+string(s.Encoder), s.Input[0], *s.Memory(), Gates(s.Encoder))
		case EncoderTransformer:
			ok = transformerSlots(yield, "encoder.transformer", s.Input[0], *s.Transformer)
		}
		if !ok {
			return
		}
		lw := slot{TensorSpec: TensorSpec{"latent.weight", nil, RoleWeight}, gain: sqrt2, outAxis: 1}
		if s.Encoder == EncoderCNN {
			// Kept 4-D so Transfer knows which channel and position each input is when the
			// feature map changes; networks see it as the [C·H·W, L] matrix it is in memory.
			o, _ := s.CNN.OutputShape(s.Input)
			lw.Shape, lw.outAxis = []int{o[0], o[1], o[2], s.Latent.Size}, 3
		} else {
			lw.Shape = []int{s.EncoderOutSize(), s.Latent.Size}
		}
		_ = yield(lw) && yield(biasSlot("latent.bias", s.Latent.Size)) && headSlots(yield, s, "latent.weight", nil)
	}
}

// biasSlot is the bias of n units.
func biasSlot(name string, n int) slot {
	return slot{TensorSpec: TensorSpec{name, []int{n}, RoleBias}}
}

// headSlots yields the head's and the output layer's tensors; prevLatent is the latent
// weight a head layer appended to a head without layers follows, and segs (for a Dict
// network) marks the first weight, the one that reads the latents. Like every *Slots
// function it reports whether yield wants more.
func headSlots(yield func(slot) bool, s Spec, prevLatent string, segs []string) bool {
	first := true
	mark := func(sl slot) bool { // head.0.weight, or out.weight when the head has no layer
		if first {
			sl.segs, first = segs, false
		}
		return yield(sl)
	}
	last := s.Head.outSize(s.LatentWidth())
	return mlpSlots(mark, "head", s.LatentWidth(), s.Head, prevLatent) &&
		mark(slot{TensorSpec: TensorSpec{"out.weight", []int{last, s.Output}, RoleWeight}, gain: s.OutputGain, outAxis: 1}) &&
		mark(biasSlot("out.bias", s.Output))
}

// mlpSlots yields the tensors of m's layers; prev0 is the weight of whatever precedes its
// first layer ("" for none).
func mlpSlots(yield func(slot) bool, prefix string, in int, m MLP, prev0 string) bool {
	for i, h := range m.Hidden {
		p := prefix + "." + strconv.Itoa(i)
		w := slot{TensorSpec: TensorSpec{p + ".weight", []int{in, h}, RoleWeight}, gain: sqrt2, outAxis: 1, prev: prev0}
		if i > 0 {
			w.prev = prefix + "." + strconv.Itoa(i-1) + ".weight"
		}
		if !yield(w) || !yield(biasSlot(p+".bias", h)) {
			return false
		}
		if m.LayerNorm && !(yield(slot{TensorSpec: TensorSpec{p + ".norm.weight", []int{h}, RoleNormScale}}) &&
			yield(slot{TensorSpec: TensorSpec{p + ".norm.bias", []int{h}, RoleNormShift}})) {
			return false
		}
		in = h
	}
	return true
}

func cnnSlots(yield func(slot) bool, prefix string, in int, c CNN) bool {
	for i, ch := range c.Channels {
		p := prefix + "." + strconv.Itoa(i)
		k := c.Kernels[i]
		w := slot{TensorSpec: TensorSpec{p + ".weight", []int{ch, in, k, k}, RoleWeight}, gain: sqrt2, outAxis: 0, centred: true}
		if i > 0 {
			w.prev = prefix + "." + strconv.Itoa(i-1) + ".weight"
		}
		if !yield(w) || !yield(biasSlot(p+".bias", ch)) {
			return false
		}
		in = ch
	}
	return true
}

func recurrentSlots(yield func(slot) bool, prefix string, in int, m LSTM, gates []string) bool {
	h := m.Hidden
	for layer := range m.Layers {
		p := prefix + "." + strconv.Itoa(layer)
		for _, q := range gates {
			if !(yield(slot{TensorSpec: TensorSpec{p + ".w_ih." + q, []int{in, h}, RoleWeight}, gain: 1, outAxis: 1}) &&
				yield(slot{TensorSpec: TensorSpec{p + ".w_hh." + q, []int{h, h}, RoleWeight}, gain: 1, outAxis: 1}) &&
				yield(biasSlot(p+".b_ih."+q, h)) &&
				yield(biasSlot(p+".b_hh."+q, h))) {
				return false
			}
		}
		in = h
	}
	return true
}

// Zeros returns the layout of s with every value zero: the shape of its Params, e.g. for
// optimizer moments and gradients.
func Zeros(s Spec) (Params, error) {
	l, err := layout(s)
	if err != nil {
		return nil, err
	}
	p := make(Params, len(l))
	for i, sl := range l {
		p[i] = Tensor{Name: sl.Name, Shape: slices.Clone(sl.Shape), Data: make([]float32, sl.Size())}
	}
	return p, nil
}

// CheckLayout reports the first tensor of l that p lacks or holds with another shape (or
// with Data of another length). Tensors of p that l does not name are allowed.
func (p Params) CheckLayout(l []TensorSpec) error {
	for _, ts := range l {
		t := p.Tensor(ts.Name)
		if t == nil {
			return fmt.Errorf("param %q: missing", ts.Name)
		}
		if !slices.Equal(t.Shape, ts.Shape) || len(t.Data) != ts.Size() {
			return fmt.Errorf("param %q: shape %v with %d values, want shape %v", ts.Name, t.Shape, len(t.Data), ts.Shape)
		}
	}
	return nil
}

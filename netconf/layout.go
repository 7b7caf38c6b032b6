package netconf

import (
	"fmt"
	"math"
	"slices"
	"strconv"
)

// slotRole says how a tensor is initialised.
type slotRole int

const (
	roleWeight    slotRole = iota // orthogonal with the slot's gain
	roleBias                      // zeros
	roleNormScale                 // ones
	roleNormShift                 // zeros
)

// slot describes one tensor of a spec's layout: its name, shape, init and how Transfer maps
// old values onto it.
type slot struct {
	name  string
	shape []int
	// rows is the number of rows of the matrix the orthogonal init sees (the rest of the
	// shape is its columns): the input size of a dense weight, the output channels of a conv
	// weight, C·H·W of the latent weight after a CNN.
	rows    int
	role    slotRole
	gain    float64
	outAxis int // axis of shape that indexes the layer's output units
	// centred: axes 2 and 3 (a conv kernel) are aligned at their centres, so a kernel that
	// grows from 1 to 3 keeps its old tap in the middle.
	centred bool
	// prev is the weight of the previous layer of the same MLP or CNN stack; a layer whose
	// weight is new while prev existed was appended and starts as a pass-through.
	prev string
	// segs is set on the weight that reads a Dict network's concatenated latents: the latent
	// bias of each key, whose lengths give the key's block of input rows (see copySegments).
	segs []string
}

const sqrt2 = math.Sqrt2

// lstmGates returns PyTorch's gate order (a function, so no package state can change it).
func lstmGates() [4]string { return [4]string{"i", "f", "g", "o"} }

// layout lists the tensors of a valid spec in their canonical order.
func layout(s Spec) ([]slot, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if s.Dict() {
		return finishLayout(headSlots(dictSlots(nil, s), s, s.Inputs[0].latentName()+".weight", s.latentSegments())), nil
	}
	var l []slot
	switch s.Encoder {
	case EncoderMLP:
		l = mlpSlots(l, "encoder.mlp", s.Input[0], *s.MLP, "")
	case EncoderCNN:
		l = cnnSlots(l, "encoder.cnn", s.Input[0], *s.CNN)
	case EncoderLSTM:
		l = lstmSlots(l, "encoder.lstm", s.Input[0], *s.LSTM)
	}
	in := s.encoderOutSize()
	lw := slot{name: "latent.weight", shape: []int{in, s.Latent.Size}, role: roleWeight, gain: sqrt2, outAxis: 1}
	if s.Encoder == EncoderCNN {
		// Kept 4-D so Transfer knows which channel and position each input is when the
		// feature map changes; graphs see it as the [C·H·W, L] matrix it is in memory.
		o, _ := s.CNN.OutputShape(s.Input)
		lw.shape = []int{o[0], o[1], o[2], s.Latent.Size}
		lw.outAxis = 3
	}
	l = append(l, lw, slot{name: "latent.bias", shape: []int{s.Latent.Size}, role: roleBias})
	return finishLayout(headSlots(l, s, "latent.weight", nil)), nil
}

// headSlots appends the head's and the output layer's tensors; prevLatent is the latent
// weight a head layer appended to a head without layers follows, and segs (for a Dict
// network) marks the first weight that reads the latents.
func headSlots(l []slot, s Spec, prevLatent string, segs []string) []slot {
	first := len(l)
	l = mlpSlots(l, "head", s.LatentWidth(), s.Head, prevLatent)
	last := s.Head.outSize(s.LatentWidth())
	l = append(l,
		slot{name: "out.weight", shape: []int{last, s.Output}, role: roleWeight, gain: s.OutputGain, outAxis: 1},
		slot{name: "out.bias", shape: []int{s.Output}, role: roleBias})
	l[first].segs = segs // head.0.weight, or out.weight when the head has no layer
	return l
}

// finishLayout sets every slot's rows.
func finishLayout(l []slot) []slot {
	for i := range l {
		switch {
		case l[i].outAxis == 0:
			l[i].rows = l[i].shape[0]
		default:
			l[i].rows = shapeSize(l[i].shape) / l[i].shape[len(l[i].shape)-1]
		}
	}
	return l
}

// mlpSlots appends the tensors of m's layers; prev0 is the weight of whatever precedes
// its first layer ("" for none).
func mlpSlots(l []slot, prefix string, in int, m MLP, prev0 string) []slot {
	for i, h := range m.Hidden {
		p := prefix + "." + strconv.Itoa(i)
		w := slot{name: p + ".weight", shape: []int{in, h}, role: roleWeight, gain: sqrt2, outAxis: 1, prev: prev0}
		if i > 0 {
			w.prev = prefix + "." + strconv.Itoa(i-1) + ".weight"
		}
		l = append(l, w, slot{name: p + ".bias", shape: []int{h}, role: roleBias})
		if m.LayerNorm {
			l = append(l, slot{name: p + ".norm.weight", shape: []int{h}, role: roleNormScale},
				slot{name: p + ".norm.bias", shape: []int{h}, role: roleNormShift})
		}
		in = h
	}
	return l
}

func cnnSlots(l []slot, prefix string, in int, c CNN) []slot {
	for i, ch := range c.Channels {
		p := prefix + "." + strconv.Itoa(i)
		k := c.Kernels[i]
		w := slot{name: p + ".weight", shape: []int{ch, in, k, k}, role: roleWeight, gain: sqrt2, outAxis: 0, centred: true}
		if i > 0 {
			w.prev = prefix + "." + strconv.Itoa(i-1) + ".weight"
		}
		l = append(l, w, slot{name: p + ".bias", shape: []int{ch}, role: roleBias})
		in = ch
	}
	return l
}

func lstmSlots(l []slot, prefix string, in int, m LSTM) []slot {
	h := m.Hidden
	for layer := range m.Layers {
		p := prefix + "." + strconv.Itoa(layer)
		for _, q := range lstmGates() {
			l = append(l,
				slot{name: p + ".w_ih." + q, shape: []int{in, h}, role: roleWeight, gain: 1, outAxis: 1},
				slot{name: p + ".w_hh." + q, shape: []int{h, h}, role: roleWeight, gain: 1, outAxis: 1},
				slot{name: p + ".b_ih." + q, shape: []int{h}, role: roleBias},
				slot{name: p + ".b_hh." + q, shape: []int{h}, role: roleBias})
		}
		in = h
	}
	return l
}

// Zeros returns the layout of s with every value zero: the shape of its Params, e.g. for
// optimizer moments.
func Zeros(s Spec) (Params, error) {
	l, err := layout(s)
	if err != nil {
		return nil, err
	}
	p := make(Params, len(l))
	for i, sl := range l {
		p[i] = Tensor{Name: sl.name, Shape: append([]int(nil), sl.shape...), Data: make([]float32, shapeSize(sl.shape))}
	}
	return p, nil
}

// checkParams reports the first tensor of the layout that p lacks or holds with another
// shape.
func checkParams(l []slot, p Params) error {
	for _, sl := range l {
		t := p.Tensor(sl.name)
		if t == nil {
			return fmt.Errorf("param %q: missing", sl.name)
		}
		if !slices.Equal(t.Shape, sl.shape) || len(t.Data) != shapeSize(sl.shape) {
			return fmt.Errorf("param %q: shape %v with %d values, want shape %v", sl.name, t.Shape, len(t.Data), sl.shape)
		}
	}
	return nil
}

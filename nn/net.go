package nn

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/evolverl/evolve/internal/bufs"
	"github.com/evolverl/evolve/netconf"
)

// Net computes one network of a netconf.Spec in plain Go: encoder (MLP, CNN, LSTM, or one
// MLP or CNN per key of a Dict observation) → latent → head → output layer, forward for
// any number of rows and backward to every parameter's gradient.
//
// It computes what the gorgonia reference backend computes: Linear (y = x·W + b with W
// stored [in, out]), LayerNorm (eps 1e-5, biased variance), the seven activations with
// gorgonia's derivatives also at the kinks (ReLU, LeakyReLU and ELU take the positive
// branch at 0, so ReLU′(0) = 1 and ELU′(0) = 2), Conv2d (NCHW, no padding, flattened in
// C, H, W order into the latent), and PyTorch's LSTM (gates i, f, g, o).
//
// Weights are read in place from the Params handed to each call, so an optimizer that
// updates Data, or code that replaces a tensor's Data, is seen by the next call. Gradients
// are added into a Params laid out like the weights (netconf.Zeros gives one); the caller
// zeroes them. A Net keeps its intermediate values and outputs in buffers that grow to the
// largest row count seen and are reused: after a warm-up no call allocates. Returned slices
// are views of those buffers, valid until the next call of the same kind; the inputs handed
// to the forward calls are kept (not copied) for the backward pass and must not change
// before it.
//
// The network splits at the latent layer, so two heads can share one encoder: run
// ForwardEncoder once, ForwardHead on each head's Net with that latent, then BackwardHead
// on each, sum the latent gradients, and BackwardEncoder once. A Net is not safe for
// concurrent use.
//
// Every row (every sequence, for an LSTM) is computed by the same sequence of float32
// operations whatever the batch around it, so a row's outputs do not depend on the batch:
// acting on N rows and training on a minibatch give the same log-probabilities.
type Net struct {
	spec              netconf.Spec
	enc               encoder
	head              []denseLayer // the head's layers, then the output layer
	encRows, headRows int
	lat               []float32    // input of the last ForwardHead (caller's memory)
	dLat              []float32    // gradient of the latent, returned by BackwardHead
	ones              []float32    // ones, one per row, for the bias gradients
	dx                [2][]float32 // gradients between layers, used in turn
	pEnc, pHead       binding
	gEnc, gHead       binding
	ws                workspace
	oneStep           Recurrence // the default recurrence: one step from zeros
}

// Recurrence is the recurrent context of a forward pass through an LSTM encoder. The rows
// are time-major: step t of sequence s is row t·(rows/Steps) + s.
type Recurrence struct {
	// Steps is the number of time steps of every sequence.
	Steps int
	// State holds each sequence's initial state, Stride floats apart, this network's first:
	// layer by layer, h then c, Hidden floats each (StateSize in all). nil means zeros.
	// Final, if not nil, receives the state after the last step in the same layout; it may
	// be State itself.
	State, Final []float32
	Stride       int
	// Starts, if not nil, is [rows]: h and c of a sequence are zeroed before the step of a
	// row whose entry is not 0, as at an episode start.
	Starts []float32
}

// encoder is the part of a network before the head: it maps the input to the latent.
type encoder interface {
	// forward returns the latent [rows, width] of x.
	forward(b *binding, p netconf.Params, x []float32, rows int, rec *Recurrence) ([]float32, error)
	// backward adds the parameter gradients for the latent gradient dLat into grad.
	backward(b, gb *binding, p, grad netconf.Params, dLat []float32, w *workspace)
}

// workspace holds what the encoders' backward passes share.
type workspace struct {
	ones []float32
	dx   *[2][]float32
	rows int
}

// New returns a network for s.
func New(s netconf.Spec) (*Net, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	n := &Net{spec: s.Clone()}
	var err error
	if n.enc, err = newEncoder(s, &n.pEnc); err != nil {
		return nil, err
	}
	in := s.LatentWidth()
	n.head, in = appendMLP(n.head, "head", in, s.Head, &n.pHead)
	n.head = append(n.head, newDenseLayer("out", in, s.Output, false, "", &n.pHead))
	n.gEnc = binding{names: n.pEnc.names, sizes: n.pEnc.sizes}
	n.gHead = binding{names: n.pHead.names, sizes: n.pHead.sizes}
	return n, nil
}

func newEncoder(s netconf.Spec, b *binding) (encoder, error) {
	if s.Dict() {
		return newDictEncoder(s, b)
	}
	switch s.Encoder {
	case netconf.EncoderMLP:
		return newMLPEncoder("encoder.mlp", "latent", s.Input[0], *s.MLP, s.Latent.Size, s.Head.Activation, b), nil
	case netconf.EncoderCNN:
		return newCNNEncoder("encoder.cnn", "latent", s.Input, *s.CNN, s.Latent.Size, s.Head.Activation, b)
	case netconf.EncoderLSTM:
		return newLSTMEncoder("encoder.lstm", s.Input[0], *s.LSTM, s.Latent.Size, s.Head.Activation, b), nil
	}
	return nil, fmt.Errorf("nn: %s: unknown encoder %q", s, s.Encoder)
}

// Spec returns the spec the network was made for.
func (n *Net) Spec() netconf.Spec { return n.spec }

// StateSize is the number of floats of recurrent state per sequence: 2·layers·hidden for an
// LSTM encoder, else 0.
func (n *Net) StateSize() int {
	if n.spec.Encoder == netconf.EncoderLSTM && !n.spec.Dict() {
		return 2 * n.spec.LSTM.Layers * n.spec.LSTM.Hidden
	}
	return 0
}

// inputSize is the flat size of one input row.
func (n *Net) inputSize() int {
	size := 1
	for _, d := range n.spec.Input {
		size *= d
	}
	return size
}

// Forward runs the whole network on rows rows of x and returns the output [rows, output].
// rec is needed for an LSTM encoder only (nil: one step from a zero state).
func (n *Net) Forward(p netconf.Params, x []float32, rows int, rec *Recurrence) ([]float32, error) {
	lat, err := n.ForwardEncoder(p, x, rows, rec)
	if err != nil {
		return nil, err
	}
	return n.ForwardHead(p, lat, rows)
}

// ForwardEncoder runs the encoder and the latent layer (with the head's activation) on x
// [rows, input] (NCHW images for a CNN) and returns the latent [rows, latent width]. p needs
// the "encoder." and "latent." tensors.
func (n *Net) ForwardEncoder(p netconf.Params, x []float32, rows int, rec *Recurrence) ([]float32, error) {
	if err := n.pEnc.resolve(p); err != nil {
		return nil, err
	}
	in := n.inputSize()
	if rows < 1 || len(x) < rows*in {
		return nil, fmt.Errorf("nn: %d input values for %d rows of %d", len(x), rows, in)
	}
	if n.StateSize() > 0 {
		if rec == nil {
			n.oneStep = Recurrence{Steps: 1}
			rec = &n.oneStep
		}
		if rec.Steps < 1 || rows%rec.Steps != 0 {
			return nil, fmt.Errorf("nn: %d rows do not split into sequences of %d steps", rows, rec.Steps)
		}
		need := (rows/rec.Steps-1)*rec.Stride + n.StateSize()
		if rec.State != nil && (len(rec.State) < need || rec.Stride < n.StateSize()) {
			return nil, fmt.Errorf("nn: recurrent state of %d values with stride %d for %d sequences of %d", len(rec.State), rec.Stride, rows/rec.Steps, n.StateSize())
		}
		if rec.Starts != nil && len(rec.Starts) < rows {
			return nil, fmt.Errorf("nn: %d episode starts for %d rows", len(rec.Starts), rows)
		}
		if rec.Final != nil && (len(rec.Final) < need || rec.Stride < n.StateSize()) {
			return nil, fmt.Errorf("nn: final state of %d values with stride %d for %d sequences of %d", len(rec.Final), rec.Stride, rows/rec.Steps, n.StateSize())
		}
	}
	lat, err := n.enc.forward(&n.pEnc, p, x[:rows*in], rows, rec)
	if err != nil {
		return nil, err
	}
	n.encRows = rows
	return lat, nil
}

// ForwardHead runs the head and the output layer on a latent [rows, latent width] and
// returns the output [rows, output]. p needs the "head." and "out." tensors only.
func (n *Net) ForwardHead(p netconf.Params, latent []float32, rows int) ([]float32, error) {
	if err := n.pHead.resolve(p); err != nil {
		return nil, err
	}
	w := n.spec.LatentWidth()
	if rows < 1 || len(latent) < rows*w {
		return nil, fmt.Errorf("nn: %d latent values for %d rows of %d", len(latent), rows, w)
	}
	n.lat, n.headRows = latent[:rows*w], rows
	return forwardLayers(n.head, &n.pHead, p, n.lat, rows), nil
}

// errNoForward is returned by a backward call that has no matching forward pass.
var errNoForward = errors.New("nn: backward pass without a matching forward pass")

// Backward adds the gradient of every parameter for dOut [rows, output], the gradient of
// the output of the last Forward, into grad.
func (n *Net) Backward(p, grad netconf.Params, dOut []float32) error {
	dl, err := n.BackwardHead(p, grad, dOut)
	if err != nil {
		return err
	}
	return n.BackwardEncoder(p, grad, dl)
}

// BackwardHead adds the gradients of the head's and the output layer's parameters into grad
// and returns the gradient of the latent [rows, latent width], after ForwardHead.
func (n *Net) BackwardHead(p, grad netconf.Params, dOut []float32) ([]float32, error) {
	rows := n.headRows
	if rows == 0 {
		return nil, errNoForward
	}
	if len(dOut) < rows*n.spec.Output {
		return nil, fmt.Errorf("nn: %d output gradients for %d rows of %d", len(dOut), rows, n.spec.Output)
	}
	if err := n.pHead.resolve(p); err != nil {
		return nil, err
	}
	if err := n.gHead.resolve(grad); err != nil {
		return nil, fmt.Errorf("gradient: %w", err)
	}
	n.dLat = bufs.Grow(n.dLat, rows*n.spec.LatentWidth())
	n.setOnes(rows)
	backwardLayers(n.head, &n.pHead, &n.gHead, p, grad, n.lat, dOut[:rows*n.spec.Output], n.dLat, &n.dx, n.ones, rows)
	return n.dLat, nil
}

// BackwardEncoder adds the gradients of the encoder's and the latent layer's parameters into
// grad, given the gradient of the latent dLatent [rows, latent width], after ForwardEncoder.
// No gradient flows into the initial recurrent state.
func (n *Net) BackwardEncoder(p, grad netconf.Params, dLatent []float32) error {
	rows := n.encRows
	if rows == 0 {
		return errNoForward
	}
	if w := n.spec.LatentWidth(); len(dLatent) < rows*w {
		return fmt.Errorf("nn: %d latent gradients for %d rows of %d", len(dLatent), rows, w)
	}
	if err := n.pEnc.resolve(p); err != nil {
		return err
	}
	if err := n.gEnc.resolve(grad); err != nil {
		return fmt.Errorf("gradient: %w", err)
	}
	n.setOnes(rows)
	n.ws = workspace{ones: n.ones, dx: &n.dx, rows: rows}
	n.enc.backward(&n.pEnc, &n.gEnc, p, grad, dLatent[:rows*n.spec.LatentWidth()], &n.ws)
	return nil
}

// setOnes makes n.ones at least rows ones long.
func (n *Net) setOnes(rows int) {
	for len(n.ones) < rows {
		n.ones = append(n.ones, 1)
	}
}

// mlpEncoder is an MLP and the latent layer.
type mlpEncoder struct {
	layers []denseLayer
	x      []float32
}

func newMLPEncoder(prefix, latent string, in int, m netconf.MLP, size int, act netconf.Activation, b *binding) *mlpEncoder {
	e := &mlpEncoder{}
	e.layers, in = appendMLP(nil, prefix, in, m, b)
	e.layers = append(e.layers, newDenseLayer(latent, in, size, false, act, b))
	return e
}

func (e *mlpEncoder) forward(b *binding, p netconf.Params, x []float32, rows int, _ *Recurrence) ([]float32, error) {
	e.x = x
	return forwardLayers(e.layers, b, p, x, rows), nil
}

func (e *mlpEncoder) backward(b, gb *binding, p, grad netconf.Params, dLat []float32, w *workspace) {
	backwardLayers(e.layers, b, gb, p, grad, e.x, dLat, nil, w.dx, w.ones, w.rows)
}

// cnnEncoder is a stack of convolutions, each followed by the activation, flattened (C, H,
// W) into the latent layer.
type cnnEncoder struct {
	convs  []*Conv2d
	w, b   []int // tensor slots of each convolution's weight and bias
	act    netconf.Activation
	z, y   [][]float32 // per convolution: its output before and after the activation
	dz, dy [][]float32 // and their gradients
	latent denseLayer
	x      []float32
}

func newCNNEncoder(prefix, latent string, input []int, c netconf.CNN, size int, act netconf.Activation, b *binding) (*cnnEncoder, error) {
	e := &cnnEncoder{act: c.Activation}
	ch, h, w := input[0], input[1], input[2]
	for i, out := range c.Channels {
		k, s := c.Kernels[i], c.Strides[i]
		if k > h || k > w {
			return nil, fmt.Errorf("nn: %s.%d: kernel %d does not fit a %d×%d input", prefix, i, k, h, w)
		}
		conv := NewConv2d(ch, out, k, s, h, w)
		name := prefix + "." + strconv.Itoa(i)
		e.convs = append(e.convs, conv)
		e.w = append(e.w, b.add(name+".weight", out*ch*k*k))
		e.b = append(e.b, b.add(name+".bias", out))
		ch, h, w = out, conv.OH, conv.OW
	}
	n := len(c.Channels)
	e.z, e.y, e.dz, e.dy = make([][]float32, n), make([][]float32, n), make([][]float32, n), make([][]float32, n)
	e.latent = newDenseLayer(latent, ch*h*w, size, false, act, b)
	return e, nil
}

func (e *cnnEncoder) forward(b *binding, p netconf.Params, x []float32, rows int, _ *Recurrence) ([]float32, error) {
	e.x = x
	in := x
	for i, c := range e.convs {
		size := rows * c.Out * c.OH * c.OW
		e.z[i], e.y[i] = bufs.Grow(e.z[i], size), bufs.Grow(e.y[i], size)
		c.Forward(e.z[i], in, b.data(p, e.w[i]), b.data(p, e.b[i]), rows)
		activate(e.act, e.z[i], e.y[i])
		in = e.y[i]
	}
	return e.latent.forward(b, p, in, rows), nil
}

func (e *cnnEncoder) backward(b, gb *binding, p, grad netconf.Params, dLat []float32, w *workspace) {
	rows := w.rows
	last := len(e.convs) - 1
	e.dy[last] = bufs.Grow(e.dy[last], len(e.y[last]))
	e.latent.backward(b, gb, p, grad, e.y[last], dLat, e.dy[last], w.ones, rows)
	for i := last; i >= 0; i-- {
		c := e.convs[i]
		e.dz[i] = bufs.Grow(e.dz[i], len(e.z[i]))
		activateGrad(e.act, e.z[i], e.y[i], e.dy[i], e.dz[i])
		in, dIn := e.x, []float32(nil)
		if i > 0 {
			in = e.y[i-1]
			e.dy[i-1] = bufs.Grow(e.dy[i-1], len(in))
			dIn = e.dy[i-1]
		}
		c.Backward(dIn, gb.data(grad, e.w[i]), gb.data(grad, e.b[i]), e.dz[i], in, b.data(p, e.w[i]), rows)
	}
}

// lstmEncoder is a stacked LSTM and the latent layer on the top layer's output.
type lstmEncoder struct {
	layers []*LSTMLayer
	slots  [][4][4]int // per layer and gate: w_ih, w_hh, b_ih, b_hh
	hidden int
	y, dy  [][]float32 // per layer: h at every step, and its gradient
	h0, c0 [][]float32 // per layer: the initial state [batch, hidden]
	hT, cT [][]float32 // per layer: the final state
	latent denseLayer
	x      []float32
}

func newLSTMEncoder(prefix string, in int, m netconf.LSTM, size int, act netconf.Activation, b *binding) *lstmEncoder {
	e := &lstmEncoder{hidden: m.Hidden}
	gates := netconf.LSTMGates()
	for l := range m.Layers {
		name := prefix + "." + strconv.Itoa(l)
		var s [4][4]int
		for q, g := range gates {
			s[0][q] = b.add(name+".w_ih."+g, in*m.Hidden)
			s[1][q] = b.add(name+".w_hh."+g, m.Hidden*m.Hidden)
			s[2][q] = b.add(name+".b_ih."+g, m.Hidden)
			s[3][q] = b.add(name+".b_hh."+g, m.Hidden)
		}
		e.layers = append(e.layers, NewLSTMLayer(in, m.Hidden))
		e.slots = append(e.slots, s)
		in = m.Hidden
	}
	n := m.Layers
	e.y, e.dy = make([][]float32, n), make([][]float32, n)
	e.h0, e.c0, e.hT, e.cT = make([][]float32, n), make([][]float32, n), make([][]float32, n), make([][]float32, n)
	e.latent = newDenseLayer("latent", m.Hidden, size, false, act, b)
	return e
}

// weights returns layer l's tensors in p.
func (e *lstmEncoder) weights(b *binding, p netconf.Params, l int) LSTMWeights {
	var w LSTMWeights
	s := e.slots[l]
	for q := range 4 {
		w.Wih[q], w.Whh[q], w.Bih[q], w.Bhh[q] = b.data(p, s[0][q]), b.data(p, s[1][q]), b.data(p, s[2][q]), b.data(p, s[3][q])
	}
	return w
}

func (e *lstmEncoder) forward(b *binding, p netconf.Params, x []float32, rows int, rec *Recurrence) ([]float32, error) {
	e.x = x
	steps := rec.Steps
	batch := rows / steps
	h := e.hidden
	in := x
	for l, layer := range e.layers {
		e.h0[l], e.c0[l] = bufs.Grow(e.h0[l], batch*h), bufs.Grow(e.c0[l], batch*h)
		e.hT[l], e.cT[l] = bufs.Grow(e.hT[l], batch*h), bufs.Grow(e.cT[l], batch*h)
		if rec.State == nil {
			clear(e.h0[l])
			clear(e.c0[l])
		} else {
			for s := range batch {
				off := s*rec.Stride + 2*l*h
				copy(e.h0[l][s*h:(s+1)*h], rec.State[off:off+h])
				copy(e.c0[l][s*h:(s+1)*h], rec.State[off+h:off+2*h])
			}
		}
		e.y[l] = bufs.Grow(e.y[l], rows*h)
		layer.Forward(e.y[l], in, steps, batch, e.h0[l], e.c0[l], rec.Starts, e.hT[l], e.cT[l], e.weights(b, p, l))
		in = e.y[l]
	}
	if rec.Final != nil {
		for l := range e.layers {
			for s := range batch {
				off := s*rec.Stride + 2*l*h
				copy(rec.Final[off:off+h], e.hT[l][s*h:(s+1)*h])
				copy(rec.Final[off+h:off+2*h], e.cT[l][s*h:(s+1)*h])
			}
		}
	}
	return e.latent.forward(b, p, in, rows), nil
}

func (e *lstmEncoder) backward(b, gb *binding, p, grad netconf.Params, dLat []float32, w *workspace) {
	top := len(e.layers) - 1
	e.dy[top] = bufs.Grow(e.dy[top], len(e.y[top]))
	e.latent.backward(b, gb, p, grad, e.y[top], dLat, e.dy[top], w.ones, w.rows)
	for l := top; l >= 0; l-- {
		in, dIn := e.x, []float32(nil)
		if l > 0 {
			in = e.y[l-1]
			e.dy[l-1] = bufs.Grow(e.dy[l-1], len(in))
			dIn = e.dy[l-1]
		}
		e.layers[l].Backward(dIn, e.dy[l], in, e.weights(b, p, l), e.weights(gb, grad, l))
	}
}

// dictEncoder runs one encoder (with its own latent layer) per key of a Dict observation on
// the key's columns of the flat input and concatenates the latents in key order.
type dictEncoder struct {
	keys  []dictKey
	width int       // the concatenated latent's width
	lat   []float32 // [rows, width]
	dLat  []float32 // one key's latent gradient, [rows, key width]
}

type dictKey struct {
	enc          encoder
	off, size    int // the key's columns of the flat input
	latOff, latW int // the key's columns of the concatenated latent
	x            []float32
}

func newDictEncoder(s netconf.Spec, b *binding) (*dictEncoder, error) {
	e := &dictEncoder{}
	off := 0
	for _, k := range s.Inputs {
		size := 1
		for _, d := range k.Input {
			size *= d
		}
		prefix := "encoder." + k.Key + "." + string(k.Encoder)
		latent := "latent." + k.Key
		key := dictKey{off: off, size: size, latOff: e.width, latW: s.Latent.Size}
		switch k.Encoder {
		case netconf.EncoderMLP:
			key.enc = newMLPEncoder(prefix, latent, size, *k.MLP, s.Latent.Size, s.Head.Activation, b)
		case netconf.EncoderCNN:
			enc, err := newCNNEncoder(prefix, latent, k.Input, *k.CNN, s.Latent.Size, s.Head.Activation, b)
			if err != nil {
				return nil, fmt.Errorf("key %q: %w", k.Key, err)
			}
			key.enc = enc
		default:
			return nil, fmt.Errorf("nn: key %q: encoder %q cannot read a dict key", k.Key, k.Encoder)
		}
		e.keys = append(e.keys, key)
		off += size
		e.width += s.Latent.Size
	}
	return e, nil
}

func (e *dictEncoder) forward(b *binding, p netconf.Params, x []float32, rows int, rec *Recurrence) ([]float32, error) {
	total := len(x) / rows
	e.lat = bufs.Grow(e.lat, rows*e.width)
	for i := range e.keys {
		k := &e.keys[i]
		k.x = bufs.Grow(k.x, rows*k.size)
		for r := range rows {
			copy(k.x[r*k.size:(r+1)*k.size], x[r*total+k.off:r*total+k.off+k.size])
		}
		lat, err := k.enc.forward(b, p, k.x, rows, rec)
		if err != nil {
			return nil, err
		}
		for r := range rows {
			copy(e.lat[r*e.width+k.latOff:r*e.width+k.latOff+k.latW], lat[r*k.latW:(r+1)*k.latW])
		}
	}
	return e.lat, nil
}

func (e *dictEncoder) backward(b, gb *binding, p, grad netconf.Params, dLat []float32, w *workspace) {
	rows := w.rows
	for i := range e.keys {
		k := &e.keys[i]
		e.dLat = bufs.Grow(e.dLat, rows*k.latW)
		for r := range rows {
			copy(e.dLat[r*k.latW:(r+1)*k.latW], dLat[r*e.width+k.latOff:r*e.width+k.latOff+k.latW])
		}
		k.enc.backward(b, gb, p, grad, e.dLat, w)
	}
}

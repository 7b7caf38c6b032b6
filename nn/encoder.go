package nn

import (
	"fmt"
	"strconv"

	"github.com/evolverl/evolve/internal/bufs"
	"github.com/evolverl/evolve/netconf"
)

// encoder is the part of a network before the head: it maps the input to the latent.
type encoder interface {
	// forward returns the latent [rows, width] of x.
	forward(b *binding, p netconf.Params, x []float32, rows int, rec *Recurrence) ([]float32, error)
	// backward adds the parameter gradients for the latent gradient dLat into grad.
	backward(b, gb *binding, p, grad netconf.Params, dLat []float32, w *workspace)
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
	case netconf.EncoderLSTM, netconf.EncoderGRU:
		return newRecurrentEncoder(s.Encoder, s.Input[0], *s.Memory(), s.Latent.Size, s.Head.Activation, b), nil
	case netconf.EncoderTransformer:
		return newTransformerEncoder(s.Input[0], *s.Transformer, s.Latent.Size, s.Head.Activation, b), nil
	}
	return nil, fmt.Errorf("nn: %s: unknown encoder %q", s, s.Encoder)
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

// recurrentEncoder is a stacked LSTM or GRU and the latent layer on the top layer's output.
type recurrentEncoder struct {
	lstm   []*LSTMLayer // the layers of an LSTM, or
	gru    []*GRULayer  // those of a GRU
	slots  [][4][4]int  // per layer: w_ih, w_hh, b_ih, b_hh, each per gate
	hidden int
	states int         // state vectors per layer: h and c for an LSTM, h for a GRU
	y, dy  [][]float32 // per layer: h at every step, and its gradient
	h0, c0 [][]float32 // per layer: the initial state [batch, hidden] (c0: LSTM only)
	hT, cT [][]float32 // per layer: the final state
	latent denseLayer
	x      []float32
}

func newRecurrentEncoder(kind netconf.EncoderKind, in int, m netconf.LSTM, size int, act netconf.Activation, b *binding) *recurrentEncoder {
	e := &recurrentEncoder{hidden: m.Hidden, states: 2}
	if kind == netconf.EncoderGRU {
		e.states = 1
	}
	prefix := "encoder." + string(kind)
	for l := range m.Layers {
		name := prefix + "." + strconv.Itoa(l)
		var s [4][4]int
		for q, g := range netconf.Gates(kind) {
			s[0][q] = b.add(name+".w_ih."+g, in*m.Hidden)
			s[1][q] = b.add(name+".w_hh."+g, m.Hidden*m.Hidden)
			s[2][q] = b.add(name+".b_ih."+g, m.Hidden)
			s[3][q] = b.add(name+".b_hh."+g, m.Hidden)
		}
		if kind == netconf.EncoderGRU {
			e.gru = append(e.gru, NewGRULayer(in, m.Hidden))
		} else {
			e.lstm = append(e.lstm, NewLSTMLayer(in, m.Hidden))
		}
		e.slots = append(e.slots, s)
		in = m.Hidden
	}
	n := m.Layers
	e.y, e.dy = make([][]float32, n), make([][]float32, n)
	e.h0, e.c0, e.hT, e.cT = make([][]float32, n), make([][]float32, n), make([][]float32, n), make([][]float32, n)
	e.latent = newDenseLayer("latent", m.Hidden, size, false, act, b)
	return e
}

// lstmWeights returns LSTM layer l's tensors in p.
func (e *recurrentEncoder) lstmWeights(b *binding, p netconf.Params, l int) LSTMWeights {
	var w LSTMWeights
	s := e.slots[l]
	for q := range 4 {
		w.Wih[q], w.Whh[q], w.Bih[q], w.Bhh[q] = b.data(p, s[0][q]), b.data(p, s[1][q]), b.data(p, s[2][q]), b.data(p, s[3][q])
	}
	return w
}

// gruWeights returns GRU layer l's tensors in p.
func (e *recurrentEncoder) gruWeights(b *binding, p netconf.Params, l int) GRUWeights {
	var w GRUWeights
	s := e.slots[l]
	for q := range 3 {
		w.Wih[q], w.Whh[q], w.Bih[q], w.Bhh[q] = b.data(p, s[0][q]), b.data(p, s[1][q]), b.data(p, s[2][q]), b.data(p, s[3][q])
	}
	return w
}

func (e *recurrentEncoder) forward(b *binding, p netconf.Params, x []float32, rows int, rec *Recurrence) ([]float32, error) {
	e.x = x
	steps := rec.Steps
	batch := rows / steps
	h, k := e.hidden, e.states
	in := x
	for l := range e.slots {
		e.h0[l], e.hT[l] = bufs.Grow(e.h0[l], batch*h), bufs.Grow(e.hT[l], batch*h)
		if k == 2 {
			e.c0[l], e.cT[l] = bufs.Grow(e.c0[l], batch*h), bufs.Grow(e.cT[l], batch*h)
		}
		if rec.State == nil {
			clear(e.h0[l])
			clear(e.c0[l])
		} else {
			for s := range batch {
				off := s*rec.Stride + k*l*h
				copy(e.h0[l][s*h:(s+1)*h], rec.State[off:off+h])
				if k == 2 {
					copy(e.c0[l][s*h:(s+1)*h], rec.State[off+h:off+2*h])
				}
			}
		}
		e.y[l] = bufs.Grow(e.y[l], rows*h)
		if k == 2 {
			e.lstm[l].Forward(e.y[l], in, steps, batch, e.h0[l], e.c0[l], rec.Starts, e.hT[l], e.cT[l], e.lstmWeights(b, p, l))
		} else {
			e.gru[l].Forward(e.y[l], in, steps, batch, e.h0[l], rec.Starts, e.hT[l], e.gruWeights(b, p, l))
		}
		in = e.y[l]
	}
	if rec.Final != nil {
		for l := range e.slots {
			for s := range batch {
				off := s*rec.Stride + k*l*h
				copy(rec.Final[off:off+h], e.hT[l][s*h:(s+1)*h])
				if k == 2 {
					copy(rec.Final[off+h:off+2*h], e.cT[l][s*h:(s+1)*h])
				}
			}
		}
	}
	return e.latent.forward(b, p, in, rows), nil
}

func (e *recurrentEncoder) backward(b, gb *binding, p, grad netconf.Params, dLat []float32, w *workspace) {
	top := len(e.slots) - 1
	e.dy[top] = bufs.Grow(e.dy[top], len(e.y[top]))
	e.latent.backward(b, gb, p, grad, e.y[top], dLat, e.dy[top], w.ones, w.rows)
	for l := top; l >= 0; l-- {
		in, dIn := e.x, []float32(nil)
		if l > 0 {
			in = e.y[l-1]
			e.dy[l-1] = bufs.Grow(e.dy[l-1], len(in))
			dIn = e.dy[l-1]
		}
		if e.states == 2 {
			e.lstm[l].Backward(dIn, e.dy[l], in, e.lstmWeights(b, p, l), e.lstmWeights(gb, grad, l))
		} else {
			e.gru[l].Backward(dIn, e.dy[l], in, e.gruWeights(b, p, l), e.gruWeights(gb, grad, l))
		}
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

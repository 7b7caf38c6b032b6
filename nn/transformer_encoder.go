package nn

import (
	"strconv"

	"github.com/evolverl/evolve/internal/bufs"
	"github.com/evolverl/evolve/internal/simd"
	"github.com/evolverl/evolve/internal/window"
	"github.com/evolverl/evolve/netconf"
)

// transformerEncoder is a causal Transformer over a window of the last Context inputs of
// the episode, and the latent layer on the window's last position: every row computes its
// own window from the inputs before it, so a row's result depends only on those inputs,
// whether it is acted on one step at a time or trained in a sequence.
//
// Its recurrent state per sequence is the window without its newest position: the
// Context − 1 inputs before the step, oldest first, then how many of them belong to the
// episode (a float; a zero state has none). An episode start (Recurrence.Starts) drops the
// inputs before it.
type transformerEncoder struct {
	t          netconf.Transformer
	in         int
	embed, pos [2]int // slots: embedding weight and bias; positions (pos[0])
	layers     []*TransformerLayer
	weights    [][16]int // per layer: the slots in TransformerWeights' field order
	norm       [2]int    // the final LayerNorm's scale and shift
	latent     denseLayer

	win   []float32   // [rows, K, in]: each row's window of inputs
	first []int       // [rows]: each window's first valid position
	h     [][]float32 // per layer: its input [rows·K, D]; h[Layers] the top's output [rows, D]
	xhat  []float32   // [rows, D]
	rstd  []float32   // [rows]
	out   []float32   // [rows, D]: the encoder's output
	dOut  []float32   // [rows, D]
	dh    [2][]float32
}

func newTransformerEncoder(in int, t netconf.Transformer, size int, act netconf.Activation, b *binding) *transformerEncoder {
	const prefix = "encoder.transformer."
	D, F := t.Width, t.MLP
	e := &transformerEncoder{t: t, in: in}
	e.embed = [2]int{b.add(prefix+"embed.weight", in*D), b.add(prefix+"embed.bias", D)}
	e.pos[0] = b.add(prefix+"pos", t.Context*D)
	for l := range t.Layers {
		p := prefix + strconv.Itoa(l) + "."
		var s [16]int
		// The order of TransformerWeights' fields: Norm1W, Norm1B, Norm2W, Norm2B, Wq, Wk, Wv,
		// Wo, Bq, Bk, Bv, Bo, W1, B1, W2, B2.
		s[0], s[1] = b.add(p+"attn.norm.weight", D), b.add(p+"attn.norm.bias", D)
		s[4], s[8] = b.add(p+"attn.q.weight", D*D), b.add(p+"attn.q.bias", D)
		s[5], s[9] = b.add(p+"attn.k.weight", D*D), b.add(p+"attn.k.bias", D)
		s[6], s[10] = b.add(p+"attn.v.weight", D*D), b.add(p+"attn.v.bias", D)
		s[7], s[11] = b.add(p+"attn.out.weight", D*D), b.add(p+"attn.out.bias", D)
		s[2], s[3] = b.add(p+"mlp.norm.weight", D), b.add(p+"mlp.norm.bias", D)
		s[12], s[13] = b.add(p+"mlp.0.weight", D*F), b.add(p+"mlp.0.bias", F)
		s[14], s[15] = b.add(p+"mlp.1.weight", F*D), b.add(p+"mlp.1.bias", D)
		e.weights = append(e.weights, s)
		e.layers = append(e.layers, NewTransformerLayer(D, t.Heads, F))
	}
	e.norm = [2]int{b.add(prefix+"norm.weight", D), b.add(prefix+"norm.bias", D)}
	e.h = make([][]float32, t.Layers+1)
	e.latent = newDenseLayer("latent", D, size, false, act, b)
	return e
}

// layerWeights returns layer l's tensors in p.
func (e *transformerEncoder) layerWeights(b *binding, p netconf.Params, l int) TransformerWeights {
	s := e.weights[l]
	d := func(i int) []float32 { return b.data(p, s[i]) }
	return TransformerWeights{Norm1W: d(0), Norm1B: d(1), Norm2W: d(2), Norm2B: d(3),
		Wq: d(4), Wk: d(5), Wv: d(6), Wo: d(7), Bq: d(8), Bk: d(9), Bv: d(10), Bo: d(11),
		W1: d(12), B1: d(13), W2: d(14), B2: d(15)}
}

func (e *transformerEncoder) forward(b *binding, p netconf.Params, x []float32, rows int, rec *Recurrence) ([]float32, error) {
	K, D, in := e.t.Context, e.t.Width, e.in
	steps := rec.Steps
	batch := rows / steps
	e.win = bufs.Grow(e.win, rows*K*in)
	if cap(e.first) < rows {
		e.first = make([]int, rows)
	}
	e.first = e.first[:rows]
	window.Fill(e.win, e.first, x, rec.State, rec.Stride, rec.Starts, K, in, steps, batch)
	if rec.Final != nil {
		window.Final(rec.Final, rec.Stride, e.win, e.first, K, in, steps, batch)
	}
	// The embedding of every position: win·We + be + pos.
	h := bufs.Grow(e.h[0], rows*K*D)
	e.h[0] = h
	we, be, pos := b.data(p, e.embed[0]), b.data(p, e.embed[1]), b.data(p, e.pos[0])
	for r := range rows {
		for j := range K {
			row := h[(r*K+j)*D : (r*K+j+1)*D]
			copy(row, be)
			for i, v := range pos[j*D : (j+1)*D] {
				row[i] += v
			}
		}
	}
	simd.MatMulAdd(h, D, e.win, in, 1, we, D, rows*K, D, in)
	// Only the windows' last positions leave the encoder, so the top layer computes
	// only theirs: [rows, D].
	top := len(e.layers) - 1
	for l, layer := range e.layers {
		if l == top {
			e.h[l+1] = bufs.Grow(e.h[l+1], rows*D)
			layer.ForwardLast(e.h[l+1], e.h[l], rows, K, e.first, e.layerWeights(b, p, l))
			break
		}
		e.h[l+1] = bufs.Grow(e.h[l+1], rows*K*D)
		layer.Forward(e.h[l+1], e.h[l], rows, K, e.first, e.layerWeights(b, p, l))
	}
	// The final LayerNorm.
	e.xhat = bufs.Grow(e.xhat, rows*D)
	e.rstd, e.out = bufs.Grow(e.rstd, rows), bufs.Grow(e.out, rows*D)
	layerNormForward(e.h[top+1], e.xhat, e.rstd, e.out, b.data(p, e.norm[0]), b.data(p, e.norm[1]), rows, D)
	return e.latent.forward(b, p, e.out, rows), nil
}

func (e *transformerEncoder) backward(b, gb *binding, p, grad netconf.Params, dLat []float32, w *workspace) {
	K, D, in := e.t.Context, e.t.Width, e.in
	rows := len(e.first)
	e.dOut = bufs.Grow(e.dOut, rows*D)
	e.latent.backward(b, gb, p, grad, e.out, dLat, e.dOut, w.ones, w.rows)
	layerNormBackward(e.dOut, e.xhat, e.rstd, b.data(p, e.norm[0]), gb.data(grad, e.norm[0]), gb.data(grad, e.norm[1]), rows, D)
	// The top layer takes the gradient of its last positions, [rows, D].
	dz := e.dOut
	for l := len(e.layers) - 1; l >= 0; l-- {
		// Layers alternate between the two buffers: dz is the one above's dx.
		dx := bufs.Grow(e.dh[l%2], rows*K*D)
		e.dh[l%2] = dx
		e.layers[l].Backward(dx, dz, e.h[l], e.layerWeights(b, p, l), e.layerWeights(gb, grad, l))
		dz = dx
	}
	// The embedding: dWe += winᵀ·dz, dbe and dpos the sums over rows and windows.
	simd.MatMulAdd(gb.data(grad, e.embed[0]), D, e.win, 1, in, dz, D, in, D, rows*K)
	dbe, dpos := gb.data(grad, e.embed[1]), gb.data(grad, e.pos[0])
	for r := range rows {
		for j := range K {
			row := dz[(r*K+j)*D : (r*K+j+1)*D]
			for i, v := range row {
				dbe[i] += v
				dpos[j*D+i] += v
			}
		}
	}
}

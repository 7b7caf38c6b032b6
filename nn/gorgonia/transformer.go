package gorgonia

import (
	"fmt"
	"math"
	"strconv"

	"github.com/evolverl/evolve/internal/window"
	"github.com/evolverl/evolve/netconf"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Windows are a Transformer encoder's inputs, which the backend fills before every run
// (package internal/window assembles them from the batch and the carried state, as the
// plain-Go backend does): Win [Rows·K, In] holds each row's window of inputs, Mask
// [Rows·K, K] whether each query position may attend each key (0, or −1e9 where not).
type Windows struct {
	K, In, Rows int
	Win, Mask   *G.Node
}

// transformer adds the Transformer encoder of t over the windows of rows rows of in inputs
// and returns its output [rows, width] (the final LayerNorm of each window's last
// position) with the window inputs. Per window and head the attention is written out in
// matrix products and a softmax of Exp and Sum (the mask's −1e9 makes a key's weight 0;
// LogSoftMax is avoided, see GORGONIA.md).
func (b *builder) transformer(prefix string, t netconf.Transformer, in, rows int) (*G.Node, *Windows, error) {
	K, D := t.Context, t.Width
	w := &Windows{K: K, In: in, Rows: rows, Win: b.input(prefix+".windows", rows*K, in), Mask: b.input(prefix+".mask", rows*K, K)}
	h, err := b.dense(w.Win, prefix+".embed")
	if err != nil {
		return nil, nil, err
	}
	pos, err := b.param(prefix+".pos", K, D)
	if err != nil {
		return nil, nil, err
	}
	// Position j of every window: a constant one-hot [rows·K, K] times pos.
	onehot := make([]float64, rows*K*K)
	for r := range rows * K {
		onehot[r*K+r%K] = 1
	}
	pw, err := G.Mul(b.matrix(onehot, rows*K, K), pos)
	if err != nil {
		return nil, nil, err
	}
	if h, err = G.Add(h, pw); err != nil {
		return nil, nil, err
	}
	for l := range t.Layers {
		if h, err = b.transformerLayer(h, w, prefix+"."+strconv.Itoa(l)+".", t); err != nil {
			return nil, nil, fmt.Errorf("%s layer %d: %w", prefix, l, err)
		}
	}
	// Each window's last position: a constant selector [rows, rows·K] times h.
	sel := make([]float64, rows*rows*K)
	for r := range rows {
		sel[r*rows*K+r*K+K-1] = 1
	}
	last, err := G.Mul(b.matrix(sel, rows, rows*K), h)
	if err != nil {
		return nil, nil, err
	}
	out, err := b.layerNorm(last, prefix+".norm")
	return out, w, err
}

// transformerLayer adds one pre-LayerNorm layer on h [rows·K, D].
func (b *builder) transformerLayer(h *G.Node, w *Windows, p string, t netconf.Transformer) (*G.Node, error) {
	a, err := b.layerNorm(h, p+"attn.norm")
	if err != nil {
		return nil, err
	}
	var qkv [3]*G.Node
	for i, n := range []string{"attn.q", "attn.k", "attn.v"} {
		if qkv[i], err = b.dense(a, p+n); err != nil {
			return nil, err
		}
	}
	o, err := b.attention(qkv, w, t)
	if err != nil {
		return nil, err
	}
	if o, err = b.dense(o, p+"attn.out"); err != nil {
		return nil, err
	}
	if h, err = G.Add(h, o); err != nil {
		return nil, err
	}
	c, err := b.layerNorm(h, p+"mlp.norm")
	if err != nil {
		return nil, err
	}
	if c, err = b.dense(c, p+"mlp.0"); err != nil {
		return nil, err
	}
	if c, err = b.act(c, netconf.ReLU); err != nil {
		return nil, err
	}
	if c, err = b.dense(c, p+"mlp.1"); err != nil {
		return nil, err
	}
	return G.Add(h, c)
}

// attention adds the masked multi-head attention of q, k, v [rows·K, D], window by window
// and head by head, and returns the heads' outputs side by side, [rows·K, D].
func (b *builder) attention(qkv [3]*G.Node, w *Windows, t netconf.Transformer) (*G.Node, error) {
	K, H := w.K, t.Heads
	dh := t.Width / H
	scale := b.constant(1/math.Sqrt(float64(dh)), K, K)
	windows := make(G.Nodes, w.Rows)
	for r := range w.Rows {
		mask, err := rows(w.Mask, r*K, (r+1)*K)
		if err != nil {
			return nil, err
		}
		heads := make(G.Nodes, H)
		for hd := range H {
			var part [3]*G.Node
			for i, x := range qkv {
				if part[i], err = block(x, r*K, (r+1)*K, hd*dh, (hd+1)*dh); err != nil {
					return nil, err
				}
			}
			kt, err := G.Transpose(part[1])
			if err != nil {
				return nil, err
			}
			s, err := G.Mul(part[0], kt)
			if err != nil {
				return nil, err
			}
			if s, err = G.HadamardProd(s, scale); err != nil {
				return nil, err
			}
			if s, err = G.Add(s, mask); err != nil {
				return nil, err
			}
			e, err := G.Exp(s)
			if err != nil {
				return nil, err
			}
			z, err := G.Sum(e, 1)
			if err != nil {
				return nil, err
			}
			if z, err = G.Reshape(z, tensor.Shape{K, 1}); err != nil {
				return nil, err
			}
			pr, err := G.BroadcastHadamardDiv(e, z, nil, []byte{1})
			if err != nil {
				return nil, err
			}
			if heads[hd], err = G.Mul(pr, part[2]); err != nil {
				return nil, err
			}
		}
		if windows[r], err = concat(1, heads); err != nil {
			return nil, err
		}
	}
	return concat(0, windows)
}

// block returns rows [r0, r1) and columns [c0, c1) of the matrix x as a matrix.
func block(x *G.Node, r0, r1, c0, c1 int) (*G.Node, error) {
	s, err := G.Slice(x, G.S(r0, r1), G.S(c0, c1))
	if err != nil {
		return nil, err
	}
	if s.Shape().Dims() != 2 {
		return G.Reshape(s, tensor.Shape{r1 - r0, c1 - c0})
	}
	return s, nil
}

// concat joins nodes along axis, or returns the one node.
func concat(axis int, ns G.Nodes) (*G.Node, error) {
	if len(ns) == 1 {
		return ns[0], nil
	}
	return G.Concat(axis, ns...)
}

// matrix adds a constant [r, c] of the builder's dtype holding data (row-major).
func (b *builder) matrix(data []float64, r, c int) *G.Node {
	if b.dt == tensor.Float32 {
		d := make([]float32, len(data))
		for i, x := range data {
			d[i] = float32(x)
		}
		return G.NewConstant(tensor.New(tensor.WithShape(r, c), tensor.WithBacking(d)))
	}
	return G.NewConstant(tensor.New(tensor.WithShape(r, c), tensor.WithBacking(append([]float64(nil), data...))))
}

// Fill assembles the windows of the batch x [Rows, In] (steps time-major steps of each
// sequence) from state (each sequence's carried state, stride floats apart; nil: none) and
// starts (nil: none), as the plain-Go backend does, writes them and the attention mask
// into the inputs, and writes each sequence's state after the batch into final unless it
// is nil (it may be state).
func (w *Windows) Fill(x, state []float32, stride int, starts []float32, steps int, final []float32) {
	K, in := w.K, w.In
	win := make([]float32, w.Rows*K*in)
	first := make([]int, w.Rows)
	window.Fill(win, first, x, state, stride, starts, K, in, steps, w.Rows/steps)
	mask := make([]float32, w.Rows*K*K)
	for r, f := range first {
		for i := range K {
			for j := range K {
				// A query attends first ≤ j ≤ i; one before first, itself (never read).
				if !(f <= j && j <= i || i < f && j == i) {
					mask[(r*K+i)*K+j] = -1e9
				}
			}
		}
	}
	setData(w.Win, win)
	setData(w.Mask, mask)
	if final != nil {
		window.Final(final, stride, win, first, K, in, steps, w.Rows/steps)
	}
}

// setData writes v into the input node n of either dtype.
func setData(n *G.Node, v []float32) {
	switch d := n.Value().Data().(type) {
	case []float32:
		copy(d, v)
	case []float64:
		for i, x := range v {
			d[i] = float64(x)
		}
	}
}

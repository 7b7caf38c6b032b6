package gorgonia

import (
	"fmt"
	"github.com/evolverl/evolve/netconf"
	"strconv"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// lstm adds the layers of m to x [Steps·Batch, in] (time-major) and returns the top layer's
// h at every step, [Steps·Batch, Hidden] in the same order, with the state inputs and
// outputs. It computes PyTorch's equations with gates in the order i, f, g, o:
//
//	i = σ(x·W_ii + b_ii + h·W_hi + b_hi)   (f, o alike; g with tanh)
//	c' = f∘c + i∘g,  h' = o∘tanh(c')
//
// and, before every step t, multiplies h and c of every layer by 1 − starts[t].
//
// It unrolls layer by layer rather than step by step: a layer's input projection for all
// steps is then one matrix product instead of Steps small ones. Each gate has its own
// matrices, which measured faster than one fused matrix plus slicing (GORGONIA.md).
func (b *builder) lstm(x *G.Node, prefix string, m netconf.LSTM) (*G.Node, *Recurrent, error) {
	r, keep, err := b.recurrence(prefix, m, x)
	if err != nil {
		return nil, nil, err
	}
	steps, batch, hid := r.Steps, r.Batch, r.Hidden
	for l := range m.Layers {
		p := prefix + "." + strconv.Itoa(l)
		in := x.Shape()[1]
		var proj, whh [4]*G.Node
		for q, gate := range netconf.LSTMGates() {
			wih, wh, bih, bhh, err := b.gate(p, gate, in, hid)
			if err != nil {
				return nil, nil, err
			}
			whh[q] = wh
			bsum, err := G.Add(bih, bhh)
			if err != nil {
				return nil, nil, err
			}
			xw, err := G.Mul(x, wih)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %v·%v: %w", p, x.Shape(), wih.Shape(), err)
			}
			if proj[q], err = G.BroadcastAdd(xw, bsum, nil, []byte{0}); err != nil {
				return nil, nil, err
			}
		}
		h := b.input(p+".h0", batch, hid)
		c := b.input(p+".c0", batch, hid)
		r.H0 = append(r.H0, h)
		r.C0 = append(r.C0, c)
		outs := make(G.Nodes, steps)
		for t := range steps {
			if h, err = G.HadamardProd(h, keep[t]); err != nil {
				return nil, nil, err
			}
			if c, err = G.HadamardProd(c, keep[t]); err != nil {
				return nil, nil, err
			}
			var a [4]*G.Node
			for q := range 4 {
				xt, err := rows(proj[q], t*batch, (t+1)*batch)
				if err != nil {
					return nil, nil, err
				}
				hw, err := G.Mul(h, whh[q])
				if err != nil {
					return nil, nil, err
				}
				if a[q], err = G.Add(xt, hw); err != nil {
					return nil, nil, err
				}
			}
			h, c, err = lstmCell(a, c)
			if err != nil {
				return nil, nil, fmt.Errorf("%s step %d: %w", p, t, err)
			}
			outs[t] = h
		}
		if steps == 1 {
			x = outs[0]
		} else if x, err = G.Concat(0, outs...); err != nil {
			return nil, nil, err
		}
		hv, cv := capture(h), capture(c)
		if b.dt == tensor.Float32 {
			r.H = append(r.H, hv)
			r.C = append(r.C, cv)
		}
	}
	return x, r, nil
}

// gate returns the parameter nodes of one gate of recurrent layer p: w_ih [in, hid],
// w_hh [hid, hid] and the biases b_ih, b_hh [1, hid].
func (b *builder) gate(p, gate string, in, hid int) (wih, whh, bih, bhh *G.Node, err error) {
	if wih, err = b.param(p+".w_ih."+gate, in, hid); err != nil {
		return
	}
	if whh, err = b.param(p+".w_hh."+gate, hid, hid); err != nil {
		return
	}
	if bih, err = b.param(p+".b_ih."+gate, 1, hid); err != nil {
		return
	}
	bhh, err = b.param(p+".b_hh."+gate, 1, hid)
	return
}

// recurrence returns the Recurrent of a stacked LSTM or GRU of m's sizes on the builder's
// steps of rows of x (its state nodes still empty), with its starts input, and per step the
// mask 1 − starts[t] expanded to [Batch, Hidden].
func (b *builder) recurrence(prefix string, m netconf.LSTM, x *G.Node) (*Recurrent, []*G.Node, error) {
	steps := b.opts.Steps
	batch := x.Shape()[0] / steps
	hid := m.Hidden
	r := &Recurrent{Layers: m.Layers, Hidden: hid, Batch: batch, Steps: steps}
	r.Starts = b.input(prefix+".starts", steps*batch, 1)
	keepAll, err := G.Sub(b.scalar(1), r.Starts)
	if err != nil {
		return nil, nil, err
	}
	// Expanded once to [Steps·Batch, Hidden] by an outer product with a row of ones, so each
	// step masks h and c with a plain elementwise product instead of a broadcast.
	ones := b.constant(1, 1, hid)
	if keepAll, err = G.Mul(keepAll, ones); err != nil {
		return nil, nil, err
	}
	keep := make([]*G.Node, steps)
	for t := range steps {
		if keep[t], err = rows(keepAll, t*batch, (t+1)*batch); err != nil {
			return nil, nil, err
		}
	}
	return r, keep, nil
}

// lstmCell returns h' and c' from the gate pre-activations a (i, f, g, o) and c.
func lstmCell(a [4]*G.Node, c *G.Node) (*G.Node, *G.Node, error) {
	i, err := G.Sigmoid(a[0])
	if err != nil {
		return nil, nil, err
	}
	f, err := G.Sigmoid(a[1])
	if err != nil {
		return nil, nil, err
	}
	g, err := G.Tanh(a[2])
	if err != nil {
		return nil, nil, err
	}
	o, err := G.Sigmoid(a[3])
	if err != nil {
		return nil, nil, err
	}
	fc, err := G.HadamardProd(f, c)
	if err != nil {
		return nil, nil, err
	}
	ig, err := G.HadamardProd(i, g)
	if err != nil {
		return nil, nil, err
	}
	if c, err = G.Add(fc, ig); err != nil {
		return nil, nil, err
	}
	tc, err := G.Tanh(c)
	if err != nil {
		return nil, nil, err
	}
	h, err := G.HadamardProd(o, tc)
	if err != nil {
		return nil, nil, err
	}
	return h, c, nil
}

// capture makes every run copy n's value into a slice it returns (nil for a float64 node).
// Reading n.Value() after a run is not safe for intermediate nodes: the tape machine may
// have reused their memory.
func capture(n *G.Node) []float32 {
	var d []float32
	var v tensor.Tensor
	if n.Dtype() == tensor.Float32 {
		d = make([]float32, n.Shape().TotalSize())
		v = tensor.New(tensor.WithShape(n.Shape()...), tensor.WithBacking(d))
	} else {
		v = tensor.New(tensor.WithShape(n.Shape()...), tensor.WithBacking(make([]float64, n.Shape().TotalSize())))
	}
	into := new(G.Value)
	*into = v
	G.Read(n, into)
	return d
}

package gorgonia

import (
	"fmt"
	"strconv"

	"github.com/evolverl/evolve/netconf"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// gru adds the layers of m to x [Steps·Batch, in] (time-major) and returns the top layer's
// h at every step, [Steps·Batch, Hidden] in the same order, with the state inputs and
// outputs (H0 and H; a GRU has no C). It computes PyTorch's equations with gates in the
// order r, z, n:
//
//	r = σ(x·W_ir + b_ir + h·W_hr + b_hr)   z alike
//	n = tanh(x·W_in + b_in + r∘(h·W_hn + b_hn)),  h' = n + z∘(h − n)
//
// and, before every step t, multiplies h of every layer by 1 − starts[t]. Like lstm, it
// unrolls layer by layer, the input parts of all steps one product per gate.
func (b *builder) gru(x *G.Node, prefix string, m netconf.GRU) (*G.Node, *Recurrent, error) {
	r, keep, err := b.recurrence(prefix, m, x)
	if err != nil {
		return nil, nil, err
	}
	steps, batch, hid := r.Steps, r.Batch, r.Hidden
	for l := range m.Layers {
		p := prefix + "." + strconv.Itoa(l)
		in := x.Shape()[1]
		var proj, whh, bhh [3]*G.Node
		for q, gate := range netconf.GRUGates() {
			wih, wh, bih, bh, err := b.gate(p, gate, in, hid)
			if err != nil {
				return nil, nil, err
			}
			whh[q], bhh[q] = wh, bh
			xw, err := G.Mul(x, wih)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %v·%v: %w", p, x.Shape(), wih.Shape(), err)
			}
			if proj[q], err = G.BroadcastAdd(xw, bih, nil, []byte{0}); err != nil {
				return nil, nil, err
			}
		}
		h := b.input(p+".h0", batch, hid)
		r.H0 = append(r.H0, h)
		outs := make(G.Nodes, steps)
		for t := range steps {
			if h, err = G.HadamardProd(h, keep[t]); err != nil {
				return nil, nil, err
			}
			var xi, hh [3]*G.Node
			for q := range 3 {
				if xi[q], err = rows(proj[q], t*batch, (t+1)*batch); err != nil {
					return nil, nil, err
				}
				hw, err := G.Mul(h, whh[q])
				if err != nil {
					return nil, nil, err
				}
				if hh[q], err = G.BroadcastAdd(hw, bhh[q], nil, []byte{0}); err != nil {
					return nil, nil, err
				}
			}
			if h, err = gruCell(xi, hh, h); err != nil {
				return nil, nil, fmt.Errorf("%s step %d: %w", p, t, err)
			}
			outs[t] = h
		}
		if steps == 1 {
			x = outs[0]
		} else if x, err = G.Concat(0, outs...); err != nil {
			return nil, nil, err
		}
		if hv := capture(h); b.dt == tensor.Float32 {
			r.H = append(r.H, hv)
		}
	}
	return x, r, nil
}

// gruCell returns h' from the input parts xi and hidden parts hh of the gates (r, z, n) and h.
func gruCell(xi, hh [3]*G.Node, h *G.Node) (*G.Node, error) {
	var err error
	var a [2]*G.Node // r, z
	for q := range 2 {
		if a[q], err = G.Add(xi[q], hh[q]); err != nil {
			return nil, err
		}
		if a[q], err = G.Sigmoid(a[q]); err != nil {
			return nil, err
		}
	}
	rn, err := G.HadamardProd(a[0], hh[2])
	if err != nil {
		return nil, err
	}
	n, err := G.Add(xi[2], rn)
	if err != nil {
		return nil, err
	}
	if n, err = G.Tanh(n); err != nil {
		return nil, err
	}
	d, err := G.Sub(h, n)
	if err != nil {
		return nil, err
	}
	if d, err = G.HadamardProd(a[1], d); err != nil {
		return nil, err
	}
	return G.Add(n, d)
}

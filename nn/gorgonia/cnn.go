package gorgonia

import (
	"fmt"
	"github.com/evolverl/evolve/netconf"
	"strconv"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// cnn adds the convolutions of c to the NCHW input x: unpadded convolution with bias →
// activation per layer, named prefix.{i}. The result is [rows, C, H, W].
func (b *builder) cnn(x *G.Node, prefix string, c netconf.CNN) (*G.Node, error) {
	for i, ch := range c.Channels {
		p := prefix + "." + strconv.Itoa(i)
		k, s := c.Kernels[i], c.Strides[i]
		in := x.Shape()[1]
		w, err := b.param(p+".weight", ch, in, k, k)
		if err != nil {
			return nil, err
		}
		bias, err := b.param(p+".bias", 1, ch)
		if err != nil {
			return nil, err
		}
		y, err := b.conv(x, w, bias, k, s)
		if err != nil {
			return nil, fmt.Errorf("%s: conv of %v with kernel %d stride %d: %w", p, x.Shape(), k, s, err)
		}
		if x, err = b.act(y, c.Activation); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// conv computes an unpadded convolution of the NCHW x with the [out, in, k, k] filter w plus
// bias [1, out], by im2col: every k×k patch becomes a row, one matrix product with the
// flattened filter gives [N·H'·W', out], and a transpose brings it back to NCHW.
//
// gorgonia's Conv2d does the same without a bias. Adding the bias here, to the 2-D product,
// is a row broadcast; adding it to Conv2d's 4-D output as a [1, C, 1, 1] broadcast measured
// 1.3–1.8× slower for a whole forward and backward pass (the 4-D broadcast tiles the bias
// and sums it back over three axes).
func (b *builder) conv(x, w, bias *G.Node, k, s int) (*G.Node, error) {
	cols, err := G.Im2Col(x, tensor.Shape{k, k}, tensor.Shape{0, 0}, tensor.Shape{s, s}, tensor.Shape{1, 1})
	if err != nil {
		return nil, err
	}
	cs := cols.Shape() // [N, H', W', C_in·k·k]
	n, h, wd, z := cs[0], cs[1], cs[2], cs[3]
	out := w.Shape()[0]
	patches, err := G.Reshape(cols, tensor.Shape{n * h * wd, z})
	if err != nil {
		return nil, err
	}
	wf, err := G.Reshape(w, tensor.Shape{out, z})
	if err != nil {
		return nil, err
	}
	wt, err := G.Transpose(wf)
	if err != nil {
		return nil, err
	}
	y, err := G.Mul(patches, wt)
	if err != nil {
		return nil, err
	}
	if y, err = G.BroadcastAdd(y, bias, nil, []byte{0}); err != nil {
		return nil, err
	}
	if y, err = G.Reshape(y, tensor.Shape{n, h, wd, out}); err != nil {
		return nil, err
	}
	return G.Transpose(y, 0, 3, 1, 2)
}

package gorgonia

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/evolverl/evolve/netconf"
)

// dictEncoders adds every key's encoder and latent layer (with the head's activation) on the
// columns of the flat input x [rows, total] that hold the key, and returns the latents
// concatenated, [rows, LatentWidth].
func (b *builder) dictEncoders(s netconf.Spec, x *G.Node) (*G.Node, error) {
	if err := wantShape(x, -1, s.Input[0]); err != nil {
		return nil, err
	}
	r := x.Shape()[0]
	lats := make([]*G.Node, 0, len(s.Inputs))
	off := 0
	for _, k := range s.Inputs {
		n := shapeSize(k.Input)
		part, err := columns(x, off, off+n)
		if err != nil {
			return nil, fmt.Errorf("key %q: columns %d to %d of the input: %w", k.Key, off, off+n, err)
		}
		off += n
		var enc *G.Node
		if k.Encoder == netconf.EncoderCNN {
			img, err := G.Reshape(part, tensor.Shape{r, k.Input[0], k.Input[1], k.Input[2]})
			if err != nil {
				return nil, fmt.Errorf("key %q: %w", k.Key, err)
			}
			if enc, err = b.cnn(img, k.EncoderPrefix(), *k.CNN); err == nil {
				enc, err = flatten(enc)
			}
			if err != nil {
				return nil, fmt.Errorf("key %q: %w", k.Key, err)
			}
		} else if enc, err = b.mlp(part, k.EncoderPrefix(), *k.MLP); err != nil {
			return nil, fmt.Errorf("key %q: %w", k.Key, err)
		}
		lat, err := b.dense(enc, k.LatentPrefix())
		if err == nil {
			lat, err = b.act(lat, s.Head.Activation)
		}
		if err != nil {
			return nil, fmt.Errorf("key %q latent: %w", k.Key, err)
		}
		lats = append(lats, lat)
	}
	if len(lats) == 1 {
		return lats[0], nil
	}
	return G.Concat(1, lats...)
}

// columns returns columns [from, to) of the matrix x as a matrix [rows, to-from].
func columns(x *G.Node, from, to int) (*G.Node, error) {
	if from == 0 && to == x.Shape()[1] {
		return x, nil
	}
	c, err := G.Slice(x, nil, G.S(from, to))
	if err != nil {
		return nil, err
	}
	if to-from == 1 || c.Shape().Dims() != 2 {
		return G.Reshape(c, tensor.Shape{x.Shape()[0], to - from})
	}
	return c, nil
}

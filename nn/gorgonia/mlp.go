package gorgonia

import (
	"fmt"
	"github.com/evolverl/evolve/netconf"
	"strconv"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// mlp adds the layers of m: Linear → [LayerNorm] → activation, named prefix.{i}.
func (b *builder) mlp(x *G.Node, prefix string, m netconf.MLP) (*G.Node, error) {
	var err error
	for i := range m.Hidden {
		p := prefix + "." + strconv.Itoa(i)
		if x, err = b.dense(x, p); err != nil {
			return nil, err
		}
		if m.LayerNorm {
			if x, err = b.layerNorm(x, p+".norm"); err != nil {
				return nil, fmt.Errorf("%s.norm: %w", p, err)
			}
		}
		if x, err = b.act(x, m.Activation); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// layerNorm normalises each row of x [rows, n] to zero mean and unit (biased) variance, then
// scales by prefix.weight and shifts by prefix.bias — PyTorch's LayerNorm(n).
func (b *builder) layerNorm(x *G.Node, prefix string) (*G.Node, error) {
	r, n := x.Shape()[0], x.Shape()[1]
	gamma, err := b.param(prefix+".weight", 1, n)
	if err != nil {
		return nil, err
	}
	beta, err := b.param(prefix+".bias", 1, n)
	if err != nil {
		return nil, err
	}
	rowMean := func(v *G.Node) (*G.Node, error) {
		m, err := G.Mean(v, 1)
		if err != nil {
			return nil, err
		}
		return G.Reshape(m, tensor.Shape{r, 1})
	}
	mu, err := rowMean(x)
	if err != nil {
		return nil, err
	}
	d, err := G.BroadcastSub(x, mu, nil, []byte{1})
	if err != nil {
		return nil, err
	}
	sq, err := G.Square(d)
	if err != nil {
		return nil, err
	}
	v, err := rowMean(sq)
	if err != nil {
		return nil, err
	}
	if v, err = G.Add(v, b.scalar(netconf.LayerNormEps)); err != nil {
		return nil, err
	}
	// Sqrt and a division, not InverseSqrt: gorgonia v0.9.18's InverseSqrt has a wrong
	// gradient (measured against finite differences).
	sd, err := G.Sqrt(v)
	if err != nil {
		return nil, err
	}
	y, err := G.BroadcastHadamardDiv(d, sd, nil, []byte{1})
	if err != nil {
		return nil, err
	}
	if y, err = G.BroadcastHadamardProd(y, gamma, nil, []byte{0}); err != nil {
		return nil, err
	}
	return G.BroadcastAdd(y, beta, nil, []byte{0})
}

package agent

import (
	"github.com/evolverl/evolve/netconf"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// newInput adds a float32 input of the given shape, backed by a zeroed
// slice that netconf.Data returns for writing.
func newInput(g *G.ExprGraph, name string, shape ...int) *G.Node {
	return netconf.NewInput(g, name, shape...)
}

// newScalar adds a float32 scalar input.
func newScalar(g *G.ExprGraph, name string) *G.Node {
	return G.NewScalar(g, tensor.Float32, G.WithName(name), G.WithValue(float32(0)))
}

// setScalar writes a scalar input.
func setScalar(n *G.Node, v float64) {
	if err := G.Let(n, float32(v)); err != nil {
		panic(err)
	}
}

// newConstOnes adds a constant vector of ones.
func newConstOnes(g *G.ExprGraph, n int) *G.Node {
	ones := make([]float32, n)
	for i := range ones {
		ones[i] = 1
	}
	return G.NewConstant(tensor.New(tensor.WithShape(n), tensor.WithBacking(ones)), G.WithName("ones"))
}

// paramNode adds a parameter node backed by data (no copy), for tensors the
// agent owns outside netconf.Params, such as a Gaussian's log-std.
func paramNode(g *G.ExprGraph, name string, data []float32) *G.Node {
	v := tensor.New(tensor.WithShape(len(data)), tensor.WithBacking(data))
	return G.NewVector(g, tensor.Float32, G.WithShape(len(data)), G.WithName(name), G.WithValue(v))
}

// relu-based elementwise helpers, differentiable where the branches differ.

// maxNodes returns max(a, b) = b + relu(a − b).
func maxNodes(a, b *G.Node) *G.Node {
	return must(G.Add(b, must(netconf.Rectify(must(G.Sub(a, b))))))
}

// clipNodes returns clip(x, lo, hi) = x − relu(x − hi) + relu(lo − x) for
// scalar nodes lo and hi.
func clipNodes(x, lo, hi *G.Node) *G.Node {
	above := must(netconf.Rectify(must(G.Sub(x, hi))))
	below := must(netconf.Rectify(must(G.Sub(lo, x))))
	return must(G.Add(must(G.Sub(x, above)), below))
}

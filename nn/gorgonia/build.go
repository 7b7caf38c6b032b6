package gorgonia

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/evolverl/evolve/netconf"
)

// ParamNode pairs a tensor of Params with the graph node that reads it. After a backward
// pass, Node.Grad() holds the gradient in the same layout as the tensor.
type ParamNode struct {
	Name string
	Node *G.Node
}

// Options tell a builder how to name and shape what it adds to a graph.
type Options struct {
	// Name prefixes every node the builder creates ("actor" gives "actor/encoder.mlp.0.weight").
	// Two networks in one graph need different names: gorgonia silently merges input nodes of
	// the same name, type and shape.
	Name string
	// Steps is the number of time steps an LSTM encoder unrolls over (0 means 1). Its input
	// holds Steps·Batch rows, time-major: row t·Batch + b is step t of sequence b. MLP and CNN
	// encoders treat every row independently and ignore Steps.
	Steps int
}

// Net is one network built into a graph. Its parameter nodes share their memory with the
// Params they were built from, so every graph built from the same Params — at any batch size —
// sees the same weights, and writing a tensor's Data changes them everywhere.
type Net struct {
	Spec   netconf.Spec
	Input  *G.Node // the caller's input node
	Latent *G.Node // [rows, s.LatentWidth()], after the latent layers' activation
	Out    *G.Node // [rows, output size], no activation; nil after BuildEncoder
	// Features is the output layer's input, [rows, s.FeatureWidth()]: the head's last
	// hidden layer, or Latent when the head has none; nil after BuildEncoder.
	Features *G.Node
	Params   []ParamNode // in layout order; pass Learnables to G.Grad
	// Recurrent is set for LSTM and GRU encoders: the state fed in and read out.
	Recurrent *Recurrent
	// Windows is set for a Transformer encoder: its windows of inputs, which the caller
	// fills before each run (it reads them instead of Input).
	Windows *Windows
}

// Learnables returns the parameter nodes, in layout order.
func (n *Net) Learnables() G.Nodes {
	ns := make(G.Nodes, len(n.Params))
	for i, p := range n.Params {
		ns[i] = p.Node
	}
	return ns
}

// Recurrent holds the LSTM or GRU state inputs and outputs of a graph. Reset semantics are
// those of the reference data: before step t, h (and an LSTM's c) of every layer is
// multiplied by 1 − starts, so an episode that starts at step t sees a zero state.
type Recurrent struct {
	Layers, Hidden, Batch, Steps int
	// Starts is an input [Steps·Batch, 1], time-major: 1 where an episode starts at that step,
	// else 0. Write it with Data(Starts).
	Starts *G.Node
	// H0 and C0 are inputs [Batch, Hidden] per layer: the state before the first step (C0
	// is nil for a GRU).
	H0, C0 []*G.Node
	// H and C are [Batch·Hidden] per layer: the state after the last step, copied out by
	// every run of the machine (G.Read), so they stay valid whatever the machine reuses.
	// Float32 graphs only.
	H, C [][]float32
}

// Data returns the []float32 behind a float32 node's value, for writing inputs in place and
// reading outputs without a copy. It panics if the node has no float32 tensor value.
func Data(n *G.Node) []float32 {
	if v := n.Value(); v != nil {
		if d, ok := v.Data().([]float32); ok {
			return d
		}
		panic(fmt.Sprintf("gorgonia.Data: node %v holds %T, want []float32", n.Name(), v.Data()))
	}
	panic(fmt.Sprintf("gorgonia.Data: node %v has no value", n.Name()))
}

// NewInput adds a float32 input node of the given shape, backed by a new zeroed slice that
// Data returns.
func NewInput(g *G.ExprGraph, name string, shape ...int) *G.Node {
	v := tensor.New(tensor.WithShape(shape...), tensor.WithBacking(make([]float32, shapeSize(shape))))
	return G.NewTensor(g, tensor.Float32, len(shape), G.WithShape(shape...), G.WithName(name), G.WithValue(v))
}

// Build adds the whole network s — encoder, latent, head, output layer — on top of the input
// node x to g, reading its weights from p. x is [rows, features] for MLP and LSTM encoders
// ([Steps·Batch, features] for an LSTM), NCHW [rows, C, H, W] for a CNN, and the flat
// observation [rows, total] for a Dict network, whose encoders read their keys' columns
// (an image key's columns in (C, H, W) order).
func Build(g *G.ExprGraph, s netconf.Spec, p netconf.Params, x *G.Node, opts Options) (*Net, error) {
	return newBuilder(g, tensor.Float32, p, opts).network(s, x, true)
}

// BuildEncoder adds the encoder and the latent layer only (Net.Out is nil). With
// BuildHead, an agent can put two heads on one encoder.
func BuildEncoder(g *G.ExprGraph, s netconf.Spec, p netconf.Params, x *G.Node, opts Options) (*Net, error) {
	return newBuilder(g, tensor.Float32, p, opts).network(s, x, false)
}

// BuildHead adds s's head and output layer on top of latent, [rows, s.LatentWidth()], and
// returns the output node and the parameter nodes it made. p needs only the "head." and
// "out." tensors.
func BuildHead(g *G.ExprGraph, s netconf.Spec, p netconf.Params, latent *G.Node, opts Options) (*G.Node, []ParamNode, error) {
	b := newBuilder(g, tensor.Float32, p, opts)
	if err := b.checkHead(s); err != nil {
		return nil, nil, err
	}
	_, out, err := b.head(s, latent)
	if err != nil {
		return nil, nil, fmt.Errorf("build %s head: %w", s, err)
	}
	return out, b.nodes, nil
}

// builder adds nodes to one graph. dt is Float32 for every exported builder; tests use
// Float64 (with copies of the weights) to check gradients against finite differences.
type builder struct {
	g     *G.ExprGraph
	dt    tensor.Dtype
	p     netconf.Params
	opts  Options
	nodes []ParamNode
}

func newBuilder(g *G.ExprGraph, dt tensor.Dtype, p netconf.Params, opts Options) *builder {
	if opts.Steps < 1 {
		opts.Steps = 1
	}
	return &builder{g: g, dt: dt, p: p, opts: opts}
}

func (b *builder) nodeName(name string) string {
	if b.opts.Name == "" {
		return name
	}
	return b.opts.Name + "/" + name
}

// checkHead validates s and that p holds every tensor of s's head and output layer with the
// right shape.
func (b *builder) checkHead(s netconf.Spec) error {
	l, err := netconf.Layout(s)
	if err != nil {
		return err
	}
	var need []netconf.TensorSpec
	for _, ts := range l {
		if strings.HasPrefix(ts.Name, "head.") || strings.HasPrefix(ts.Name, "out.") {
			need = append(need, ts)
		}
	}
	return b.p.CheckLayout(need)
}

func (b *builder) network(s netconf.Spec, x *G.Node, withHead bool) (*Net, error) {
	l, err := netconf.Layout(s)
	if err != nil {
		return nil, err
	}
	if err := b.p.CheckLayout(l); err != nil {
		return nil, err
	}
	if x.Dtype() != b.dt {
		return nil, fmt.Errorf("input %v: dtype %v, want %v", x.Name(), x.Dtype(), b.dt)
	}
	n := &Net{Spec: s, Input: x}
	if s.Dict() {
		if n.Latent, err = b.dictEncoders(s, x); err != nil {
			return nil, fmt.Errorf("build %s encoders: %w", s, err)
		}
		return b.finish(n, s, withHead)
	}
	var enc *G.Node
	switch s.Encoder {
	case netconf.EncoderMLP:
		if err := wantShape(x, -1, s.Input[0]); err != nil {
			return nil, err
		}
		enc, err = b.mlp(x, "encoder.mlp", *s.MLP)
	case netconf.EncoderCNN:
		if err := wantShape(x, -1, s.Input[0], s.Input[1], s.Input[2]); err != nil {
			return nil, err
		}
		enc, err = b.cnn(x, "encoder.cnn", *s.CNN)
		if err == nil {
			enc, err = flatten(enc)
		}
	case netconf.EncoderLSTM, netconf.EncoderGRU:
		if err := wantShape(x, -1, s.Input[0]); err != nil {
			return nil, err
		}
		if x.Shape()[0]%b.opts.Steps != 0 {
			return nil, fmt.Errorf("input %v: %d rows do not split into %d steps", x.Name(), x.Shape()[0], b.opts.Steps)
		}
		if s.Encoder == netconf.EncoderGRU {
			enc, n.Recurrent, err = b.gru(x, "encoder.gru", *s.GRU)
		} else {
			enc, n.Recurrent, err = b.lstm(x, "encoder.lstm", *s.LSTM)
		}
	case netconf.EncoderTransformer:
		if err := wantShape(x, -1, s.Input[0]); err != nil {
			return nil, err
		}
		enc, n.Windows, err = b.transformer("encoder.transformer", *s.Transformer, s.Input[0], x.Shape()[0])
	}
	if err != nil {
		return nil, fmt.Errorf("build %s encoder: %w", s, err)
	}
	if n.Latent, err = b.dense(enc, "latent"); err == nil {
		n.Latent, err = b.act(n.Latent, s.Head.Activation)
	}
	if err != nil {
		return nil, fmt.Errorf("build %s latent: %w", s, err)
	}
	return b.finish(n, s, withHead)
}

// finish adds the head (when withHead) on n.Latent and records the parameter nodes.
func (b *builder) finish(n *Net, s netconf.Spec, withHead bool) (*Net, error) {
	var err error
	if withHead {
		if n.Features, n.Out, err = b.head(s, n.Latent); err != nil {
			return nil, fmt.Errorf("build %s head: %w", s, err)
		}
	}
	n.Params = b.nodes
	return n, nil
}

// head adds the head's MLP and the output layer on latent and returns the MLP's output
// (the output layer's input) and the output.
func (b *builder) head(s netconf.Spec, latent *G.Node) (features, out *G.Node, err error) {
	if err := wantShape(latent, -1, s.LatentWidth()); err != nil {
		return nil, nil, err
	}
	if features, err = b.mlp(latent, "head", s.Head); err != nil {
		return nil, nil, err
	}
	out, err = b.dense(features, "out")
	return features, out, err
}

// wantShape checks a node's shape; -1 matches any size.
func wantShape(n *G.Node, dims ...int) error {
	s := n.Shape()
	ok := len(s) == len(dims)
	for i := 0; ok && i < len(dims); i++ {
		ok = dims[i] < 0 || s[i] == dims[i]
	}
	if !ok {
		want := make([]string, len(dims))
		for i, d := range dims {
			switch {
			case d >= 0:
				want[i] = strconv.Itoa(d)
			case i == 0:
				want[i] = "rows"
			default:
				want[i] = "any"
			}
		}
		return fmt.Errorf("node %v: shape %v, want (%s)", n.Name(), s, strings.Join(want, ", "))
	}
	return nil
}

// param adds the node for tensor name, viewed with shape (same number of values).
func (b *builder) param(name string, shape ...int) (*G.Node, error) {
	t := b.p.Tensor(name)
	if t == nil {
		return nil, fmt.Errorf("param %q: missing", name)
	}
	if shapeSize(shape) != len(t.Data) {
		return nil, fmt.Errorf("param %q: %d values, want shape %v", name, len(t.Data), shape)
	}
	var v tensor.Tensor
	if b.dt == tensor.Float32 {
		v = tensor.New(tensor.WithShape(shape...), tensor.WithBacking(t.Data))
	} else {
		d := make([]float64, len(t.Data))
		for i, x := range t.Data {
			d[i] = float64(x)
		}
		v = tensor.New(tensor.WithShape(shape...), tensor.WithBacking(d))
	}
	n := G.NewTensor(b.g, b.dt, len(shape), G.WithShape(shape...), G.WithName(b.nodeName(name)), G.WithValue(v))
	b.nodes = append(b.nodes, ParamNode{Name: name, Node: n})
	return n, nil
}

// input adds a zeroed input node of the builder's dtype.
func (b *builder) input(name string, shape ...int) *G.Node {
	var v tensor.Tensor
	if b.dt == tensor.Float32 {
		v = tensor.New(tensor.WithShape(shape...), tensor.WithBacking(make([]float32, shapeSize(shape))))
	} else {
		v = tensor.New(tensor.WithShape(shape...), tensor.WithBacking(make([]float64, shapeSize(shape))))
	}
	return G.NewTensor(b.g, b.dt, len(shape), G.WithShape(shape...), G.WithName(b.nodeName(name)), G.WithValue(v))
}

// constant adds a constant tensor of the given shape filled with v.
func (b *builder) constant(v float64, shape ...int) *G.Node {
	n := shapeSize(shape)
	if b.dt == tensor.Float32 {
		d := make([]float32, n)
		for i := range d {
			d[i] = float32(v)
		}
		return G.NewConstant(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(d)))
	}
	d := make([]float64, n)
	for i := range d {
		d[i] = v
	}
	return G.NewConstant(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(d)))
}

func (b *builder) scalar(v float64) *G.Node {
	if b.dt == tensor.Float32 {
		return G.NewConstant(float32(v))
	}
	return G.NewConstant(v)
}

// dense adds y = x·W + b for the tensors prefix.weight and prefix.bias; x is [rows, in].
func (b *builder) dense(x *G.Node, prefix string) (*G.Node, error) {
	t := b.p.Tensor(prefix + ".weight")
	if t == nil {
		return nil, fmt.Errorf("param %q: missing", prefix+".weight")
	}
	out := t.Shape[len(t.Shape)-1]
	in := len(t.Data) / out
	w, err := b.param(prefix+".weight", in, out)
	if err != nil {
		return nil, err
	}
	bias, err := b.param(prefix+".bias", 1, out)
	if err != nil {
		return nil, err
	}
	xw, err := G.Mul(x, w)
	if err != nil {
		return nil, fmt.Errorf("%s: %v·%v: %w", prefix, x.Shape(), w.Shape(), err)
	}
	return G.BroadcastAdd(xw, bias, nil, []byte{0})
}

// act applies the activation a.
func (b *builder) act(x *G.Node, a netconf.Activation) (*G.Node, error) {
	switch a {
	case netconf.ReLU:
		return Rectify(x)
	case netconf.Tanh:
		return G.Tanh(x)
	case netconf.Sigmoid:
		return G.Sigmoid(x)
	case netconf.LeakyReLU:
		return G.LeakyRelu(x, netconf.LeakyReLUSlope)
	case netconf.ELU:
		// relu(x) + expm1(min(x, 0)), with min(x, 0) = -relu(-x): no select op needed.
		neg, err := G.Neg(x)
		if err != nil {
			return nil, err
		}
		if neg, err = Rectify(neg); err != nil {
			return nil, err
		}
		if neg, err = G.Neg(neg); err != nil {
			return nil, err
		}
		if neg, err = G.Expm1(neg); err != nil {
			return nil, err
		}
		pos, err := Rectify(x)
		if err != nil {
			return nil, err
		}
		return G.Add(pos, neg)
	case netconf.Softsign:
		abs, err := G.Abs(x)
		if err != nil {
			return nil, err
		}
		den, err := G.Add(abs, b.scalar(1))
		if err != nil {
			return nil, err
		}
		return G.HadamardDiv(x, den)
	case netconf.GELU:
		// 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
		x3, err := G.Cube(x)
		if err != nil {
			return nil, err
		}
		if x3, err = G.HadamardProd(x3, b.scalar(0.044715)); err != nil {
			return nil, err
		}
		inner, err := G.Add(x, x3)
		if err != nil {
			return nil, err
		}
		if inner, err = G.HadamardProd(inner, b.scalar(math.Sqrt(2/math.Pi))); err != nil {
			return nil, err
		}
		th, err := G.Tanh(inner)
		if err != nil {
			return nil, err
		}
		if th, err = G.Add(th, b.scalar(1)); err != nil {
			return nil, err
		}
		hx, err := G.HadamardProd(x, b.scalar(0.5))
		if err != nil {
			return nil, err
		}
		return G.HadamardProd(hx, th)
	}
	return nil, a.Validate()
}

// flatten reshapes [rows, C, H, W] to [rows, C·H·W] in (C, H, W) order.
func flatten(x *G.Node) (*G.Node, error) {
	s := x.Shape()
	return G.Reshape(x, tensor.Shape{s[0], s[1] * s[2] * s[3]})
}

// rows returns rows [from, to) of the matrix x as a matrix (gorgonia drops an axis sliced to
// length one, which a batch of one would otherwise lose).
func rows(x *G.Node, from, to int) (*G.Node, error) {
	if from == 0 && to == x.Shape()[0] {
		return x, nil
	}
	s, err := G.Slice(x, G.S(from, to))
	if err != nil {
		return nil, err
	}
	if to-from == 1 {
		return G.Reshape(s, tensor.Shape{1, x.Shape()[1]})
	}
	return s, nil
}

// shapeSize is the number of values of a tensor of the given shape.
func shapeSize(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

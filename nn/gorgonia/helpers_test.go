package gorgonia

import (
	"encoding/json"
	"github.com/evolverl/evolve/netconf"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// smallSpec is a small network of the given encoder kind (netconf.EncoderDict: an image key
// between two flat keys, one of a single feature), the same as in netconf's tests.
func smallSpec(kind netconf.EncoderKind, act netconf.Activation, norm bool) netconf.Spec {
	s := netconf.Spec{Encoder: kind, Latent: netconf.Latent{Size: 3, Min: 1, Max: 8},
		Head:   netconf.MLP{Hidden: []int{4}, Activation: act, LayerNorm: norm, MinLayers: 1, MaxLayers: 3, MinNodes: 1, MaxNodes: 8},
		Output: 2, OutputGain: 1}
	switch kind {
	case netconf.EncoderMLP:
		s.MLP = &netconf.MLP{Hidden: []int{5, 4}, Activation: act, LayerNorm: norm, MinLayers: 1, MaxLayers: 3, MinNodes: 1, MaxNodes: 8}
		s.Input = []int{3}
	case netconf.EncoderCNN:
		s.CNN = &netconf.CNN{Channels: []int{2, 3}, Kernels: []int{3, 2}, Strides: []int{2, 1}, Activation: act,
			MinLayers: 1, MaxLayers: 3, MinChannels: 1, MaxChannels: 8}
		s.Input = []int{2, 7, 6}
	case netconf.EncoderLSTM:
		s.LSTM = &netconf.LSTM{Hidden: 3, Layers: 2, MinHidden: 1, MaxHidden: 8, MinLayers: 1, MaxLayers: 3}
		s.Input = []int{3}
	case netconf.EncoderGRU:
		s.GRU = &netconf.GRU{Hidden: 3, Layers: 2, MinHidden: 1, MaxHidden: 8, MinLayers: 1, MaxLayers: 3}
		s.Input = []int{3}
	case netconf.EncoderDict: // the image key between two flat keys, one of a single feature
		s.Encoder = netconf.EncoderMLP
		s.MLP = &netconf.MLP{Hidden: []int{5, 4}, Activation: act, LayerNorm: norm, MinLayers: 1, MaxLayers: 3, MinNodes: 1, MaxNodes: 8}
		m1, m2 := *s.MLP, *s.MLP
		m1.Hidden, m2.Hidden = slices.Clone(s.MLP.Hidden), []int{2}
		s.Inputs = []netconf.KeyInput{
			{Key: "pos", Encoder: netconf.EncoderMLP, MLP: &m1, Input: []int{3}},
			{Key: "img", Encoder: netconf.EncoderCNN, CNN: &netconf.CNN{Channels: []int{2}, Kernels: []int{3}, Strides: []int{2}, Activation: act,
				MinLayers: 1, MaxLayers: 3, MinChannels: 1, MaxChannels: 8}, Input: []int{2, 5, 5}},
			{Key: "flag", Encoder: netconf.EncoderMLP, MLP: &m2, Input: []int{1}},
		}
		s.Input = []int{3 + 50 + 1}
	}
	return s
}

// randomise gives every tensor (biases and norms included) random values, so no gradient is
// trivially zero.
func randomise(p netconf.Params, rng *rand.Rand) {
	for _, t := range p {
		for i := range t.Data {
			t.Data[i] = float32(rng.NormFloat64() * 0.7)
		}
	}
}

// transferSpec is a mid-sized network with room to grow in every direction, the same as in
// netconf's tests.
func transferSpec(kind netconf.EncoderKind, act netconf.Activation) netconf.Spec {
	s := netconf.Spec{Encoder: kind, Latent: netconf.Latent{Size: 12, Min: 4, Max: 64},
		Head:   netconf.MLP{Hidden: []int{16}, Activation: act, MinLayers: 1, MaxLayers: 3, MinNodes: 4, MaxNodes: 64},
		Output: 3, OutputGain: netconf.ValueGain}
	switch kind {
	case netconf.EncoderMLP:
		s.MLP = &netconf.MLP{Hidden: []int{16, 12}, Activation: act, MinLayers: 1, MaxLayers: 3, MinNodes: 4, MaxNodes: 64}
		s.Input = []int{6}
	case netconf.EncoderCNN:
		s.CNN = &netconf.CNN{Channels: []int{4, 6}, Kernels: []int{3, 3}, Strides: []int{2, 1}, Activation: act,
			MinLayers: 1, MaxLayers: 4, MinChannels: 2, MaxChannels: 32}
		s.Input = []int{2, 11, 10}
	case netconf.EncoderLSTM:
		s.LSTM = &netconf.LSTM{Hidden: 8, Layers: 2, MinHidden: 4, MaxHidden: 64, MinLayers: 1, MaxLayers: 3}
		s.Input = []int{5}
	case netconf.EncoderGRU:
		s.GRU = &netconf.GRU{Hidden: 8, Layers: 2, MinHidden: 4, MaxHidden: 64, MinLayers: 1, MaxLayers: 3}
		s.Input = []int{5}
	case netconf.EncoderTransformer:
		s.Transformer = &netconf.Transformer{Layers: 1, Heads: 2, Width: 8, MLP: 12, Context: 3, MinLayers: 1, MaxLayers: 3,
			MinWidth: 4, MaxWidth: 24, MinContext: 2, MaxContext: 5}
		s.Input = []int{5}
	case netconf.EncoderDict: // a flat key and an image key; MLP is the configured template
		s.Encoder = netconf.EncoderMLP
		mlp := netconf.MLP{Hidden: []int{16, 12}, Activation: act, MinLayers: 1, MaxLayers: 3, MinNodes: 4, MaxNodes: 64}
		s.MLP = &mlp
		m := mlp
		m.Hidden = slices.Clone(mlp.Hidden)
		s.Inputs = []netconf.KeyInput{
			{Key: "pos", Encoder: netconf.EncoderMLP, MLP: &m, Input: []int{6}},
			{Key: "img", Encoder: netconf.EncoderCNN, CNN: &netconf.CNN{Channels: []int{4, 6}, Kernels: []int{3, 3}, Strides: []int{2, 1},
				Activation: act, MinLayers: 1, MaxLayers: 4, MinChannels: 2, MaxChannels: 32}, Input: []int{2, 11, 10}},
		}
		s.Input = []int{6 + 2*11*10}
	}
	return s
}

// refDir holds the PyTorch reference networks (see its README.md).
const refDir = "../../../shared/testdata/nets"

type refTensor struct {
	Shape []int     `json:"shape"`
	Data  []float64 `json:"data"`
}

type refFile struct {
	X          refTensor            `json:"x"`
	R          refTensor            `json:"R"`
	Y          refTensor            `json:"y"`
	Loss       float64              `json:"loss"`
	Params     map[string]refTensor `json:"params"`
	GradParams map[string]refTensor `json:"grad_params"`
	GradX      refTensor            `json:"grad_x"`
	Starts     refTensor            `json:"starts"`
	H0         refTensor            `json:"h0"`
	C0         refTensor            `json:"c0"`
	Sizes      struct {
		Input, Hidden, Steps, Batch, Layers int
	} `json:"sizes"`
}

func loadRef(t *testing.T, name string) *refFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(refDir, name))
	if os.IsNotExist(err) {
		t.Skipf("reference data %s not found (expected the shared testdata beside the repo): %v", filepath.Join(refDir, name), err)
	}
	if err != nil {
		t.Fatal(err)
	}
	var r refFile
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return &r
}

func f32(d []float64) []float32 {
	o := make([]float32, len(d))
	for i, x := range d {
		o[i] = float32(x)
	}
	return o
}

// transposed returns the float32 transpose of a row-major [r, c] reference matrix: PyTorch
// stores Linear and LSTM weights [out, in], we store [in, out].
func transposed(rt refTensor) netconf.Tensor {
	r, c := rt.Shape[0], rt.Shape[1]
	d := make([]float32, r*c)
	for i := range r {
		for j := range c {
			d[j*r+i] = float32(rt.Data[i*c+j])
		}
	}
	return netconf.Tensor{Shape: []int{c, r}, Data: d}
}

// transposedGrad is transposed for the float64 reference gradient.
func transposedGrad(rt refTensor) []float64 {
	r, c := rt.Shape[0], rt.Shape[1]
	o := make([]float64, r*c)
	for i := range r {
		for j := range c {
			o[j*r+i] = rt.Data[i*c+j]
		}
	}
	return o
}

// values returns a node's value (or gradient) as float64s.
func values(t *testing.T, v G.Value) []float64 {
	t.Helper()
	switch d := v.Data().(type) {
	case []float32:
		o := make([]float64, len(d))
		for i, x := range d {
			o[i] = float64(x)
		}
		return o
	case []float64:
		return append([]float64(nil), d...)
	case float32:
		return []float64{float64(d)}
	case float64:
		return []float64{d}
	}
	t.Fatalf("unexpected value data %T", v.Data())
	return nil
}

// relErr is max|got − want| / max(max|want|, floor): an error relative to the tensor's scale,
// so entries near zero do not blow it up.
func relErr(got, want []float64, floor float64) float64 {
	scale := floor
	for _, w := range want {
		scale = max(scale, math.Abs(w))
	}
	e := 0.0
	for i := range want {
		e = max(e, math.Abs(got[i]-want[i]))
	}
	return e / scale
}

// newValueInput adds an input node holding a copy of data with the given dtype.
func newValueInput(g *G.ExprGraph, dt tensor.Dtype, name string, data []float64, shape ...int) *G.Node {
	var v tensor.Tensor
	if dt == tensor.Float32 {
		v = tensor.New(tensor.WithShape(shape...), tensor.WithBacking(f32(data)))
	} else {
		v = tensor.New(tensor.WithShape(shape...), tensor.WithBacking(append([]float64(nil), data...)))
	}
	return G.NewTensor(g, dt, len(shape), G.WithShape(shape...), G.WithName(name), G.WithValue(v))
}

// weightedSum adds loss = sum(y ∘ r), the scalar the references differentiate.
func weightedSum(t *testing.T, y, r *G.Node) *G.Node {
	t.Helper()
	p, err := G.HadamardProd(y, r)
	if err != nil {
		t.Fatal(err)
	}
	l, err := G.Sum(p)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// runWithGrads differentiates loss with respect to wrt, runs the graph once and returns the
// loss value.
func runWithGrads(t *testing.T, g *G.ExprGraph, loss *G.Node, wrt G.Nodes) float64 {
	t.Helper()
	if _, err := G.Grad(loss, wrt...); err != nil {
		t.Fatalf("grad: %v", err)
	}
	m := G.NewTapeMachine(g, G.BindDualValues(wrt...))
	defer m.Close()
	if err := m.RunAll(); err != nil {
		t.Fatalf("run: %v", err)
	}
	return values(t, loss.Value())[0]
}

func gradOf(t *testing.T, n *G.Node) []float64 {
	t.Helper()
	gv, err := n.Grad()
	if err != nil {
		t.Fatalf("grad of %v: %v", n.Name(), err)
	}
	return values(t, gv)
}

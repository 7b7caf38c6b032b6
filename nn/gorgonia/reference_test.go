package gorgonia

import (
	"math"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/evolverl/evolve/netconf"
)

// refTol is the README's "about 1e-5 relative" for a float32 implementation.
const refTol = 1e-5

// refParams converts the reference's parameters to ours: matrices named in transpose are
// transposed ([out, in] → [in, out]), everything else is copied.
func refParams(r *refFile, transpose func(name string) bool) netconf.Params {
	var p netconf.Params
	for name, rt := range r.Params {
		t := netconf.Tensor{Shape: rt.Shape, Data: f32(rt.Data)}
		if transpose(name) {
			t = transposed(rt)
		}
		t.Name = name
		p = append(p, t)
	}
	return p
}

// checkAgainstRef compares y, loss and the gradients of every parameter and of x.
func checkAgainstRef(t *testing.T, r *refFile, y, x *G.Node, loss float64, nodes []ParamNode, transpose func(string) bool) {
	t.Helper()
	worst := 0.0
	check := func(what string, e float64) {
		t.Helper()
		worst = max(worst, e)
		if e > refTol {
			t.Errorf("%s: relative error %.2g > %g", what, e, refTol)
		}
	}
	check("output", relErr(values(t, y.Value()), r.Y.Data, 1e-3))
	check("loss", math.Abs(loss-r.Loss)/max(math.Abs(r.Loss), 1e-3))
	if len(nodes) != len(r.GradParams) {
		t.Errorf("graph has %d parameters, reference %d", len(nodes), len(r.GradParams))
	}
	for _, pn := range nodes {
		ref, ok := r.GradParams[pn.Name]
		if !ok {
			t.Errorf("param %s: no reference gradient", pn.Name)
			continue
		}
		want := ref.Data
		if transpose(pn.Name) {
			want = transposedGrad(ref)
		}
		check("grad "+pn.Name, relErr(gradOf(t, pn.Node), want, 1e-3))
	}
	check("grad x", relErr(gradOf(t, x), r.GradX.Data, 1e-3))
	t.Logf("worst relative error over output, loss and gradients: %.2g", worst)
}

func TestMLPLayerNormMatchesPyTorch(t *testing.T) {
	r := loadRef(t, "mlp_layernorm.json")
	isMatrix := func(n string) bool { return strings.HasSuffix(n, ".weight") && !strings.Contains(n, "norm") }
	p := refParams(r, isMatrix)
	g := G.NewGraph()
	b := newBuilder(g, tensor.Float32, p, Options{})
	x := newValueInput(g, tensor.Float32, "x", r.X.Data, r.X.Shape...)
	h, err := b.mlp(x, "mlp", netconf.MLP{Hidden: []int{10, 10}, Activation: netconf.ReLU, LayerNorm: true})
	if err != nil {
		t.Fatal(err)
	}
	y, err := b.dense(h, "out")
	if err != nil {
		t.Fatal(err)
	}
	R := newValueInput(g, tensor.Float32, "R", r.R.Data, r.R.Shape...)
	loss := weightedSum(t, y, R)
	wrt := append(paramNodes(b.nodes), x)
	l := runWithGrads(t, g, loss, wrt)
	checkAgainstRef(t, r, y, x, l, b.nodes, isMatrix)
}

func TestCNNMatchesPyTorch(t *testing.T) {
	r := loadRef(t, "cnn.json")
	isMatrix := func(n string) bool { return n == "linear.weight" }
	p := refParams(r, isMatrix)
	g := G.NewGraph()
	b := newBuilder(g, tensor.Float32, p, Options{})
	x := newValueInput(g, tensor.Float32, "x", r.X.Data, r.X.Shape...)
	c := netconf.CNN{Channels: []int{4, 8}, Kernels: []int{3, 3}, Strides: []int{2, 1}, Activation: netconf.ReLU}
	h, err := b.cnn(x, "conv", c)
	if err != nil {
		t.Fatal(err)
	}
	if h, err = flatten(h); err != nil {
		t.Fatal(err)
	}
	y, err := b.dense(h, "linear")
	if err != nil {
		t.Fatal(err)
	}
	R := newValueInput(g, tensor.Float32, "R", r.R.Data, r.R.Shape...)
	loss := weightedSum(t, y, R)
	l := runWithGrads(t, g, loss, append(paramNodes(b.nodes), x))
	checkAgainstRef(t, r, y, x, l, b.nodes, isMatrix)
}

func TestLSTMWithResetsMatchesPyTorch(t *testing.T) {
	for _, file := range []string{"lstm_1layer.json", "lstm_2layer.json"} {
		t.Run(file, func(t *testing.T) {
			r := loadRef(t, file)
			sz := r.Sizes
			isMatrix := func(n string) bool { return strings.Contains(n, ".w_") }
			p := refParams(r, isMatrix)
			g := G.NewGraph()
			b := newBuilder(g, tensor.Float32, p, Options{Steps: sz.Steps})
			x := newValueInput(g, tensor.Float32, "x", r.X.Data, sz.Steps*sz.Batch, sz.Input)
			y, rec, err := b.lstm(x, "lstm", netconf.LSTM{Hidden: sz.Hidden, Layers: sz.Layers})
			if err != nil {
				t.Fatal(err)
			}
			copy(Data(rec.Starts), f32(r.Starts.Data))
			n := sz.Batch * sz.Hidden
			for l := range sz.Layers {
				copy(Data(rec.H0[l]), f32(r.H0.Data[l*n:(l+1)*n]))
				copy(Data(rec.C0[l]), f32(r.C0.Data[l*n:(l+1)*n]))
			}
			R := newValueInput(g, tensor.Float32, "R", r.R.Data, sz.Steps*sz.Batch, sz.Hidden)
			loss := weightedSum(t, y, R)
			l := runWithGrads(t, g, loss, append(paramNodes(b.nodes), x))
			checkAgainstRef(t, r, y, x, l, b.nodes, isMatrix)
			// The captured final state is the top layer's last output.
			last := values(t, y.Value())
			if len(last) > 0 {
				top := rec.H[sz.Layers-1]
				off := (sz.Steps - 1) * n
				for i := range top {
					if float64(top[i]) != last[off+i] {
						t.Fatalf("captured h[%d] = %v, want the last output %v", i, top[i], last[off+i])
					}
				}
			}
		})
	}
}

func paramNodes(ps []ParamNode) G.Nodes {
	ns := make(G.Nodes, len(ps))
	for i, p := range ps {
		ns[i] = p.Node
	}
	return ns
}

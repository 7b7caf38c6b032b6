package nn

import (
	"fmt"
	"strings"
	"testing"

	"github.com/evolverl/evolve/netconf"
)

// TestDenseLayersMatchPyTorch runs PyTorch's reference MLP (../shared/testdata/nets/
// mlp_layernorm.json: x [4, 6] → Linear 10 → LayerNorm → ReLU → Linear 10 → LayerNorm → ReLU
// → Linear 3) as two dense layers of appendMLP and an output layer, and checks y, the
// gradient of every parameter for loss = Σ y·R and the gradient of x within 1e-5 of each
// tensor's largest magnitude: the LayerNorm (eps 1e-5, biased variance, scale and shift), its
// tensor names and the [in, out] layout as PyTorch has them.
func TestDenseLayersMatchPyTorch(t *testing.T) {
	ref := loadRefNet(t, "mlp_layernorm.json")
	rows, in := ref.X.Shape[0], ref.X.Shape[1]
	hidden := []int{
		ref.param(t, "mlp.0.weight").Shape[0],
		ref.param(t, "mlp.1.weight").Shape[0],
	}
	outs := ref.param(t, "out.weight").Shape[0]

	var b binding
	layers, width := appendMLP(nil, "mlp", in, netconf.MLP{Hidden: hidden, Activation: netconf.ReLU, LayerNorm: true}, &b)
	layers = append(layers, newDenseLayer("out", width, outs, false, "", &b))
	p, grad := make(netconf.Params, len(b.names)), make(netconf.Params, len(b.names))
	for i, name := range b.names {
		w := ref.param(t, name).ourLayout()
		if len(w) != b.sizes[i] {
			t.Fatalf("%s: %d values in the reference, the layer wants %d", name, len(w), b.sizes[i])
		}
		p[i] = netconf.Tensor{Name: name, Data: w}
		grad[i] = netconf.Tensor{Name: name, Data: make([]float32, b.sizes[i])}
	}
	if len(p) != len(ref.Params) {
		t.Fatalf("the layers have %d tensors %v, the reference %d", len(p), b.names, len(ref.Params))
	}
	gb := binding{names: b.names, sizes: b.sizes}
	if err := b.resolve(p); err != nil {
		t.Fatal(err)
	}
	if err := gb.resolve(grad); err != nil {
		t.Fatal(err)
	}

	const tol = 1e-5
	x := ref.X.float32s()
	y := forwardLayers(layers, &b, p, x, rows)
	worst := checkClose(t, "y", y, ref.Y.Data, tol, noScaleFloor)
	ones := filled(rows, 1)
	var tmp [2][]float32
	dx := make([]float32, rows*in)
	backwardLayers(layers, &b, &gb, p, grad, x, ref.R.float32s(), dx, &tmp, ones, rows)
	for _, g := range grad {
		want := float64s(ref.grad(t, g.Name).ourLayout())
		worst = max(worst, checkClose(t, "gradient of "+g.Name, g.Data, want, tol, noScaleFloor))
	}
	worst = max(worst, checkClose(t, "gradient of x", dx, ref.GradX.Data, tol, noScaleFloor))
	t.Logf("worst error %.2g of a tensor's largest value", worst)
}

// TestCNNNetMatchesPyTorch runs PyTorch's reference CNN (../shared/testdata/nets/cnn.json:
// x [2, 3, 11, 11] → conv 3→4 k3 s2 → ReLU → conv 4→8 k3 s1 → ReLU → flatten (C, H, W) →
// Linear 72→6) through a whole Net, and checks y and every parameter's gradient for
// loss = Σ y·R within 1e-5 of each tensor's largest magnitude. (The input's gradient, which a
// Net does not return, is TestConv2dMatchesPyTorch's.)
//
// A Net's CNN is followed by a latent layer with the head's activation and then the output
// layer, where PyTorch's network has one Linear. With ReLU as the head's activation the Net
// still computes that Linear exactly, as relu(z) − relu(−z) = z: the latent layer has 12
// units, the Linear's 6 outputs z and their negations, and the output layer (no head layers)
// has weights [I; −I] and no bias. The Linear's gradient is then the difference of the
// gradients of the two halves of the latent layer.
func TestCNNNetMatchesPyTorch(t *testing.T) {
	ref := loadRefNet(t, "cnn.json")
	lw := ref.param(t, "linear.weight") // [outs, flat]
	outs, flat := lw.Shape[0], lw.Shape[1]
	s := netconf.Spec{Encoder: netconf.EncoderCNN,
		CNN: &netconf.CNN{Channels: []int{4, 8}, Kernels: []int{3, 3}, Strides: []int{2, 1}, Activation: netconf.ReLU,
			MinLayers: 1, MaxLayers: 2, MinChannels: 1, MaxChannels: 8},
		Latent: netconf.Latent{Size: 2 * outs, Min: 1, Max: 2 * outs},
		Head:   netconf.MLP{Activation: netconf.ReLU, MinLayers: 0, MaxLayers: 1, MinNodes: 1, MaxNodes: 1},
		Input:  ref.X.Shape[1:], Output: outs, OutputGain: 1}
	if got := s.EncoderOutSize(); got != flat {
		t.Fatalf("the CNN gives %d features, the reference's Linear reads %d", got, flat)
	}
	n, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	p, err := netconf.Zeros(s)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		for _, kind := range []string{"weight", "bias"} {
			name := fmt.Sprintf("conv.%d.%s", i, kind)
			copy(p.Tensor("encoder.cnn."+strings.TrimPrefix(name, "conv.")).Data, ref.param(t, name).float32s())
		}
	}
	w, bias := lw.ourLayout(), ref.param(t, "linear.bias").float32s()          // w [flat, outs]
	latW, latB := p.Tensor("latent.weight").Data, p.Tensor("latent.bias").Data // [flat, 2·outs]
	outW := p.Tensor("out.weight").Data                                        // [2·outs, outs]
	for j := range outs {
		for i := range flat {
			latW[i*2*outs+j], latW[i*2*outs+outs+j] = w[i*outs+j], -w[i*outs+j]
		}
		latB[j], latB[outs+j] = bias[j], -bias[j]
		outW[j*outs+j], outW[(outs+j)*outs+j] = 1, -1
	}

	const tol = 1e-5
	rows := ref.X.Shape[0]
	y, err := n.Forward(p, ref.X.float32s(), rows, nil)
	if err != nil {
		t.Fatal(err)
	}
	worst := checkClose(t, "y", y, ref.Y.Data, tol, noScaleFloor)
	grad, _ := netconf.Zeros(s)
	if err := n.Backward(p, grad, ref.R.float32s()); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		for _, kind := range []string{"weight", "bias"} {
			name := fmt.Sprintf("conv.%d.%s", i, kind)
			got := grad.Tensor("encoder.cnn." + strings.TrimPrefix(name, "conv.")).Data
			worst = max(worst, checkClose(t, "gradient of "+name, got, ref.grad(t, name).Data, tol, noScaleFloor))
		}
	}
	gW, gB := grad.Tensor("latent.weight").Data, grad.Tensor("latent.bias").Data
	dw, db := make([]float32, flat*outs), make([]float32, outs)
	for j := range outs {
		for i := range flat {
			dw[i*outs+j] = gW[i*2*outs+j] - gW[i*2*outs+outs+j]
		}
		db[j] = gB[j] - gB[outs+j]
	}
	worst = max(worst, checkClose(t, "gradient of linear.weight", dw, float64s(ref.grad(t, "linear.weight").ourLayout()), tol, noScaleFloor))
	worst = max(worst, checkClose(t, "gradient of linear.bias", db, ref.grad(t, "linear.bias").Data, tol, noScaleFloor))
	t.Logf("worst error %.2g of a tensor's largest value", worst)
}

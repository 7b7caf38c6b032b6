package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/evolverl/evolve/netconf"
)

// netMLP is an MLP (encoder or head) of the given layers with bounds loose enough for any
// small test size.
func netMLP(act netconf.Activation, norm bool, hidden ...int) netconf.MLP {
	return netconf.MLP{Hidden: hidden, Activation: act, LayerNorm: norm, MinLayers: 0, MaxLayers: 3, MinNodes: 1, MaxNodes: 64}
}

// netCNN is a CNN of the given layers with loose bounds.
func netCNN(act netconf.Activation, channels, kernels, strides []int) *netconf.CNN {
	return &netconf.CNN{Channels: channels, Kernels: kernels, Strides: strides, Activation: act,
		MinLayers: 1, MaxLayers: 3, MinChannels: 1, MaxChannels: 16}
}

// netLSTMSpec is an LSTM network: input 3, hidden 5, latent 4, head [4], 2 outputs.
func netLSTMSpec(layers int, act netconf.Activation) netconf.Spec {
	return netconf.Spec{Encoder: netconf.EncoderLSTM,
		LSTM:   &netconf.LSTM{Hidden: 5, Layers: layers, MinHidden: 1, MaxHidden: 16, MinLayers: 1, MaxLayers: 3},
		Latent: netconf.Latent{Size: 4, Min: 1, Max: 16}, Head: netMLP(act, false, 4),
		Input: []int{3}, Output: 2, OutputGain: 1}
}

// netCNNSpec is a CNN network on a non-square 2×9×7 image: conv 2→3 k3 s2 (→ 3×4×3), conv
// 3→4 k2 s1 (→ 4×3×2), latent 8, head [5], 3 outputs.
func netCNNSpec(conv, head netconf.Activation) netconf.Spec {
	return netconf.Spec{Encoder: netconf.EncoderCNN,
		CNN:    netCNN(conv, []int{3, 4}, []int{3, 2}, []int{2, 1}),
		Latent: netconf.Latent{Size: 8, Min: 1, Max: 16}, Head: netMLP(head, false, 5),
		Input: []int{2, 9, 7}, Output: 3, OutputGain: 1}
}

// netDictSpec is a Dict network: an MLP key "pos" [3] and a CNN key "img" [2, 5, 6], latent
// 3 per key, head [4], 2 outputs.
func netDictSpec(act netconf.Activation, norm bool) netconf.Spec {
	m := netMLP(act, norm, 5)
	pos := netMLP(act, norm, 5)
	return netconf.Spec{Encoder: netconf.EncoderMLP, MLP: &m,
		Inputs: []netconf.KeyInput{
			{Key: "pos", Encoder: netconf.EncoderMLP, MLP: &pos, Input: []int{3}},
			{Key: "img", Encoder: netconf.EncoderCNN, CNN: netCNN(act, []int{2}, []int{3}, []int{2}), Input: []int{2, 5, 6}},
		},
		Latent: netconf.Latent{Size: 3, Min: 1, Max: 16}, Head: netMLP(act, norm, 4),
		Input: []int{3 + 2*5*6}, Output: 2, OutputGain: 1}
}

// netRecurrence returns the recurrence of 3 steps of 2 sequences that the tests give an LSTM
// network: a random initial state, sequence 1 starting an episode at step 0 and sequence 0
// at step 1 (a reset inside a sequence, after the initial state has been used).
// netTransformerSpec is a Transformer network: input 3, width 6, 2 heads, MLP 8, context 4,
// latent 4, head [4], 2 outputs.
func netTransformerSpec(layers int, act netconf.Activation) netconf.Spec {
	return netconf.Spec{Encoder: netconf.EncoderTransformer,
		Transformer: &netconf.Transformer{Layers: layers, Heads: 2, Width: 6, MLP: 8, Context: 4, MinLayers: 1, MaxLayers: 3,
			MinWidth: 2, MaxWidth: 16, MinContext: 2, MaxContext: 8},
		Latent: netconf.Latent{Size: 4, Min: 1, Max: 16}, Head: netMLP(act, false, 4),
		Input: []int{3}, Output: 2, OutputGain: 1}
}

// netWindowRecurrence is netRecurrence for a Transformer: sequence 0's state holds 2 valid
// inputs of its 3, sequence 1's all 3, and sequence 1 starts an episode at step 1.
func netWindowRecurrence(n *Net, rng *rand.Rand) *Recurrence {
	r := netRecurrence(n, rng)
	k := n.StateSize()
	r.State[k-1], r.State[2*k-1] = 2, 3
	return r
}

func netRecurrence(n *Net, rng *rand.Rand) *Recurrence {
	return &Recurrence{Steps: 3, State: randomInput(rng, 2*n.StateSize()), Stride: n.StateSize(),
		Starts: []float32{0, 1, 1, 0, 0, 0}}
}

// netCase is a network with its input batch.
type netCase struct {
	name string
	spec netconf.Spec
	rows int
	rec  func(*Net, *rand.Rand) *Recurrence // nil for feed-forward networks
}

// netKinked reports whether act or one of its first two derivatives jumps at 0, where a finite
// difference across the jump is not the derivative.
func netKinked(act netconf.Activation) bool {
	switch act {
	case netconf.ReLU, netconf.LeakyReLU, netconf.ELU, netconf.Softsign:
		return true
	}
	return false
}

// netKinks appends to dst, for every input of a kinked activation in the last forward pass of
// n, whether it is ≥ 0. Two passes with the same pattern stay on the same smooth piece of
// the network (for steps small enough that no input crosses 0 and back).
func netKinks(dst []bool, n *Net) []bool {
	dense := func(ls ...denseLayer) {
		for _, l := range ls {
			if netKinked(l.act) {
				for _, v := range l.u {
					dst = append(dst, v >= 0)
				}
			}
		}
	}
	var enc func(encoder)
	enc = func(e encoder) {
		switch e := e.(type) {
		case *mlpEncoder:
			dense(e.layers...)
		case *cnnEncoder:
			if netKinked(e.act) {
				for _, z := range e.z {
					for _, v := range z {
						dst = append(dst, v >= 0)
					}
				}
			}
			dense(e.latent)
		case *recurrentEncoder:
			dense(e.latent)
		case *transformerEncoder: // the MLPs' ReLUs
			for _, l := range e.layers {
				for _, v := range l.u[:l.windows*l.nq*l.MLP] {
					dst = append(dst, v >= 0)
				}
			}
			dense(e.latent)
		case *dictEncoder:
			for _, k := range e.keys {
				enc(k.enc)
			}
		default:
			panic(fmt.Sprintf("netKinks: encoder %T", e))
		}
	}
	enc(n.enc)
	dense(n.head...)
	return dst
}

// The finite differences: central differences in float64 of the float32 network, with
// steps h and h/2 around a float32 weight combined by Richardson extrapolation,
// (4·D(h/2) − D(h))/3, whose truncation error is O(h⁴), ~1e-7 of the gradient at h = 1/64
// in these networks. Each D divides by the step actually taken, the difference of the two
// float32 weights. Where a step moves an input of a kinked activation across 0 (netKinks), h
// is halved, down to netFDMinStep, below which the entry is skipped.
const (
	netFDStep    = 1.0 / 64
	netFDMinStep = 1.0 / 2048
)

// The rounding of the float32 forward pass changes the loss by about one unit in the last
// place of Σ|out·R|; allowing netFDNoise of them, the extrapolated difference with step h
// is off by up to 3·netFDNoise·2⁻²⁴·Σ|out·R|/h (~2e-4 at h = 1/64 here). An entry's error
// may be that plus netGradRel of its tensor's largest finite-difference gradient. Over eight
// seeds the worst error is 0.55 of this tolerance, while a wrong gradient — a dropped term,
// a derivative 1% off on one branch, a misplaced index — is far outside it.
const (
	netFDNoise = 2
	netGradRel = 1e-3
)

// netFDStats is what one gradient check saw, for the log.
type netFDStats struct {
	worst   float64 // the largest error / tolerance: ≤ 1 passes
	worstAt string
	checked int
	small   int // entries checked with a step below netFDStep (kinks nearby)
	skipped int // entries whose every step crosses a kink
}

// netFD returns the derivative of eval's loss in v[i] and the step h it took, or h = 0 when
// every step crossed a kink. eval returns the loss at the current weights and whether the
// pass took the same piece of the network as at the original weights.
func netFD(v []float32, i int, eval func() (float64, bool)) (d, h float64) {
	for h = netFDStep; h >= netFDMinStep; h /= 2 {
		smooth := true
		diff := func(h float64) float64 {
			old := v[i]
			v[i] = float32(float64(old) + h)
			up := float64(v[i])
			lp, same := eval()
			v[i] = float32(float64(old) - h)
			down := float64(v[i])
			lm, same2 := eval()
			v[i] = old
			smooth = smooth && same && same2
			return (lp - lm) / (up - down)
		}
		d = (4*diff(h/2) - diff(h)) / 3
		if smooth {
			return d, h
		}
	}
	return 0, 0
}

// netCheckGradients compares got(name), the analytic gradient of a loss whose terms sum to
// scale in magnitude (Σ|out·R|), with finite differences of eval (netFD) in every entry of
// each tensor of p. At most one entry in 20 may be skipped at kinks.
func netCheckGradients(t *testing.T, p netconf.Params, got func(name string) []float64, eval func() (float64, bool), scale float64) netFDStats {
	t.Helper()
	var st netFDStats
	total := 0
	for _, ts := range p {
		g := got(ts.Name)
		if len(g) != len(ts.Data) {
			t.Fatalf("%s: %d gradient values for %d weights", ts.Name, len(g), len(ts.Data))
		}
		fd, steps := make([]float64, len(g)), make([]float64, len(g))
		top := 0.0
		for i := range g {
			fd[i], steps[i] = netFD(ts.Data, i, eval)
			switch {
			case steps[i] == 0:
				st.skipped++
				continue
			case steps[i] < netFDStep:
				st.small++
			}
			st.checked++
			top = max(top, math.Abs(fd[i]))
		}
		total += len(g)
		bad := 0
		for i, f := range fd {
			if steps[i] == 0 {
				continue
			}
			tol := netGradRel*top + 3*netFDNoise*0x1p-24*scale/steps[i]
			e := math.Abs(g[i] - f)
			if !(e <= tol) {
				if bad < 3 {
					t.Errorf("gradient of %s[%d] = %.6g, finite differences %.6g (step %g): error %.3g > %.3g",
						ts.Name, i, g[i], f, steps[i], e, tol)
				}
				bad++
			}
			if r := e / tol; r > st.worst || st.worstAt == "" {
				st.worst, st.worstAt = r, ts.Name
			}
		}
		if bad > 3 {
			t.Errorf("gradient of %s: %d of %d entries off", ts.Name, bad, len(g))
		}
	}
	if st.skipped*20 > total {
		t.Errorf("the steps of %d of %d entries cross a kink down to step %g", st.skipped, total, netFDMinStep)
	}
	return st
}

// netScale returns Σ|out·r|.
func netScale(out, r []float32) float64 {
	s := 0.0
	for i, v := range out {
		s += math.Abs(float64(v) * float64(r[i]))
	}
	return s
}

// netGradCases are the networks of the gradient checks: MLPs with and without LayerNorm for
// every activation (hidden layers of 9 and 6 and a head of 8, so both the narrow and the wide
// products run), CNNs, LSTMs of one and two layers, and Dict networks with an MLP key and a
// CNN key.
func netGradCases() []netCase {
	var cases []netCase
	for _, a := range netconf.Activations() {
		for _, norm := range []bool{false, true} {
			cases = append(cases, netCase{name: fmt.Sprintf("mlp/%s/ln=%v", a, norm), spec: denseSpec(a, norm, []int{9, 6}, []int{8}), rows: 3})
		}
	}
	return append(cases,
		netCase{name: "cnn/ReLU/Tanh", spec: netCNNSpec(netconf.ReLU, netconf.Tanh), rows: 2},
		netCase{name: "cnn/ELU/GELU", spec: netCNNSpec(netconf.ELU, netconf.GELU), rows: 2},
		netCase{name: "lstm/1-layer/Tanh", spec: netLSTMSpec(1, netconf.Tanh), rows: 6, rec: netRecurrence},
		netCase{name: "lstm/2-layer/ReLU", spec: netLSTMSpec(2, netconf.ReLU), rows: 6, rec: netRecurrence},
		netCase{name: "transformer/1-layer/Tanh", spec: netTransformerSpec(1, netconf.Tanh), rows: 6, rec: netWindowRecurrence},
		netCase{name: "transformer/2-layer/Tanh", spec: netTransformerSpec(2, netconf.Tanh), rows: 6, rec: netWindowRecurrence},
		netCase{name: "dict/LeakyReLU", spec: netDictSpec(netconf.LeakyReLU, false), rows: 3},
		netCase{name: "dict/Sigmoid/ln", spec: netDictSpec(netconf.Sigmoid, true), rows: 3},
	)
}

// TestNetGradientsMatchFiniteDifferences checks Backward's gradient of loss = Σ out·R for
// every tensor of each network of netGradCases against finite differences of Forward (see
// netCheckGradients), with every tensor randomised so no bias, LayerNorm scale or shift is
// at its initial value. The LSTMs start from a nonzero state and reset one sequence inside
// it. Each net has first run a pass on another batch, and Backward adds to a nonzero grad.
func TestNetGradientsMatchFiniteDifferences(t *testing.T) {
	for i, c := range netGradCases() {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(21, uint64(i)))
			n, err := New(c.spec)
			if err != nil {
				t.Fatal(err)
			}
			p, err := netconf.Init(c.spec, rng)
			if err != nil {
				t.Fatal(err)
			}
			randomise(p, rng)
			in := n.inputSize()

			// A pass on another batch first, as in training.
			other := &Recurrence{Steps: 2}
			if _, err := n.Forward(p, randomInput(rng, 4*in), 4, other); err != nil {
				t.Fatal(err)
			}
			scratch, _ := netconf.Zeros(c.spec)
			if err := n.Backward(p, scratch, randomInput(rng, 4*c.spec.Output)); err != nil {
				t.Fatal(err)
			}

			var rec *Recurrence
			if c.rec != nil {
				rec = c.rec(n, rng)
			}
			x := randomInput(rng, c.rows*in)
			r := randomInput(rng, c.rows*c.spec.Output)
			grad, _ := netconf.Zeros(c.spec)
			randomise(grad, rng)
			g0 := grad.Clone()
			out, err := n.Forward(p, x, c.rows, rec)
			if err != nil {
				t.Fatal(err)
			}
			if len(out) != c.rows*c.spec.Output {
				t.Fatalf("%d outputs for %d rows of %d", len(out), c.rows, c.spec.Output)
			}
			scale := netScale(out, r)
			if err := n.Backward(p, grad, r); err != nil {
				t.Fatal(err)
			}
			analytic := func(name string) []float64 {
				g, g0 := grad.Tensor(name).Data, g0.Tensor(name).Data
				d := make([]float64, len(g))
				for i := range g {
					d[i] = float64(g[i]) - float64(g0[i])
				}
				return d
			}

			base := netKinks(nil, n)
			var cur []bool
			eval := func() (float64, bool) {
				out, err := n.Forward(p, x, c.rows, rec)
				if err != nil {
					t.Fatal(err)
				}
				cur = netKinks(cur[:0], n)
				return dot64(out, r), slices.Equal(cur, base)
			}
			st := netCheckGradients(t, p, analytic, eval, scale)
			t.Logf("%d entries checked (%d with a smaller step), %d skipped at kinks; worst error %.2f of the tolerance (%s)",
				st.checked, st.small, st.skipped, st.worst, st.worstAt)
		})
	}
}

// TestNetSharedEncoderSplit runs an actor and a critic head on one encoder as an agent with a
// shared encoder does — ForwardEncoder once, ForwardHead on both Nets, BackwardHead on both,
// the latent gradients summed, BackwardEncoder once — and checks it against two whole Nets,
// the actor and a critic with the actor's encoder weights, each run on its own: outputs and
// head gradients bit for bit, the encoder's gradients as the sum of the two Nets' (up to
// rounding), and those against finite differences of the combined loss.
func TestNetSharedEncoderSplit(t *testing.T) {
	for i, c := range []netCase{
		{name: "mlp/ln", spec: denseSpec(netconf.GELU, true, []int{9, 6}, []int{8}), rows: 4},
		{name: "lstm/2-layer", spec: netLSTMSpec(2, netconf.Tanh), rows: 6, rec: netRecurrence},
		{name: "dict", spec: netDictSpec(netconf.Tanh, false), rows: 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(31, uint64(i)))
			aSpec := c.spec
			cSpec := c.spec.Clone()
			// Another head, but the same activation: the latent layer, which the critic's head
			// reads from the actor, has the head's activation.
			cSpec.Head = netMLP(aSpec.Head.Activation, true, 6, 5)
			cSpec.Output = 1
			actor, _ := New(aSpec)
			critic, err := New(cSpec)
			if err != nil {
				t.Fatal(err)
			}
			pA, _ := netconf.Init(aSpec, rng)
			randomise(pA, rng)
			// The critic as a whole Net: the actor's encoder and latent, its own head.
			pC, _ := netconf.Init(cSpec, rng)
			randomise(pC, rng)
			for j := range pC {
				if !strings.HasPrefix(pC[j].Name, "head.") && !strings.HasPrefix(pC[j].Name, "out.") {
					pC[j].Data = pA.Tensor(pC[j].Name).Data
				}
			}
			pCHead := pC.Filter("head.", "out.")

			var rec *Recurrence
			if c.rec != nil {
				rec = c.rec(actor, rng)
			}
			x := randomInput(rng, c.rows*actor.inputSize())
			rA, rC := randomInput(rng, c.rows*aSpec.Output), randomInput(rng, c.rows)

			gA, _ := netconf.Zeros(aSpec)
			gCAll, _ := netconf.Zeros(cSpec)
			gC := gCAll.Filter("head.", "out.")
			// forward runs the encoder once and both heads on its latent output, as the agent
			// does; the outputs are the Nets' buffers.
			forward := func() (outA, v []float32) {
				lat, err := actor.ForwardEncoder(pA, x, c.rows, rec)
				if err != nil {
					t.Fatal(err)
				}
				if outA, err = actor.ForwardHead(pA, lat, c.rows); err != nil {
					t.Fatal(err)
				}
				if v, err = critic.ForwardHead(pCHead, lat, c.rows); err != nil {
					t.Fatal(err)
				}
				return outA, v
			}
			outA, v := forward()
			outA, v = slices.Clone(outA), slices.Clone(v)
			dA, err := actor.BackwardHead(pA, gA, rA)
			if err != nil {
				t.Fatal(err)
			}
			dC, err := critic.BackwardHead(pCHead, gC, rC)
			if err != nil {
				t.Fatal(err)
			}
			dLat := make([]float32, len(dA))
			for j := range dA {
				dLat[j] = dA[j] + dC[j]
			}
			if err := actor.BackwardEncoder(pA, gA, dLat); err != nil {
				t.Fatal(err)
			}

			// The two whole Nets.
			wholeA, _ := New(aSpec)
			wholeC, _ := New(cSpec)
			wA, _ := netconf.Zeros(aSpec)
			wC, _ := netconf.Zeros(cSpec)
			for _, w := range []struct {
				n    *Net
				p, g netconf.Params
				r    []float32
				out  []float32
				what string
			}{{wholeA, pA, wA, rA, outA, "actor"}, {wholeC, pC, wC, rC, v, "critic"}} {
				out, err := w.n.Forward(w.p, x, c.rows, rec)
				if err != nil {
					t.Fatal(err)
				}
				requireSameBits(t, w.what+" output of the split network", w.out, out)
				if err := w.n.Backward(w.p, w.g, w.r); err != nil {
					t.Fatal(err)
				}
			}
			for _, g := range gA {
				if strings.HasPrefix(g.Name, "head.") || strings.HasPrefix(g.Name, "out.") {
					requireSameBits(t, "actor gradient of "+g.Name, g.Data, wA.Tensor(g.Name).Data)
					continue
				}
				want := make([]float64, len(g.Data))
				for j := range want {
					want[j] = float64(wA.Tensor(g.Name).Data[j]) + float64(wC.Tensor(g.Name).Data[j])
				}
				checkClose(t, "shared gradient of "+g.Name, g.Data, want, 1e-5, smallScaleFloor)
			}
			for _, g := range gC {
				requireSameBits(t, "critic gradient of "+g.Name, g.Data, wC.Tensor(g.Name).Data)
			}

			// The encoder's gradients against finite differences of the combined loss.
			eval := func() (float64, bool) {
				outA, v := forward()
				return dot64(outA, rA) + dot64(v, rC), true // no kinked activation
			}
			enc := pA.Filter("encoder.", "latent.")
			st := netCheckGradients(t, enc, func(name string) []float64 { return float64s(gA.Tensor(name).Data) }, eval, netScale(outA, rA)+netScale(v, rC))
			t.Logf("%d encoder entries checked; worst error %.2f of the tolerance (%s)", st.checked, st.worst, st.worstAt)
		})
	}
}

// TestNetRejectsBadInput checks that inputs a caller can get wrong — short slices, rows that
// do not split into sequences, recurrent state too short for its stride, missing tensors, a
// backward pass without its forward pass — give an error, not a panic.
func TestNetRejectsBadInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 1))
	mlp := denseSpec(netconf.ReLU, true, []int{9}, []int{8})
	lstm := netLSTMSpec(2, netconf.Tanh)
	pM, _ := netconf.Init(mlp, rng)
	pL, _ := netconf.Init(lstm, rng)
	gM, _ := netconf.Zeros(mlp)
	gL, _ := netconf.Zeros(lstm)
	xM, xL := randomInput(rng, 4*5), randomInput(rng, 6*3)
	ss := 2 * 2 * 5 // the LSTM's StateSize
	state := randomInput(rng, 2*ss)
	lat := randomInput(rng, 4*mlp.LatentWidth())
	mlpNet := func() *Net {
		n, err := New(mlp)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	lstmNet := func() *Net {
		n, err := New(lstm)
		if err != nil {
			t.Fatal(err)
		}
		if n.StateSize() != ss {
			t.Fatalf("StateSize %d, want %d", n.StateSize(), ss)
		}
		return n
	}
	lstmForward := func(rec Recurrence) error {
		_, err := lstmNet().Forward(pL, xL, 6, &rec)
		return err
	}
	cases := []struct {
		name string
		run  func() error
	}{
		{"short x", func() error { _, err := mlpNet().Forward(pM, xM[:4*5-1], 4, nil); return err }},
		{"zero rows", func() error { _, err := mlpNet().Forward(pM, xM, 0, nil); return err }},
		{"short latent", func() error { _, err := mlpNet().ForwardHead(pM, lat[:len(lat)-1], 4); return err }},
		{"params without the head", func() error { _, err := mlpNet().Forward(pM.Filter("encoder.", "latent."), xM, 4, nil); return err }},
		{"no params", func() error { _, err := mlpNet().Forward(nil, xM, 4, nil); return err }},
		{"Backward without Forward", func() error { return mlpNet().Backward(pM, gM, make([]float32, 4*3)) }},
		{"BackwardHead without ForwardHead", func() error {
			n := mlpNet()
			if _, err := n.ForwardEncoder(pM, xM, 4, nil); err != nil {
				t.Fatal(err)
			}
			_, err := n.BackwardHead(pM, gM, make([]float32, 4*3))
			return err
		}},
		{"Backward after ForwardHead alone", func() error {
			n := mlpNet()
			if _, err := n.ForwardHead(pM, lat, 4); err != nil {
				t.Fatal(err)
			}
			return n.Backward(pM, gM, make([]float32, 4*3))
		}},
		{"short output gradient", func() error {
			n := mlpNet()
			if _, err := n.Forward(pM, xM, 4, nil); err != nil {
				t.Fatal(err)
			}
			return n.Backward(pM, gM, make([]float32, 4*3-1))
		}},
		{"short latent gradient", func() error {
			n := mlpNet()
			if _, err := n.ForwardEncoder(pM, xM, 4, nil); err != nil {
				t.Fatal(err)
			}
			return n.BackwardEncoder(pM, gM, make([]float32, len(lat)-1))
		}},
		{"gradient without the encoder", func() error {
			n := mlpNet()
			if _, err := n.Forward(pM, xM, 4, nil); err != nil {
				t.Fatal(err)
			}
			return n.Backward(pM, gM.Filter("head.", "out."), make([]float32, 4*3))
		}},
		{"rows not a multiple of steps", func() error { _, err := lstmNet().Forward(pL, xL, 5, &Recurrence{Steps: 3}); return err }},
		{"zero steps", func() error { return lstmForward(Recurrence{Steps: 0}) }},
		{"short state", func() error { return lstmForward(Recurrence{Steps: 3, State: state[:2*ss-1], Stride: ss}) }},
		{"stride below the state size", func() error { return lstmForward(Recurrence{Steps: 3, State: state, Stride: ss - 1}) }},
		{"short final state", func() error { return lstmForward(Recurrence{Steps: 3, Final: make([]float32, 2*ss-1), Stride: ss}) }},
		{"final state without a stride", func() error { return lstmForward(Recurrence{Steps: 3, Final: make([]float32, 2*ss)}) }},
		{"short starts", func() error { return lstmForward(Recurrence{Steps: 3, Starts: make([]float32, 5)}) }},
		{"LSTM Backward without Forward", func() error { return lstmNet().Backward(pL, gL, make([]float32, 6*2)) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("panic: %v", r)
				}
			}()
			if err := c.run(); err == nil {
				t.Fatal("no error")
			} else {
				t.Log(err)
			}
		})
	}
	// The same calls with the sizes right succeed: the errors above are about the sizes.
	if err := lstmForward(Recurrence{Steps: 3, State: state, Final: make([]float32, 2*ss), Stride: ss, Starts: make([]float32, 6)}); err != nil {
		t.Errorf("valid LSTM input: %v", err)
	}
	if _, err := mlpNet().Forward(pM, xM, 4, nil); err != nil {
		t.Errorf("valid MLP input: %v", err)
	}
}

// TestNetFeaturesAreTheOutputLayersInput checks Features against the output it feeds:
// out = features·W_out + b_out row by row, with and without head layers (then the
// features are the latent).
func TestNetFeaturesAreTheOutputLayersInput(t *testing.T) {
	for i, hidden := range [][]int{{8}, {7, 5}, nil} {
		spec := denseSpec(netconf.Tanh, false, []int{9}, hidden)
		spec.Head.MinLayers = 0
		t.Run(fmt.Sprint(hidden), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(41, uint64(i)))
			n, err := New(spec)
			if err != nil {
				t.Fatal(err)
			}
			if n.Features() != nil {
				t.Fatal("Features before any forward pass is not nil")
			}
			p, _ := netconf.Init(spec, rng)
			randomise(p, rng)
			const rows = 3
			lat, err := n.ForwardEncoder(p, randomInput(rng, rows*spec.Input[0]), rows, nil)
			if err != nil {
				t.Fatal(err)
			}
			lat = append([]float32(nil), lat...)
			out, err := n.ForwardHead(p, lat, rows)
			if err != nil {
				t.Fatal(err)
			}
			f, w := spec.FeatureWidth(), spec.LatentWidth()
			if len(hidden) > 0 {
				w = hidden[len(hidden)-1]
			}
			feat := n.Features()
			if f != w || len(feat) != rows*f {
				t.Fatalf("%d features of width %d, want %d rows of %d", len(feat), f, rows, w)
			}
			if len(hidden) == 0 && !sameBits(feat, lat) {
				t.Fatal("without head layers the features are not the latent")
			}
			W, b := p.Tensor("out.weight").Data, p.Tensor("out.bias").Data
			for r := range rows {
				for j := range spec.Output {
					want := float64(b[j])
					for k := range f {
						want += float64(feat[r*f+k]) * float64(W[k*spec.Output+j])
					}
					if got := float64(out[r*spec.Output+j]); math.Abs(got-want) > 1e-5 {
						t.Errorf("row %d output %d: %v, features·W + b = %v", r, j, got, want)
					}
				}
			}
		})
	}
}

// TestTransformerAddLayerKeepsTheFunction: transformer.add_layer, with the weights Transfer
// gives, leaves the network's outputs as they were (the appended layer's residual
// branches end at zero), from windows carried in a state with an episode start inside.
func TestTransformerAddLayerKeepsTheFunction(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	s0 := netTransformerSpec(1, netconf.Tanh)
	p0, err := netconf.Init(s0, rng)
	if err != nil {
		t.Fatal(err)
	}
	randomise(p0, rng)
	m, _ := netconf.LookupMutation("transformer.add_layer")
	s1, desc, changed := m.Apply(s0, rng)
	if !changed || s1.Transformer.Layers != 2 {
		t.Fatalf("%s: %v", desc, changed)
	}
	p1, err := netconf.Transfer(p0, s1, rng)
	if err != nil {
		t.Fatal(err)
	}
	out := func(s netconf.Spec, p netconf.Params) []float32 {
		n, err := New(s)
		if err != nil {
			t.Fatal(err)
		}
		rec := netWindowRecurrence(n, rand.New(rand.NewPCG(1, 1)))
		y, err := n.Forward(p, randomInput(rand.New(rand.NewPCG(2, 2)), 6*3), 6, rec)
		if err != nil {
			t.Fatal(err)
		}
		return append([]float32(nil), y...)
	}
	before, after := out(s0, p0), out(s1, p1)
	for i := range before {
		if d := math.Abs(float64(before[i] - after[i])); d > 1e-6 {
			t.Fatalf("output %d changed by %g after %s", i, d, desc)
		}
	}
}

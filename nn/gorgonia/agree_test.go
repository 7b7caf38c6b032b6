package gorgonia

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/evolverl/evolve/netconf"
	"github.com/evolverl/evolve/nn"
)

// agreeCase is an actor and a critic to run on both backends, with a batch shape and, for
// recurrent networks, the rows where an episode starts.
type agreeCase struct {
	family, name  string // family groups the cases whose worst error is reported together
	actor, critic netconf.Spec
	shared        bool
	rows, steps   int
	starts        []int
}

// agreeMLP is an MLP of the given layers with bounds wide enough for every case.
func agreeMLP(hidden []int, act netconf.Activation, norm bool) netconf.MLP {
	return netconf.MLP{Hidden: hidden, Activation: act, LayerNorm: norm, MinLayers: 1, MaxLayers: 3, MinNodes: 1, MaxNodes: 16}
}

func agreeCNN(channels, kernels, strides []int, act netconf.Activation) *netconf.CNN {
	return &netconf.CNN{Channels: channels, Kernels: kernels, Strides: strides, Activation: act,
		MinLayers: 1, MaxLayers: 3, MinChannels: 1, MaxChannels: 16}
}

// agreePair returns an actor (3 outputs) and a critic (one value) with the given encoders.
// Both have a latent of the same width, so the critic can also be a head on the actor's
// encoder; the critic's activation is another one than the actor's.
func agreePair(actorEnc, criticEnc func(s *netconf.Spec, act netconf.Activation, norm bool), act netconf.Activation, norm bool) (actor, critic netconf.Spec) {
	acts := netconf.Activations()
	other := acts[(slices.Index(acts, act)+3)%len(acts)]
	actor = netconf.Spec{Latent: netconf.Latent{Size: 4, Min: 1, Max: 16}, Head: agreeMLP([]int{5}, act, norm),
		Output: 3, OutputGain: netconf.PolicyGain}
	critic = netconf.Spec{Latent: netconf.Latent{Size: 4, Min: 1, Max: 16}, Head: agreeMLP([]int{5}, other, norm),
		Output: 1, OutputGain: netconf.ValueGain}
	actorEnc(&actor, act, norm)
	criticEnc(&critic, other, norm)
	return actor, critic
}

// agreeCases covers every encoder kind, with a shared and a separate critic: MLPs with and
// without LayerNorm in every activation; CNNs of two layers (kernels 3 and 2, strides 1 and
// 2) on a non-square image; LSTMs and GRUs of one and two layers over 4 steps with episode
// starts inside the sequences, the separate critic of another size (a one-layer GRU's an
// LSTM); and Dict networks with an MLP
// key and a CNN key. Feed-forward cases run on 1 and 7 rows, and two MLPs wider than the
// gemm tiles on 130 and 20.
func agreeCases() []agreeCase {
	type family struct {
		name          string
		actor, critic netconf.Spec
	}
	var fams []family
	for _, norm := range []bool{false, true} {
		for _, act := range netconf.Activations() {
			a, c := agreePair(
				func(s *netconf.Spec, act netconf.Activation, norm bool) {
					m := agreeMLP([]int{6, 5}, act, norm)
					s.Encoder, s.MLP, s.Input = netconf.EncoderMLP, &m, []int{5}
				},
				func(s *netconf.Spec, act netconf.Activation, norm bool) {
					m := agreeMLP([]int{6}, act, norm)
					s.Encoder, s.MLP, s.Input = netconf.EncoderMLP, &m, []int{5}
				}, act, norm)
			name := "mlp/plain/" + string(act)
			if norm {
				name = "mlp/layernorm/" + string(act)
			}
			fams = append(fams, family{name, a, c})
		}
	}
	for i, act := range []netconf.Activation{netconf.ReLU, netconf.ELU, netconf.Softsign} {
		a, c := agreePair(
			func(s *netconf.Spec, act netconf.Activation, _ bool) {
				s.Encoder, s.CNN, s.Input = netconf.EncoderCNN, agreeCNN([]int{3, 4}, []int{3, 2}, []int{1, 2}, act), []int{2, 9, 7}
			},
			func(s *netconf.Spec, act netconf.Activation, _ bool) {
				s.Encoder, s.CNN, s.Input = netconf.EncoderCNN, agreeCNN([]int{2}, []int{3}, []int{2}, act), []int{2, 9, 7}
			}, act, i == 1)
		fams = append(fams, family{"cnn/" + string(act), a, c})
	}
	// An actor without head layers: its output layer reads the latent (the features gSDE
	// uses are the latent then).
	a, c := agreePair(func(s *netconf.Spec, act netconf.Activation, norm bool) {
		m := agreeMLP([]int{6}, act, norm)
		s.Encoder, s.MLP, s.Input = netconf.EncoderMLP, &m, []int{5}
		s.Head = agreeMLP(nil, act, norm)
		s.Head.MinLayers = 0
	}, func(s *netconf.Spec, act netconf.Activation, norm bool) {
		m := agreeMLP([]int{6}, act, norm)
		s.Encoder, s.MLP, s.Input = netconf.EncoderMLP, &m, []int{5}
	}, netconf.Tanh, false)
	fams = append(fams, family{"mlp/nohead/Tanh", a, c})
	dictEnc := func(mlp []int, cnn *netconf.CNN) func(s *netconf.Spec, act netconf.Activation, norm bool) {
		return func(s *netconf.Spec, act netconf.Activation, norm bool) {
			m := agreeMLP(mlp, act, norm)
			c := *cnn
			c.Activation = act
			// s.Encoder and s.MLP are the template the keys were derived from; a Dict network
			// ignores them.
			s.Encoder, s.MLP = netconf.EncoderMLP, &m
			km := m
			km.Hidden = slices.Clone(mlp)
			s.Inputs = []netconf.KeyInput{
				{Key: "pos", Encoder: netconf.EncoderMLP, MLP: &km, Input: []int{4}},
				{Key: "img", Encoder: netconf.EncoderCNN, CNN: &c, Input: []int{2, 6, 5}},
			}
			s.Input = []int{4 + 2*6*5}
		}
	}
	for _, act := range []netconf.Activation{netconf.GELU, netconf.LeakyReLU} {
		a, c := agreePair(
			dictEnc([]int{5, 4}, agreeCNN([]int{3, 2}, []int{3, 2}, []int{1, 2}, act)),
			dictEnc([]int{5}, agreeCNN([]int{2}, []int{3}, []int{2}, act)), act, act == netconf.GELU)
		fams = append(fams, family{"dict/" + string(act), a, c})
	}

	var cs []agreeCase
	add := func(f family, shared bool, rows, steps int, starts []int, shape string) {
		kind, _, _ := strings.Cut(f.name, "/")
		sharing := "/separate/"
		if shared {
			sharing = "/shared/"
		}
		cs = append(cs, agreeCase{family: kind, name: f.name + sharing + shape,
			actor: f.actor, critic: f.critic, shared: shared, rows: rows, steps: steps, starts: starts})
	}
	for _, f := range fams {
		for _, shared := range []bool{false, true} {
			for _, rows := range []int{1, 7} {
				add(f, shared, rows, 1, nil, fmt.Sprintf("rows=%d", rows))
			}
		}
	}
	// MLPs wider than the plain-Go gemm's 64×128 tiles, on more rows than a tile holds
	// and on a few, so the tiling is held to the reference too.
	for _, w := range []struct {
		enc  []int
		rows int
	}{{[]int{70, 129}, 130}, {[]int{150, 70}, 20}} {
		a, c := agreePair(func(s *netconf.Spec, act netconf.Activation, norm bool) {
			m := agreeMLP(w.enc, act, norm)
			m.MaxNodes = 256
			s.Encoder, s.MLP, s.Input = netconf.EncoderMLP, &m, []int{5}
			s.Head = agreeMLP([]int{66}, act, norm)
			s.Head.MaxNodes = 256
		}, func(s *netconf.Spec, act netconf.Activation, norm bool) {
			m := agreeMLP([]int{6}, act, norm)
			s.Encoder, s.MLP, s.Input = netconf.EncoderMLP, &m, []int{5}
		}, netconf.ReLU, false)
		add(family{fmt.Sprintf("mlp/wide%v/ReLU", w.enc), a, c}, false, w.rows, 1, nil, fmt.Sprintf("rows=%d", w.rows))
	}
	recurrent := func(kind netconf.EncoderKind, hidden, layers int) func(*netconf.Spec, netconf.Activation, bool) {
		return func(s *netconf.Spec, _ netconf.Activation, _ bool) {
			m := &netconf.LSTM{Hidden: hidden, Layers: layers, MinHidden: 1, MaxHidden: 16, MinLayers: 1, MaxLayers: 3}
			s.Encoder, s.Input, s.LSTM, s.GRU = kind, []int{4}, nil, nil
			switch kind {
			case netconf.EncoderGRU:
				s.GRU = m
			case netconf.EncoderTransformer: // width 2·hidden, 2 heads, a context of 3
				s.Transformer = &netconf.Transformer{Layers: layers, Heads: 2, Width: 2 * hidden, MLP: 3 * hidden, Context: 3,
					MinLayers: 1, MaxLayers: 3, MinWidth: 2, MaxWidth: 32, MinContext: 2, MaxContext: 8}
			default:
				s.LSTM = m
			}
		}
	}
	for _, kl := range []struct {
		kind, criticKind netconf.EncoderKind
		layers           int
	}{
		{netconf.EncoderLSTM, netconf.EncoderLSTM, 1},
		{netconf.EncoderLSTM, netconf.EncoderLSTM, 2},
		{netconf.EncoderGRU, netconf.EncoderLSTM, 1}, // a GRU actor beside an LSTM critic
		{netconf.EncoderGRU, netconf.EncoderGRU, 2},
		{netconf.EncoderTransformer, netconf.EncoderGRU, 1}, // a Transformer actor beside a GRU critic
		{netconf.EncoderTransformer, netconf.EncoderTransformer, 2},
	} {
		a, c := agreePair(recurrent(kl.kind, 5, kl.layers), recurrent(kl.criticKind, 3, 3-kl.layers), netconf.Tanh, false)
		f := family{fmt.Sprintf("%s/%dlayer", kl.kind, kl.layers), a, c}
		for _, shared := range []bool{false, true} {
			// Row t·3 + s is step t of sequence s: sequence 1 drops its initial state at
			// step 0, sequence 0 starts anew at step 2, sequence 2 at steps 1, 2 and 3.
			add(f, shared, 3*4, 4, []int{1, 5, 6, 8, 11}, "batch=3/steps=4/starts")
			add(f, shared, 3*4, 4, nil, "batch=3/steps=4/no-starts")
			add(f, shared, 1*4, 4, []int{2}, "batch=1/steps=4/starts")
		}
	}
	return cs
}

// agreeInputs are the weights and batch both backends are given, and the output gradients
// for Backward.
type agreeInputs struct {
	pa, pc         netconf.Params
	batch          nn.Batch // Final unset: each backend gets its own
	dOut, dValues  []float32
	stateSize, seq int
}

func newAgreeInputs(t *testing.T, c agreeCase, seed uint64) *agreeInputs {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 17))
	pa, err := netconf.Init(c.actor, rng)
	if err != nil {
		t.Fatalf("actor %s: %v", c.actor, err)
	}
	pc, err := netconf.Init(c.critic, rng)
	if err != nil {
		t.Fatalf("critic %s: %v", c.critic, err)
	}
	if c.shared {
		pc = pc.Filter("head.", "out.")
	}
	// Init leaves biases and LayerNorm shifts at zero and scales at one, which would hide a
	// bias added twice or a shift read as a scale.
	for _, p := range []netconf.Params{pa, pc} {
		for _, tensor := range p {
			for i := range tensor.Data {
				tensor.Data[i] += float32(0.1 * rng.NormFloat64())
			}
		}
	}
	in := &agreeInputs{pa: pa, pc: pc, seq: c.rows / c.steps,
		stateSize: c.actor.StateSize(), dOut: randomInput(rng, c.rows*c.actor.Output), dValues: randomInput(rng, c.rows)}
	if !c.shared {
		in.stateSize += c.critic.StateSize()
	}
	in.batch = nn.Batch{Actor: pa, Critic: pc, Obs: randomInput(rng, c.rows*shapeSize(c.actor.Input)), Rows: c.rows, Steps: c.steps}
	if in.stateSize > 0 {
		in.batch.State = randomInput(rng, in.seq*in.stateSize)
	}
	if c.starts != nil {
		in.batch.Starts = make([]float32, c.rows)
		for _, r := range c.starts {
			in.batch.Starts[r] = 1
		}
	}
	return in
}

// agreeRun is what one backend computed.
type agreeRun struct {
	out, values, final []float32
	features           []float32 // the actor's output layer's input
	gActor, gCritic    netconf.Params
}

// run builds the backend's model and runs Forward and Backward on the inputs.
func (in *agreeInputs) run(t *testing.T, backend string, c agreeCase) agreeRun {
	t.Helper()
	be, err := nn.Lookup(backend)
	if err != nil {
		t.Fatal(err)
	}
	m, err := be.NewModel(c.actor, c.critic, c.shared)
	if err != nil {
		t.Fatalf("%s backend: %v", backend, err)
	}
	if n := m.StateSize(); n != in.stateSize {
		t.Fatalf("%s backend: state size %d, want %d", backend, n, in.stateSize)
	}
	b := in.batch
	if in.stateSize > 0 {
		b.Final = make([]float32, in.seq*in.stateSize)
	}
	out, values, err := m.Forward(b)
	if err != nil {
		t.Fatalf("%s backend: forward: %v", backend, err)
	}
	fm, ok := m.(nn.FeatureModel)
	if !ok {
		t.Fatalf("%s backend: the model is no nn.FeatureModel", backend)
	}
	r := agreeRun{out: slices.Clone(out), values: slices.Clone(values), final: b.Final,
		features: slices.Clone(fm.ActorFeatures()), gActor: zerosLike(in.pa), gCritic: zerosLike(in.pc)}
	if want := in.batch.Rows * c.actor.FeatureWidth(); len(r.features) != want {
		t.Fatalf("%s backend: %d actor features, want %d", backend, len(r.features), want)
	}
	if err := m.Backward(in.dOut, in.dValues, r.gActor, r.gCritic); err != nil {
		t.Fatalf("%s backend: backward: %v", backend, err)
	}
	return r
}

// TestBackendsAgreeOnOutputsAndGradients runs the plain-Go backend and this reference
// backend on the same weights, observations, initial states and episode starts, and holds
// every output, final state and parameter gradient of the plain-Go one to the reference's:
// |go − gorgonia| ≤ max(agreeTol · max|gorgonia|, agreeFloor) over each tensor.
func TestBackendsAgreeOnOutputsAndGradients(t *testing.T) {
	// Both sides compute in float32, summing in different orders, so most tensors agree to
	// a few 1e-7 of their largest entry. A tensor whose entries come from sums that cancel
	// (a bias gradient over the rows, the gradient through a LayerNorm of few units) loses
	// precision relative to its own size: measured against a float64 graph, either side is
	// then off by up to ~1.5e-5 relative but ~1e-6 absolute, which the floor allows. A wrong
	// formula is off by the size of the values.
	const agreeTol, agreeFloor = 1e-5, 1e-6
	type stats struct{ rel, bound float64 } // worst relative error, worst error / allowed
	worst := map[string]stats{}
	var families []string
	for i, c := range agreeCases() {
		if !slices.Contains(families, c.family) {
			families = append(families, c.family)
		}
		t.Run(c.name, func(t *testing.T) {
			in := newAgreeInputs(t, c, uint64(i))
			ref := in.run(t, Name, c)
			got := in.run(t, nn.DefaultBackend, c)
			check := func(what string, g, w []float32) {
				t.Helper()
				if len(g) != len(w) {
					t.Fatalf("%s: %d values from the go backend, %d from gorgonia", what, len(g), len(w))
				}
				diff, scale := 0.0, 0.0
				for j := range w {
					diff = max(diff, math.Abs(float64(g[j])-float64(w[j])))
					scale = max(scale, math.Abs(float64(w[j])))
				}
				allowed := max(agreeTol*scale, agreeFloor)
				s := worst[c.family]
				s.bound = max(s.bound, diff/allowed)
				if scale > 0 {
					s.rel = max(s.rel, diff/scale)
				}
				worst[c.family] = s
				if diff > allowed {
					t.Errorf("%s: differs by %.2g, %.2g relative; allowed %.2g\ngo       %v\ngorgonia %v", what, diff, diff/scale, allowed, g, w)
				}
			}
			check("actor output", got.out, ref.out)
			check("values", got.values, ref.values)
			check("actor features", got.features, ref.features)
			check("final state", got.final, ref.final)
			for k, side := range []struct{ g, w netconf.Params }{{got.gActor, ref.gActor}, {got.gCritic, ref.gCritic}} {
				for j, tensor := range side.w {
					check([]string{"actor ", "critic "}[k]+tensor.Name+" gradient", side.g[j].Data, tensor.Data)
				}
			}
		})
	}
	for _, f := range families {
		t.Logf("%s: worst relative error %.2g, worst error %.2g of the allowed", f, worst[f].rel, worst[f].bound)
	}
}

// TestBackendsResetTheStateAtEpisodeStarts: on both backends, a sequence with an episode
// start at step t computes from there what a fresh sequence of the remaining steps computes
// from a zero state, for the actor, a separate critic and the final state; for a two-layer
// LSTM, GRU and Transformer.
func TestBackendsResetTheStateAtEpisodeStarts(t *testing.T) {
	for _, family := range []string{"lstm", "gru", "transformer"} {
		t.Run(family, func(t *testing.T) {
			for _, ac := range agreeCases() {
				if ac.family == family && !ac.shared && memoryLayers(ac.actor) == 2 && ac.starts == nil {
					checkResetAtEpisodeStart(t, ac)
					return
				}
			}
			t.Fatalf("no %s case", family)
		})
	}
}

// memoryLayers is the number of layers of s's encoder with memory.
func memoryLayers(s netconf.Spec) int {
	if s.Transformer != nil && s.Encoder == netconf.EncoderTransformer {
		return s.Transformer.Layers
	}
	return s.Memory().Layers
}

// checkResetAtEpisodeStart runs c's batch 3 × 4 steps with an episode start at step 2 of
// sequence 1 against that sequence's last two steps alone.
func checkResetAtEpisodeStart(t *testing.T, c agreeCase) {
	const batch, steps, start, seq = 3, 4, 2, 1 // the episode of sequence 1 starts at step 2
	in := newAgreeInputs(t, c, 1)
	in.batch.Starts = make([]float32, batch*steps)
	in.batch.Starts[start*batch+seq] = 1
	rest := agreeCase{actor: c.actor, critic: c.critic, rows: steps - start, steps: steps - start}
	tail := &agreeInputs{pa: in.pa, pc: in.pc, stateSize: in.stateSize, seq: 1, dOut: in.dOut[:rest.rows*c.actor.Output], dValues: in.dValues[:rest.rows],
		batch: nn.Batch{Actor: in.pa, Critic: in.pc, Rows: rest.rows, Steps: rest.steps}}
	obs := shapeSize(c.actor.Input)
	for step := start; step < steps; step++ {
		r := step*batch + seq
		tail.batch.Obs = append(tail.batch.Obs, in.batch.Obs[r*obs:(r+1)*obs]...)
	}
	for _, backend := range []string{nn.DefaultBackend, Name} {
		t.Run(backend, func(t *testing.T) {
			all, fresh := in.run(t, backend, c), tail.run(t, backend, rest)
			for step := start; step < steps; step++ {
				r, o := step*batch+seq, c.actor.Output
				if d := maxAbsDiff(all.out[r*o:(r+1)*o], fresh.out[(step-start)*o:(step-start+1)*o]); d > 1e-6 {
					t.Errorf("step %d: actor output differs from a fresh episode's by %g", step, d)
				}
				if d := maxAbsDiff(all.values[r:r+1], fresh.values[step-start:step-start+1]); d > 1e-6 {
					t.Errorf("step %d: value differs from a fresh episode's by %g", step, d)
				}
			}
			if d := maxAbsDiff(all.final[seq*in.stateSize:(seq+1)*in.stateSize], fresh.final); d > 1e-6 {
				t.Errorf("final state differs from a fresh episode's by %g", d)
			}
		})
	}
}

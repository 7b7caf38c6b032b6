package agent

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/evolverl/evolve/buffer"
	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/netconf"
	_ "github.com/evolverl/evolve/nn/gorgonia" // the reference backend
)

// backends are the two network backends an agent can run on: the plain-Go
// one it uses by default, and the gorgonia reference.
var backends = []string{"go", "gorgonia"}

// benchEncoder is an agent of one encoder kind at the sizes of the
// matched peer configs (../shared/peers/go-configs), so that the numbers
// here can be set beside the PyTorch peers'.
type benchEncoder struct {
	name string
	env  string
	cfg  func() Config
}

func benchEncoders() []benchEncoder {
	mlp := func() Config { // mlp-matched: Tanh 64 → latent 32 → head 64, batch 256
		c := DefaultConfig()
		c.BatchSize, c.LearnStep, c.UpdateEpochs = 256, 256, 20
		c.Net = netconf.DefaultSpec(netconf.EncoderMLP)
		c.Net.MLP.Hidden, c.Net.MLP.Activation = []int{64}, netconf.Tanh
		c.Net.Latent.Size = 32
		c.Net.Head.Hidden, c.Net.Head.Activation = []int{64}, netconf.Tanh
		return c
	}
	relu := func() Config { return DefaultConfig() } // the CartPole default: ReLU 64-64, batch 64
	cnn := func() Config {                           // cnn-matched-catch: conv 50 3×3 → latent 128 → head 16, shared, batch 256
		c := DefaultConfig()
		c.BatchSize, c.LearnStep, c.ShareEncoders = 256, 1024, true
		c.Net = netconf.DefaultSpec(netconf.EncoderCNN)
		c.Net.CNN.Channels, c.Net.CNN.Kernels, c.Net.CNN.Strides = []int{50}, []int{3}, []int{1}
		c.Net.Latent.Size = 128
		c.Net.Head.Hidden = []int{16}
		return c
	}
	breakout := func() Config { // configs/peers/minatar-breakout-matched: conv 16 3×3 → latent 128 → no head layer, shared, batch 256
		c := cnn()
		c.Net.CNN.Channels = []int{16}
		c.Net.Head.Hidden, c.Net.Head.MinLayers = []int{}, 0
		return c
	}
	lstm := func() Config { // lstm-matched: LSTM 64 → latent 32 → head 64, sequences of 32, batch 256
		c := DefaultConfig()
		c.BatchSize, c.LearnStep, c.UpdateEpochs, c.MaxSeqLen, c.NormalizeObs = 256, 256, 20, 32, true
		c.Net = netconf.DefaultSpec(netconf.EncoderLSTM)
		c.Net.LSTM.Hidden = 64
		c.Net.Latent.Size = 32
		c.Net.Head.Hidden = []int{64}
		return c
	}
	return []benchEncoder{
		{"mlp-relu", "CartPole-v1", relu},
		{"mlp-tanh", "CartPole-v1", mlp},
		{"cnn", "Catch-v0", cnn},
		{"cnn-breakout", "MinAtar/Breakout-v0", breakout},
		{"lstm", "CartPoleNoVel-v1", lstm},
		{"gru", "CartPoleNoVel-v1", func() Config { // the lstm case with a GRU of the same width
			c := lstm()
			c.Net, _ = c.Net.WithMemory(netconf.EncoderGRU)
			return c
		}},
		{"transformer", "CartPoleNoVel-v1", func() Config { // docs/bench/memory-speed/transformer-matched
			c := lstm()
			c.Net.Encoder, c.Net.LSTM = netconf.EncoderTransformer, nil
			c.Net.Transformer = &netconf.Transformer{Layers: 1, Heads: 2, Width: 16, MLP: 32, Context: 8,
				MinLayers: 1, MaxLayers: 3, MinWidth: 8, MaxWidth: 256, MinContext: 2, MaxContext: 128}
			return c
		}},
	}
}

// BenchmarkPPOCartPole trains one agent with the default config on 8
// CartPole-v1 envs until a deterministic evaluation over 10 episodes
// reaches 475, and reports the env steps and wall time that took and the
// training throughput, on each backend. It is a benchmark of the whole
// agent, not a test: run it with -benchtime 1x.
func BenchmarkPPOCartPole(b *testing.B) {
	for _, be := range backends {
		b.Run("backend="+be, func(b *testing.B) { benchCartPole(b, be) })
	}
}

func benchCartPole(b *testing.B, backend string) {
	for range b.N {
		vec, err := envs.MakeVector("CartPole-v1", 8, nil)
		if err != nil {
			b.Fatal(err)
		}
		cfg := DefaultConfig()
		cfg.Backend = backend
		a, err := New(vec.ObservationSpace(), vec.ActionSpace(), cfg, 1)
		if err != nil {
			b.Fatal(err)
		}
		eval, _ := envs.Make("CartPole-v1", nil)
		start := time.Now()
		var train time.Duration
		solved := false
		for a.Steps < 500_000 {
			t0 := time.Now()
			if _, err := a.Train(context.Background(), vec, 2048); err != nil {
				b.Fatal(err)
			}
			train += time.Since(t0)
			ret, err := a.Evaluate(eval, 10, 1000, 1)
			if err != nil {
				b.Fatal(err)
			}
			if ret >= 475 {
				solved = true
				break
			}
		}
		if !solved {
			b.Fatalf("not solved in %d steps", a.Steps)
		}
		b.ReportMetric(float64(a.Steps), "steps-to-475")
		b.ReportMetric(time.Since(start).Seconds(), "s-to-475")
		b.ReportMetric(float64(a.Steps)/train.Seconds(), "train-steps/s")
	}
}

// benchAgent returns an agent of e on 8 envs with one collected rollout,
// on the named backend.
func benchAgent(b *testing.B, e benchEncoder, backend string) *PPO {
	vec, err := envs.MakeVector(e.env, 8, nil)
	if err != nil {
		b.Fatal(err)
	}
	cfg := e.cfg()
	cfg.Backend = backend
	a, err := New(vec.ObservationSpace(), vec.ActionSpace(), cfg, 1)
	if err != nil {
		b.Fatal(err)
	}
	if err := a.startRollout(vec); err != nil {
		b.Fatal(err)
	}
	if _, _, _, err := a.collect(new([]float64)); err != nil {
		b.Fatal(err)
	}
	return a
}

// firstMinibatch is the first minibatch Learn would take from the rollout.
func firstMinibatch(a *PPO) minibatch {
	buf := a.roll.buf
	if a.recurrent() {
		L := a.cfg.MaxSeqLen
		seqs, _ := buf.Sequences(a.mode(), L)
		per := max(1, a.cfg.BatchSize/L)
		sb := buffer.NewSeqBatch(buf.Dims, L, per)
		group := make([]buffer.Sequence, per)
		copy(group, seqs)
		buf.GatherSequences(group, sb)
		return seqBatch(sb, L)
	}
	idx, _ := buf.Minibatches(a.rng, a.cfg.BatchSize)
	batch := buffer.NewBatch(buf.Dims, a.cfg.BatchSize)
	buf.Gather(idx[0], batch)
	return flatBatch(batch)
}

// BenchmarkUpdate is one PPO minibatch step (forward, loss, backward,
// clipping and Adam) per encoder at the matched configs' sizes, on each
// backend. flop/s counts the networks' multiply-adds (2 flops each) of the
// forward and backward passes: see updateFLOPs.
func BenchmarkUpdate(b *testing.B) {
	for _, e := range benchEncoders() {
		for _, be := range backends {
			b.Run(fmt.Sprintf("%s/backend=%s", e.name, be), func(b *testing.B) {
				a := benchAgent(b, e, be)
				mb := firstMinibatch(a)
				b.ReportAllocs()
				for b.Loop() {
					if _, err := a.update(mb); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(updateFLOPs(a, mb.rows)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// updateFLOPs counts the flops of the networks' matrix products in one
// update over rows rows: 2 per multiply-add, three products per layer
// (forward, input gradient, weight gradient), except that the first
// layer's input gradient is not computed.
func updateFLOPs(a *PPO, rows int) float64 {
	fwd, first := netFLOPs(a.actorSpec)
	total := 3*fwd - first
	if a.cfg.ShareEncoders {
		head, _ := headFLOPs(a.criticSpec)
		total += 3 * head
	} else {
		fc, firstC := netFLOPs(a.criticSpec)
		total += 3*fc - firstC
	}
	return float64(rows) * total
}

// netFLOPs returns the forward flops per row of a network and those of its
// first layer.
func netFLOPs(s netconf.Spec) (total, first float64) {
	in := s.Input[0]
	switch {
	case s.Encoder == netconf.EncoderMLP:
		for _, h := range s.MLP.Hidden {
			f := 2 * float64(in*h)
			if first == 0 {
				first = f
			}
			total += f
			in = h
		}
	case s.Encoder == netconf.EncoderCNN:
		c, h, w := s.Input[0], s.Input[1], s.Input[2]
		for i, out := range s.CNN.Channels {
			k, st := s.CNN.Kernels[i], s.CNN.Strides[i]
			oh, ow := (h-k)/st+1, (w-k)/st+1
			f := 2 * float64(out*c*k*k*oh*ow)
			if first == 0 {
				first = f
			}
			total += f
			c, h, w = out, oh, ow
		}
		in = c * h * w
	case s.Memory() != nil:
		gates := len(netconf.Gates(s.Encoder)) // 4 for an LSTM, 3 for a GRU
		for range s.Memory().Layers {
			f := 2 * float64(gates*s.Memory().Hidden*(in+s.Memory().Hidden))
			if first == 0 {
				first = f
			}
			total += f
			in = s.Memory().Hidden
		}
	case s.Encoder == netconf.EncoderTransformer:
		// Per window of K positions: the embedding, then per layer the four projections,
		// the MLP and the causal attention (about K/2 keys per query, scores and values).
		t := s.Transformer
		K, D := float64(t.Context), float64(t.Width)
		first = 2 * K * float64(in) * D
		total = first + float64(t.Layers)*2*K*(4*D*D+2*D*float64(t.MLP)+K*D)
		in = t.Width
	}
	lat := 2 * float64(in*s.Latent.Size)
	if first == 0 {
		first = lat
	}
	head, _ := headFLOPs(s)
	return total + lat + head, first
}

// headFLOPs returns the forward flops per row of the head and output layer.
func headFLOPs(s netconf.Spec) (float64, float64) {
	in, total := s.LatentWidth(), 0.0
	for _, h := range s.Head.Hidden {
		total += 2 * float64(in*h)
		in = h
	}
	return total + 2*float64(in*s.Output), 0
}

// BenchmarkCollectStep is one vectorised acting step over 8 envs per
// encoder: preprocessing, the policy and value forward pass, sampling and
// the env step, on each backend.
func BenchmarkCollectStep(b *testing.B) {
	for _, e := range benchEncoders() {
		for _, be := range backends {
			b.Run(fmt.Sprintf("%s/backend=%s", e.name, be), func(b *testing.B) {
				a := benchAgent(b, e, be)
				r := a.roll
				x := make([]float32, len(r.obs))
				b.ReportAllocs()
				for b.Loop() {
					a.preprocess(x, r.obs, true)
					if err := a.act(x, r.masks, r.state, false, false, &r.out); err != nil {
						b.Fatal(err)
					}
					res, err := r.vec.Step(r.out.envActions)
					if err != nil {
						b.Fatal(err)
					}
					copy(r.obs, res.Obs)
				}
			})
		}
	}
}

// BenchmarkAct is the public Act on one CartPole row with the default
// 64×64 network, as a Go program that deploys an agent calls it: it
// allocates the slices it returns (docs/agents.md gives the figures).
func BenchmarkAct(b *testing.B) {
	a, err := New(envs.Box{Low: make([]float32, 4), High: make([]float32, 4), Dims: []int{4}}, envs.Discrete{N: 2}, DefaultConfig(), 1)
	if err != nil {
		b.Fatal(err)
	}
	obs := []float32{0.01, -0.02, 0.03, 0.04}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Act(obs, nil, true); err != nil {
			b.Fatal(err)
		}
	}
}

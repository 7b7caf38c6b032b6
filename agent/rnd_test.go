package agent

import (
	"bytes"
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/netconf"
)

// rndAgent is an RND agent (rnd_coef 0.5, small networks) on 4 envs of
// id, bound to its vector.
func rndAgent(t *testing.T, id string, opts envs.Options, seed uint64) *PPO {
	t.Helper()
	cfg := probeConfig(netconf.EncoderMLP)
	cfg.LearnStep, cfg.BatchSize, cfg.LR = 4*64, 64, 1e-3
	cfg.RNDCoef, cfg.RNDHidden, cfg.RNDEmbed = 0.5, 16, 8
	return boundAgent(t, id, opts, cfg, seed, nil)
}

// mlpRef is a second implementation of an RND network's forward pass, from
// the tensors' definitions: ReLU(ReLU(x·W0 + b0)·Wl + bl)·Wo + bo, each
// weight [in, out] row-major, in float64.
func mlpRef(p netconf.Params, x []float32) []float64 {
	layer := func(in []float64, name string, relu bool) []float64 {
		w, b := p.Tensor(name+".weight"), p.Tensor(name+".bias")
		nIn, nOut := w.Shape[0], w.Shape[1]
		out := make([]float64, nOut)
		for j := range nOut {
			z := float64(b.Data[j])
			for i := range nIn {
				z += in[i] * float64(w.Data[i*nOut+j])
			}
			if relu {
				z = max(z, 0)
			}
			out[j] = z
		}
		return out
	}
	in := make([]float64, len(x))
	for i, v := range x {
		in[i] = float64(v)
	}
	return layer(layer(layer(in, "encoder.mlp.0", true), "latent", true), "out", false)
}

// TestRNDIntrinsicRewardsAndAdvantages collects a rollout on CartPole and
// recomputes, with mlpRef and the definitions, every part of it: the
// observation statistics of the next observations, the normalised
// intrinsic rewards ½‖f̂(x') − f(x')‖²/σ, V_int and the non-episodic GAE
// advantages as sums of discounted temporal differences, and the buffer's
// advantages 2·A_ext + rnd_coef·A_int.
func TestRNDIntrinsicRewardsAndAdvantages(t *testing.T) {
	a := rndAgent(t, "CartPole-v1", nil, 3)
	for range 2 { // the second rollout: statistics and returns carried over
		if _, err := a.Train(context.Background(), a.roll.vec, 1); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, _, err := a.collect(new([]float64)); err != nil {
		t.Fatal(err)
	}
	m, w, buf := a.rnd, a.rnd.work, a.roll.buf
	n, T, size := buf.Envs, buf.Steps, a.obsSpace.FlatSize()
	rows := T * n
	if c := m.obs.Count; math.Abs(c-(1e-4+3*float64(rows))) > 1e-6 {
		t.Errorf("observation statistics count %v, want 3 rollouts of next observations, %d", c, 3*rows)
	}
	combined := slices.Clone(buf.Advantages)
	if err := a.estimate(false); err != nil { // the extrinsic advantages again
		t.Fatal(err)
	}
	std := math.Sqrt(m.ret.Var[0] + 1e-8)
	norm := func(x []float32) []float32 {
		out := make([]float32, len(x))
		for k, v := range x {
			i := k % size
			z := (float64(v) - m.obs.Mean[i]) / math.Sqrt(m.obs.Var[i]+1e-8)
			out[k] = float32(max(-5, min(5, z)))
		}
		return out
	}
	val := make([]float64, rows+n)
	for j := range rows + n {
		var x []float32
		if j < rows {
			x = w.cur[j*size : (j+1)*size]
		} else {
			x = a.roll.obs[(j-rows)*size : (j-rows+1)*size]
		}
		val[j] = mlpRef(m.critic, norm(x))[0]
	}
	rew := make([]float64, rows)
	for j := range rows {
		x := norm(w.next[j*size : (j+1)*size])
		p, f := mlpRef(m.predictor, x), mlpRef(m.target, x)
		e := 0.0
		for k := range p {
			e += (p[k] - f[k]) * (p[k] - f[k])
		}
		rew[j] = e / 2 / std
		if d := math.Abs(rew[j] - float64(w.rew[j])); d > 1e-4*max(1, rew[j]) {
			t.Fatalf("row %d: intrinsic reward %g, recomputed %g", j, w.rew[j], rew[j])
		}
	}
	s := a.cfg.rnd()
	for i := range n {
		for t0 := range T {
			adv := 0.0
			for k := t0; k < T; k++ {
				j := k*n + i
				next := val[j+n] // the next row's value, or after the rollout the bootstrap
				delta := rew[j] + s.gamma*next - val[j]
				adv += math.Pow(s.gamma*a.cfg.GAELambda, float64(k-t0)) * delta
			}
			j := t0*n + i
			want := s.ext*float64(buf.Advantages[j]) + s.coef*adv
			if d := math.Abs(want - float64(combined[j])); d > 1e-3*max(1, math.Abs(want)) {
				t.Fatalf("env %d step %d: advantage %g, want 2·%g + 0.5·%g = %g", i, t0, combined[j], buf.Advantages[j], adv, want)
			}
		}
	}
}

// TestRNDLossGradientMatchesFiniteDifferences holds the gradient of RND's
// loss on a minibatch, half of its rows kept for the predictor, against
// central differences of the loss, for weights of every tensor of the
// predictor and the intrinsic critic.
func TestRNDLossGradientMatchesFiniteDifferences(t *testing.T) {
	a := rndAgent(t, "CartPole-v1", nil, 5)
	if _, _, _, err := a.collect(new([]float64)); err != nil {
		t.Fatal(err)
	}
	w, s := a.rnd.work, a.cfg.rnd()
	idx := []int{0, 3, 7, 12, 40, 41, 100, 255}
	keep := []bool{true, false, true, true, false, true, false, true}
	loss := func() float64 {
		l, err := a.rndLossGrad(w, s, idx, keep)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	loss()
	grads := cloneSlices(w.grads)
	names := []string{}
	a.rnd.eachTensor(func(name string, _ []int, _ *[]float32, trained bool) {
		if trained {
			names = append(names, name)
		}
	})
	const eps = 1e-3
	checked := 0
	for ti, p := range w.params {
		for _, k := range []int{0, len(p) / 2, len(p) - 1} {
			keepV := p[k]
			p[k] = keepV + eps
			up := loss()
			p[k] = keepV - eps
			down := loss()
			p[k] = keepV
			fd := (up - down) / (2 * eps)
			g := float64(grads[ti][k])
			if math.Abs(fd-g) > 5e-3*math.Abs(fd)+3e-4 {
				t.Errorf("%s[%d]: gradient %g, finite differences %g", names[ti], k, g, fd)
			}
			checked++
		}
	}
	if checked != 3*len(names) || len(names) != 12 {
		t.Errorf("checked %d weights of %d tensors, want 3 of each of 12 (predictor and critic, 6 each)", checked, len(names))
	}
}

// TestRNDPredictorLearnsWhatItSees: updates on DeepSea's rollouts bring
// the prediction error of the observations seen down, and leave the
// error of observations never seen (random points of the grid's image)
// well above it: the intrinsic reward marks novelty.
func TestRNDPredictorLearnsWhatItSees(t *testing.T) {
	a := rndAgent(t, "DeepSea-v0", envs.Options{"size": 8, "flat": true}, 11)
	errOf := func(rows []float32) float64 {
		w, s := a.rnd.work, a.cfg.rnd()
		x := a.rnd.normalize(nil, rows)
		n := len(rows) / a.obsSpace.FlatSize()
		tOut, _ := w.tNet.Forward(a.rnd.target, x, n, nil)
		tOut = slices.Clone(tOut)
		pOut, _ := w.pNet.Forward(a.rnd.predictor, x, n, nil)
		e := 0.0
		for k := range n * s.embed {
			e += float64((pOut[k] - tOut[k]) * (pOut[k] - tOut[k]))
		}
		return e / float64(n)
	}
	if _, err := a.Train(context.Background(), a.roll.vec, 1); err != nil {
		t.Fatal(err)
	}
	seen := slices.Clone(a.rnd.work.next)
	before := errOf(seen)
	for range 30 {
		if _, err := a.Train(context.Background(), a.roll.vec, 1); err != nil {
			t.Fatal(err)
		}
	}
	after := errOf(seen)
	// Unseen: the grid's image with the agent at random far-right cells.
	size := a.obsSpace.FlatSize()
	var unseen []float32
	for r := 2; r < 8; r++ {
		x := make([]float32, size)
		x[r*8+7] = 1
		unseen = append(unseen, x...)
	}
	novel := errOf(unseen)
	if !(after < before/3) || !(novel > 1.5*after) {
		t.Errorf("prediction error of the first rollout %.4g → %.4g after 30 updates; of unseen cells %.4g: want the first to fall 3× and the unseen 1.5× above", before, after, novel)
	}
}

// TestRNDAgentSavesLoadsAndClones: an RND agent saved after two updates
// and loaded trains on exactly as the original (the networks, their
// optimizer and the statistics all in the file), and a clone owns its RND
// state.
func TestRNDAgentSavesLoadsAndClones(t *testing.T) {
	a := rndAgent(t, "CartPole-v1", nil, 13)
	ctx := context.Background()
	if _, err := a.Train(ctx, a.roll.vec, 2*a.cfg.LearnStep); err != nil {
		t.Fatal(err)
	}
	file, err := a.Encode()
	if err != nil {
		t.Fatal(err)
	}
	b, err := Decode(file)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := b.Encode()
	if !bytes.Equal(file, again) {
		t.Fatal("a decoded RND agent encodes to other bytes")
	}
	if !strings.Contains(string(file), "rnd.predictor.out.weight") || !strings.Contains(string(file), "rnd.adam.v.rnd.critic.out.bias") {
		t.Error("the file lacks the RND tensors or description")
	}
	c := a.Clone(99)
	for _, x := range []*PPO{a, b} {
		vec, err := envs.MakeVector("CartPole-v1", 4, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer vec.Close()
		x.roll = nil
		x.rnd.work = nil // what a loaded agent has
		if _, err := x.Train(ctx, vec, 2*x.cfg.LearnStep); err != nil {
			t.Fatal(err)
		}
	}
	fa, _ := a.Encode()
	fb, _ := b.Encode()
	if !bytes.Equal(fa, fb) {
		t.Error("the loaded agent trained to other weights or statistics than the original")
	}
	if slices.Equal(c.rnd.predictor[0].Data, a.rnd.predictor[0].Data) || c.rnd.obs.Count == a.rnd.obs.Count {
		t.Error("training the original changed its clone's RND state (or did not train it)")
	}
}

// TestRNDConfigErrors: every rnd key is checked, and set only with RND on.
func TestRNDConfigErrors(t *testing.T) {
	for _, c := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.RNDCoef = -1 }, "rnd_coef = -1"},
		{func(c *Config) { c.RNDHidden = 32 }, "rnd_hidden is set, but RND is off"},
		{func(c *Config) { c.RNDCoef, c.RNDGamma = 1, 1 }, "rnd_gamma = 1"},
		{func(c *Config) { c.RNDCoef, c.RNDUpdateProportion = 1, 1.5 }, "rnd_update_proportion = 1.5"},
		{func(c *Config) { c.RNDCoef, c.RNDEmbed = 1, -3 }, "rnd_embed = -3"},
		{func(c *Config) { c.RNDCoef, c.Advantage, c.VTraceRhoClip, c.VTraceCClip = 1, AdvantageVTrace, 1, 1 }, `advantage = "vtrace"`},
	} {
		cfg := DefaultConfig()
		c.edit(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want an error containing %q", err, c.want)
		}
	}
	a := rndAgent(t, "CartPole-v1", nil, 1)
	off := a.Config()
	off.RNDCoef, off.RNDHidden, off.RNDEmbed = 0, 0, 0
	if err := a.SetConfig(off); err == nil || !strings.Contains(err.Error(), "RND") {
		t.Errorf("turning RND off by SetConfig: %v", err)
	}
}

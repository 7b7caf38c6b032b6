package agent

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/netconf"
	_ "github.com/evolverl/evolve/nn/gorgonia" // the reference backend
)

// fastCase is an MLP agent configuration on a vector env.
type fastCase struct {
	name string
	vec  func(t *testing.T) *envs.Vector
	cfg  func() Config
}

func fastCases() []fastCase {
	probe := func() Config { return probeConfig(netconf.EncoderMLP) }
	shared := func() Config { c := probeConfig(netconf.EncoderMLP); c.ShareEncoders = true; return c }
	fancy := func() Config {
		c := probeConfig(netconf.EncoderMLP)
		c.Net.MLP.Activation, c.Net.MLP.LayerNorm = netconf.GELU, true
		c.Net.Head.Activation, c.Net.Head.LayerNorm = netconf.ELU, true
		c.Net.MLP.Hidden = []int{32, 24}
		c.ShareEncoders = true
		return c
	}
	noHead := func() Config {
		c := probeConfig(netconf.EncoderMLP)
		c.Net.Head.Hidden, c.Net.Head.MinLayers = nil, 0
		c.Net.MLP.Activation, c.Net.Head.Activation = netconf.Tanh, netconf.Tanh
		return c
	}
	cart := func(t *testing.T) *envs.Vector { v, _ := envs.MakeVector("CartPole-v1", 4, nil); return v }
	novel := func(t *testing.T) *envs.Vector { v, _ := envs.MakeVector("CartPoleNoVel-v1", 4, nil); return v }
	cnn := func(shared bool) func() Config {
		return func() Config {
			c := probeConfig(netconf.EncoderCNN)
			c.Net.CNN.Channels, c.Net.CNN.Kernels, c.Net.CNN.Strides = []int{8, 8}, []int{3, 2}, []int{1, 1}
			if shared {
				c.ShareEncoders = true
				c.Net.CNN.Activation, c.Net.Head.Activation = netconf.GELU, netconf.Tanh
			}
			return c
		}
	}
	recurrent := func(kind netconf.EncoderKind, layers int, shared bool) func() Config {
		return func() Config {
			c := probeConfig(kind)
			c.Net.Memory().Hidden, c.Net.Memory().Layers = 16, layers
			c.ShareEncoders = shared
			c.MaxSeqLen = 8
			return c
		}
	}
	lstm := func(layers int, shared bool) func() Config { return recurrent(netconf.EncoderLSTM, layers, shared) }
	transformer := func(layers int, shared bool) func() Config {
		return func() Config {
			c := probeConfig(netconf.EncoderTransformer)
			c.Net.Transformer.Layers, c.Net.Transformer.Context = layers, 5
			c.ShareEncoders = shared
			c.MaxSeqLen = 8
			return c
		}
	}
	match := func(kind string) func(t *testing.T) *envs.Vector {
		return func(t *testing.T) *envs.Vector { v, _ := matchVector(t, kind, 4); return v }
	}
	return []fastCase{
		{"discrete", cart, DefaultConfig},
		{"discrete-shared", cart, shared},
		{"discrete-ln-gelu-elu-shared", cart, fancy},
		{"discrete-no-head-tanh", cart, noHead},
		{"discrete-masked", match("discrete-masked"), probe},
		{"multidiscrete", match("multidiscrete"), probe},
		{"multibinary", match("multibinary"), probe},
		{"gaussian", func(t *testing.T) *envs.Vector { v, _ := envs.MakeVector("Pendulum-v1", 4, nil); return v }, probe},
		{"gaussian-shared", match("continuous"), shared},
		{"gaussian-sde", func(t *testing.T) *envs.Vector { v, _ := envs.MakeVector("Pendulum-v1", 4, nil); return v }, withSDE(probe, 3)},
		{"gaussian-sde-shared-no-head", match("continuous"), withSDE(func() Config { c := noHead(); c.ShareEncoders = true; return c }, 0)},
		{"cnn-catch", func(t *testing.T) *envs.Vector { v, _ := envs.MakeVector("Catch-v0", 4, nil); return v }, cnn(false)},
		{"cnn-catch-shared-gelu", func(t *testing.T) *envs.Vector { v, _ := envs.MakeVector("Catch-v0", 4, nil); return v }, cnn(true)},
		{"lstm-1layer", novel, lstm(1, false)},
		{"lstm-2layers-shared", novel, lstm(2, true)},
		{"lstm-gaussian", func(t *testing.T) *envs.Vector { v, _ := envs.MakeVector("PendulumNoVel-v1", 4, nil); return v }, lstm(1, false)},
		{"lstm-gaussian-sde", func(t *testing.T) *envs.Vector { v, _ := envs.MakeVector("PendulumNoVel-v1", 4, nil); return v }, withSDE(lstm(1, false), -1)},
		{"gru-1layer", novel, recurrent(netconf.EncoderGRU, 1, false)},
		{"gru-2layers-shared", novel, recurrent(netconf.EncoderGRU, 2, true)},
		{"gru-gaussian", func(t *testing.T) *envs.Vector { v, _ := envs.MakeVector("PendulumNoVel-v1", 4, nil); return v }, recurrent(netconf.EncoderGRU, 1, false)},
		{"transformer-1layer", novel, transformer(1, false)},
		{"transformer-2layers-shared", novel, transformer(2, true)},
		{"dict", func(t *testing.T) *envs.Vector { return xorVector(t, 4) }, xorConfig},
		{"dict-shared", func(t *testing.T) *envs.Vector { return xorVector(t, 4) }, func() Config { c := xorConfig(); c.ShareEncoders = true; return c }},
	}
}

// withSDE returns cfg with gSDE, its matrices redrawn every freq steps.
func withSDE(cfg func() Config, freq int) func() Config {
	return func() Config {
		c := cfg()
		c.UseSDE, c.SDESampleFreq, c.ActionStdInit = true, freq, -1
		return c
	}
}

// collected returns a fresh agent for c with one collected rollout and the
// first minibatch Learn would take from it, built with seed.
func collected(t *testing.T, c fastCase, seed uint64, backend string) (*PPO, minibatch) {
	t.Helper()
	vec := c.vec(t)
	cfg := c.cfg()
	cfg.LearnStep, cfg.BatchSize = 128, 32
	cfg.Backend = backend
	a, err := New(vec.ObservationSpace(), vec.ActionSpace(), cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.startRollout(vec); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := a.collect(new([]float64)); err != nil {
		t.Fatal(err)
	}
	return a, firstMinibatch(a)
}

// lastLogRatios returns log π − log π_old per row of the last update on
// mb: the log-probabilities its loss computed (left in the distribution's
// buffers) less those recorded while acting.
func (a *PPO) lastLogRatios(mb minibatch) []float32 {
	lr := make([]float32, mb.rows)
	for i := range lr {
		lr[i] = a.work.dist.logp[i] - mb.logp[i]
	}
	return lr
}

// relErr32 is max|got − want| / max(max|want|, floor).
func relErr32(got, want []float32, floor float64) float64 {
	scale, e := floor, 0.0
	for i := range want {
		scale = max(scale, math.Abs(float64(want[i])))
		e = max(e, math.Abs(float64(got[i])-float64(want[i])))
	}
	return e / scale
}

// TestBackendsAgree runs one update of an agent on the same minibatch
// through the plain-Go backend and through the gorgonia reference backend:
// losses, statistics, gradients (Adam's first moments after one step) and
// parameter updates agree to ~1e-5, and so do the acting outputs.
func TestBackendsAgree(t *testing.T) {
	for _, c := range fastCases() {
		t.Run(c.name, func(t *testing.T) {
			fast, mb := collected(t, c, 11, "")
			// A second agent from the same seed has the same weights; it
			// reruns the same minibatch on the reference backend.
			slow, _ := collected(t, c, 11, "gorgonia")
			copyWeights(slow, fast)

			// Acting: the same values and log-probabilities for the same
			// observations (deterministic, so no draw differs).
			rows := 4
			obs := mb.obs[:rows*fast.obsSpace.FlatSize()]
			var fo, so actOut
			if err := fast.act(obs, nil, nil, true, true, &fo); err != nil {
				t.Fatal(err)
			}
			if err := slow.act(obs, nil, nil, true, true, &so); err != nil {
				t.Fatal(err)
			}
			if e := relErr32(fo.values, so.values, 1e-3); e > 1e-5 {
				t.Errorf("acting values off by %.3g: %v vs %v", e, fo.values, so.values)
			}
			if e := relErr32(fo.logp, so.logp, 1e-3); e > 1e-5 {
				t.Errorf("acting log-probabilities off by %.3g: %v vs %v", e, fo.logp, so.logp)
			}

			before := cloneSlices(fast.tensors())
			fs, err := fast.update(mb)
			if err != nil {
				t.Fatal(err)
			}
			ss, err := slow.update(mb)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range []struct {
				what      string
				got, want float64
			}{
				{"loss", fs.Loss, ss.Loss}, {"pg_loss", fs.PolicyLoss, ss.PolicyLoss},
				{"v_loss", fs.ValueLoss, ss.ValueLoss}, {"entropy", fs.Entropy, ss.Entropy},
				{"approx_kl", fs.ApproxKL, ss.ApproxKL}, {"clipfrac", fs.ClipFrac, ss.ClipFrac},
				{"grad_norm", fs.GradNorm, ss.GradNorm},
			} {
				if d := math.Abs(q.got - q.want); d > 1e-5*math.Abs(q.want)+1e-6 {
					t.Errorf("%s = %.9g on the plain-Go backend, %.9g on gorgonia", q.what, q.got, q.want)
				}
			}
			names := fast.tensorNames()
			ft, st := fast.tensors(), slow.tensors()
			for i := range ft {
				floor := 1e-6
				if strings.HasSuffix(names[i], ".attn.k.bias") {
					// Its gradient is 0 but for rounding (every key shifted alike leaves the
					// softmax as it was): hold it to an absolute bound.
					floor = 1e-4
				}
				if e := relErr32(fast.adam.M[i], slow.adam.M[i], floor); e > 1e-5 {
					t.Errorf("gradient of %s off by %.3g relative", names[i], e)
				}
				df, ds := make([]float32, len(ft[i])), make([]float32, len(st[i]))
				for j := range df {
					df[j], ds[j] = ft[i][j]-before[i][j], st[i][j]-before[i][j]
				}
				// Adam's first step is ±lr wherever |g| ≫ ε, so a gradient
				// within rounding of 0 can move its weight by a visible
				// fraction of lr: the update is compared at 1e-3 of lr.
				if e := relErr32(df, ds, fast.cfg.LR); e > 1e-3 {
					t.Errorf("update of %s off by %.3g of the largest step", names[i], e)
				}
			}
		})
	}
}

// copyWeights makes dst's weights those of src (they start equal; this
// guards against any draw that differed while collecting).
func copyWeights(dst, src *PPO) {
	d, s := dst.tensors(), src.tensors()
	for i := range d {
		copy(d[i], s[i])
	}
}

// TestMaskedLogitsGetZeroGradient checks that after an update on masked rows, every masked
// logit's gradient is exactly zero and every legal one's is not (unless its
// component has a single legal choice).
func TestMaskedLogitsGetZeroGradient(t *testing.T) {
	for _, space := range []envs.Space{envs.Discrete{N: 4}, envs.MultiDiscrete{Nvec: []int{3, 2}}} {
		cfg := probeConfig(netconf.EncoderMLP)
		a, err := New(envs.NewBox(-1, 1, 2), space, cfg, 4)
		if err != nil {
			t.Fatal(err)
		}
		d := a.dist
		masks := [][]bool{{true, false, true, false, true}, {false, true, true, true, false}, {true, true, false, false, true}}
		if d.size == 4 {
			masks = [][]bool{{true, false, true, false}, {false, false, true, true}, {false, true, false, false}}
		}
		rows := len(masks)
		rng := rand.New(rand.NewPCG(2, 2))
		mb := minibatch{rows: rows, steps: 1}
		for r, m := range masks {
			mb.obs = append(mb.obs, float32(rng.NormFloat64()), float32(rng.NormFloat64()))
			mb.masks = append(mb.masks, m...)
			off := 0
			for _, n := range d.nvec { // the first legal choice is taken
				for k := range n {
					if m[off+k] {
						mb.actions = append(mb.actions, float32(k))
						break
					}
				}
				off += n
			}
			mb.logp = append(mb.logp, -1)
			mb.values = append(mb.values, 0)
			mb.adv = append(mb.adv, float32(r)-1)
			mb.ret = append(mb.ret, 1)
		}
		if _, err := a.update(mb); err != nil {
			t.Fatal(err)
		}
		grad := a.work.dOut
		checkMaskedGradient(t, d, space, masks, grad)
	}
}

// TestActingAndUpdateDoNotAllocate checks that a vectorised acting step and a
// minibatch update allocate nothing once warm.
func TestActingAndUpdateDoNotAllocate(t *testing.T) {
	for _, c := range fastCases() {
		t.Run(c.name, func(t *testing.T) {
			a, mb := collected(t, c, 5, "")
			r := a.roll
			x := make([]float32, len(r.obs))
			a.preprocess(x, r.obs, false)
			act := func() {
				if err := a.act(x, r.masks, r.state, false, false, &r.out); err != nil {
					t.Fatal(err)
				}
			}
			upd := func() {
				if _, err := a.update(mb); err != nil {
					t.Fatal(err)
				}
			}
			act()
			upd()
			if n := testing.AllocsPerRun(20, act); n != 0 {
				t.Errorf("acting: %v allocations per step, want 0", n)
			}
			if n := testing.AllocsPerRun(20, upd); n != 0 {
				t.Errorf("update: %v allocations per minibatch, want 0", n)
			}
		})
	}
}

// TestUpdateRejectsNonFiniteGradients checks that a NaN weight makes the
// update fail without touching the weights or the optimizer, and leaves
// the gradient buffers zeroed for the next update.
func TestUpdateRejectsNonFiniteGradients(t *testing.T) {
	a, mb := collected(t, fastCases()[0], 3, "")
	a.actor.Tensor("head.0.bias").Data[0] = float32(math.NaN())
	before := cloneSlices(a.tensors())
	step := a.adam.Step
	if _, err := a.update(mb); err == nil {
		t.Fatal("update with a NaN weight: no error")
	}
	if a.adam.Step != step {
		t.Error("the optimizer stepped")
	}
	for k, p := range a.tensors() {
		for i, x := range p {
			if math.Float32bits(x) != math.Float32bits(before[k][i]) {
				t.Fatalf("tensor %d changed at %d", k, i)
			}
		}
	}
	for _, g := range a.work.grads {
		for _, x := range g {
			if x != 0 {
				t.Fatal("gradients left after a failed update")
			}
		}
	}
}

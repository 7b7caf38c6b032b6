package agent

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/netconf"
)

// xorEnv is a one-step task that needs both keys of its Dict observation:
// "pos" is a Box [2] in [−1, 1] and "img" a 1×5×5 image in [0, 255] with
// one lit pixel in a column other than the middle one. Action 1 earns +1
// when exactly one of "pos[0] > 0" and "the pixel is right of the middle"
// holds, action 0 earns +1 otherwise: a policy that reads one key only
// earns 0.5 per episode on average.
type xorEnv struct {
	rng    *rand.Rand
	obs    []float32
	target float32
}

func newXorEnv() *xorEnv {
	return &xorEnv{rng: rand.New(rand.NewPCG(1, 1)), obs: make([]float32, 2+25)}
}

func (e *xorEnv) ObservationSpace() envs.Space {
	d, _ := envs.NewDict([]string{"pos", "img"}, []envs.Space{envs.NewBox(-1, 1, 2), envs.NewBox(0, 255, 1, 5, 5)})
	return d
}

func (e *xorEnv) ActionSpace() envs.Space { return envs.Discrete{N: 2} }

func (e *xorEnv) Reset(seed int64) ([]float32, envs.Info) {
	if seed >= 0 {
		e.rng = rand.New(rand.NewPCG(uint64(seed), 1))
	}
	clear(e.obs)
	e.obs[0] = float32(2*e.rng.Float64() - 1)
	e.obs[1] = float32(2*e.rng.Float64() - 1)
	col := []int{0, 1, 3, 4}[e.rng.IntN(4)]
	e.obs[2+e.rng.IntN(5)*5+col] = 255
	e.target = 0
	if (e.obs[0] > 0) != (col > 2) {
		e.target = 1
	}
	return e.obs, envs.Info{}
}

func (e *xorEnv) Step(a []float32) ([]float32, float64, bool, bool, envs.Info) {
	r := 0.0
	if a[0] == e.target {
		r = 1
	}
	return e.obs, r, true, false, envs.Info{}
}

func xorVector(t *testing.T, n int) *envs.Vector {
	t.Helper()
	list := make([]envs.Env, n)
	for i := range list {
		list[i] = newXorEnv()
	}
	vec, err := envs.NewVector(list)
	if err != nil {
		t.Fatal(err)
	}
	return vec
}

// xorConfig is a small CNN configuration: the image key gets this CNN,
// the "pos" key netconf's default MLP.
func xorConfig() Config {
	cfg := probeConfig(netconf.EncoderCNN)
	cfg.Net.CNN.Channels, cfg.Net.CNN.Kernels, cfg.Net.CNN.Strides = []int{8}, []int{3}, []int{1}
	cfg.LearnStep, cfg.BatchSize = 256, 64
	return cfg
}

// TestDictAgentLearnsATaskNeedingBothKeys trains a Dict agent (an MLP for
// "pos", a CNN for "img") on xorEnv: it must end well above the 0.5 a
// policy reading one key can reach.
func TestDictAgentLearnsATaskNeedingBothKeys(t *testing.T) {
	vec := xorVector(t, 8)
	a, err := New(vec.ObservationSpace(), vec.ActionSpace(), xorConfig(), 5)
	if err != nil {
		t.Fatal(err)
	}
	if got := a.actorSpec.String(); !strings.HasPrefix(got, "dict{pos: mlp[64 64] ReLU, img: cnn[8] k[3] s[1] ReLU}") {
		t.Fatalf("actor spec %s", got)
	}
	env := newXorEnv()
	before, _ := a.Evaluate(env, 200, 1000, 1)
	if _, err := a.Train(context.Background(), vec, 8000); err != nil {
		t.Fatal(err)
	}
	after, err := a.Evaluate(env, 200, 1000, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("mean return %.3f before, %.3f after 8,000 steps", before, after)
	if after < 0.85 {
		t.Errorf("mean return %.3f after training (%.3f before): want >= 0.85 (0.5 reads one key only)", after, before)
	}
}

// TestDictObservationsRejectedClearly: subspaces other than 1-D and image
// Boxes, keys that cannot name tensors and LSTM encoders give errors that
// say what is wrong.
func TestDictObservationsRejectedClearly(t *testing.T) {
	dict := func(keys []string, spaces ...envs.Space) envs.Dict {
		return envs.Dict{Keys: keys, Spaces: spaces}
	}
	cases := []struct {
		name string
		obs  envs.Space
		kind netconf.EncoderKind
		want string
	}{
		{"discrete key", dict([]string{"pos", "door"}, envs.NewBox(-1, 1, 2), envs.Discrete{N: 3}), netconf.EncoderMLP, `dict key "door"`},
		{"2-D box key", dict([]string{"grid"}, envs.NewBox(0, 1, 4, 4)), netconf.EncoderMLP, `dict key "grid": Box of shape [4 4]`},
		{"dotted key", dict([]string{"a.b"}, envs.NewBox(0, 1, 4)), netconf.EncoderMLP, `key "a.b"`},
		{"lstm", dict([]string{"pos"}, envs.NewBox(0, 1, 4)), netconf.EncoderLSTM, `encoder "lstm" does not take dict observations`},
		{"image too small for the cnn", dict([]string{"img"}, envs.NewBox(0, 1, 1, 3, 3)), netconf.EncoderMLP, `key "img": the default CNN does not fit its image: cnn layer 1`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Net = netconf.DefaultSpec(c.kind)
			_, err := New(c.obs, envs.Discrete{N: 2}, cfg, 1)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

// TestDictAgentMutatesSavesAndLoads: growing mutations of a Dict agent keep
// its function, every Dict mutation keeps it working (acting, learning),
// and the mutated agent round-trips through a file with its per-key
// encoders.
func TestDictAgentMutatesSavesAndLoads(t *testing.T) {
	for _, share := range []bool{false, true} {
		cfg := xorConfig()
		cfg.LearnStep, cfg.BatchSize, cfg.ShareEncoders = 64, 32, share
		vec := xorVector(t, 4)
		a, err := New(vec.ObservationSpace(), vec.ActionSpace(), cfg, 9)
		if err != nil {
			t.Fatal(err)
		}
		w := a.actor.Tensor("out.weight").Data
		for i := range w {
			w[i] *= 100
		}
		if len(a.Config().Net.Inputs) != 2 {
			t.Fatalf("config net inputs %+v: want the two keys' encoders", a.Config().Net.Inputs)
		}
		obs := randomObs(a, 16, 3)
		for _, name := range []string{"dict.mlp.add_node", "dict.mlp.add_layer", "dict.cnn.add_channel", "dict.cnn.add_layer",
			"latent.add_node", "head.add_node", "head.add_layer"} {
			m, _ := netconf.LookupMutation(name)
			acts0, logp0, v0 := valuesAndActions(t, a, obs)
			desc, changed, err := a.MutateArchitecture(m)
			if err != nil || !changed {
				t.Fatalf("share %v %s: %q changed %v err %v", share, name, desc, changed, err)
			}
			acts1, logp1, v1 := valuesAndActions(t, a, obs)
			if d := max(maxDiff(acts0, acts1), maxDiff(logp0, logp1), maxDiff(v0, v1)); d > 1e-4 {
				t.Errorf("share %v %s (%s): outputs moved by %g", share, name, desc, d)
			}
		}
		rng := rand.New(rand.NewPCG(4, 4))
		ops := netconf.MutationsFor(a.Config().Net)
		for _, m := range ops {
			if strings.HasPrefix(m.Name, "mlp.") || strings.HasPrefix(m.Name, "cnn.") {
				t.Fatalf("MutationsFor(a dict agent's net) offers %s", m.Name)
			}
		}
		for range 12 {
			if _, _, err := a.MutateArchitecture(ops[rng.IntN(len(ops))]); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := a.Train(context.Background(), vec, 128); err != nil {
			t.Fatalf("share %v: train after mutations (%s): %v", share, a.actorSpec, err)
		}
		b, _ := saveLoad(t, a)
		checkSameAgent(t, a, b, true)
		checkSameActions(t, a, b)
		c := a.Clone(11) // its own RNG: compare deterministic actions only
		x, err1 := a.Act(obs, nil, true)
		y, err2 := c.Act(obs, nil, true)
		if err1 != nil || err2 != nil || !sameBits(x, y) {
			t.Fatalf("share %v: clone acts %v (%v), original %v (%v)", share, y, err2, x, err1)
		}
	}
}

// TestDictImageKeysAreScaled: preprocess scales a bounded image key to
// [0, 1] by its bounds and leaves the flat key as it is.
func TestDictImageKeysAreScaled(t *testing.T) {
	env := newXorEnv()
	a, err := New(env.ObservationSpace(), env.ActionSpace(), xorConfig(), 1)
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]float32, 2*27)
	for r := range 2 {
		raw[r*27], raw[r*27+1] = -0.5, 0.25
		raw[r*27+2+r], raw[r*27+26] = 255, 51
	}
	x := make([]float32, len(raw))
	a.preprocess(x, raw, false)
	for r := range 2 {
		row := x[r*27 : (r+1)*27]
		if row[0] != -0.5 || row[1] != 0.25 || row[2+r] != 1 || row[26] != 0.2 {
			t.Fatalf("row %d preprocessed to %v", r, row)
		}
	}
}

// TestLatentOfAKeyNamedNormIsAWeightMatrix: a Dict key may be called
// "norm"; its latent weight is still a weight matrix for evolution, and
// LayerNorm parameters never are.
func TestLatentOfAKeyNamedNormIsAWeightMatrix(t *testing.T) {
	obs, _ := envs.NewDict([]string{"norm"}, []envs.Space{envs.NewBox(-1, 1, 3)})
	cfg := probeConfig(netconf.EncoderMLP)
	cfg.Net.MLP.LayerNorm, cfg.Net.MLP.Hidden = true, []int{16, 16}
	a, err := New(obs, envs.Discrete{N: 2}, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, w := range a.WeightMatrices() {
		got[w.Name] = true
	}
	for name, want := range map[string]bool{"actor.latent.norm.weight": true, "actor.encoder.norm.mlp.1.norm.weight": false,
		"actor.encoder.norm.mlp.1.weight": true, "actor.latent.norm.bias": false, "critic.out.weight": true} {
		if got[name] != want {
			t.Errorf("%s among the weight matrices: %v, want %v", name, got[name], want)
		}
	}
}

// TestLoadRejectsDictSpecsThatDoNotFitTheSpace: a file whose per-key
// encoders do not match its observation space, or whose actor spec differs
// from the one they imply, is rejected with an error naming the key.
func TestLoadRejectsDictSpecsThatDoNotFitTheSpace(t *testing.T) {
	ta := testAgents(t, smallNet)[4]
	if ta.name != "dict shared" {
		t.Fatalf("test agent %q, want the dict agent", ta.name)
	}
	good := saveBytes(t, ta.build(t, 2))
	cases := []struct {
		name string
		edit func(d *agentJSON)
		want string
	}{
		{"renamed key", func(d *agentJSON) { d.Config.Net.Inputs[0].Key = "other" }, `net.inputs[0] is key "other"`},
		{"image key with an mlp", func(d *agentJSON) {
			m := netconf.DefaultMLP()
			d.Config.Net.Inputs[1].Encoder, d.Config.Net.Inputs[1].MLP, d.Config.Net.Inputs[1].CNN = netconf.EncoderMLP, &m, nil
		}, `wants key "img" with a "cnn" encoder`},
		{"a key missing", func(d *agentJSON) { d.Config.Net.Inputs = d.Config.Net.Inputs[:1] }, "lists 1 keys, the observation space has 2"},
		{"actor spec of another key encoder", func(d *agentJSON) { d.Actor.Inputs[0].MLP.Hidden = []int{48} }, "actor spec"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			file := rewrite(t, good, func(_ *[]namedTensor, _ map[string]string, d *agentJSON) { c.edit(d) })
			path := filepath.Join(t.TempDir(), "bad.safetensors")
			if err := os.WriteFile(path, file, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := Load(path); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Load: %v, want an error containing %q", err, c.want)
			}
		})
	}
}

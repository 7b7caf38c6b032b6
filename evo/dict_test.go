package evo

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/envs"
)

// signEnv is a one-step task with a Dict observation: "pos" (Box [4]) and
// "img" (a 1×7×7 image of noise, which netconf's default CNN fits); +1 for
// action 1 when pos[0] > 0 and for action 0 otherwise.
type signEnv struct {
	rng *rand.Rand
	obs []float32
}

func (e *signEnv) ObservationSpace() envs.Space {
	d, _ := envs.NewDict([]string{"pos", "img"}, []envs.Space{envs.NewBox(-1, 1, 4), envs.NewBox(0, 1, 1, 7, 7)})
	return d
}

func (e *signEnv) ActionSpace() envs.Space { return envs.Discrete{N: 2} }

func (e *signEnv) Reset(seed int64) ([]float32, envs.Info) {
	if seed >= 0 {
		e.rng = rand.New(rand.NewPCG(uint64(seed), 3))
	}
	for i := range e.obs {
		if i < 4 {
			e.obs[i] = float32(2*e.rng.Float64() - 1)
		} else {
			e.obs[i] = float32(e.rng.Float64())
		}
	}
	return e.obs, envs.Info{}
}

func (e *signEnv) Step(a []float32) ([]float32, float64, bool, bool, envs.Info) {
	r := 0.0
	if (a[0] == 1) == (e.obs[0] > 0) {
		r = 1
	}
	return e.obs, r, true, false, envs.Info{}
}

func registerSignEnv() error {
	if _, ok := envs.Lookup("DictSign-v0"); ok {
		return nil // -count > 1
	}
	return envs.Register(envs.Spec{ID: "DictSign-v0", New: func(envs.Options) (envs.Env, error) {
		return &signEnv{rng: rand.New(rand.NewPCG(1, 3)), obs: make([]float32, 4+49)}, nil
	}})
}

// TestDictEnvEvolves runs a population on a Dict env with architecture
// mutations only: the [net] section is the usual one, the agents get one
// encoder per key, the mutations change them, and the elite loads.
func TestDictEnvEvolves(t *testing.T) {
	if err := registerSignEnv(); err != nil {
		t.Fatal(err)
	}
	cfg := tiny(t)
	cfg.Env.ID = "DictSign-v0"
	cfg.Population.MaxSteps = 3 * 2 * 256
	only(MutationArchitecture)(&cfg)
	sum, err := run(t, cfg, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Generations < 2 || sum.EliteFile == "" {
		t.Fatalf("summary %+v", sum)
	}
	a, err := agent.Load(sum.EliteFile)
	if err != nil {
		t.Fatal(err)
	}
	if net := a.Config().Net; len(net.Inputs) != 2 || net.Inputs[0].Key != "pos" || net.Inputs[1].Encoder != "cnn" {
		t.Fatalf("elite net %s: want an mlp for pos and a cnn for img", net)
	}
	tr, err := Resume(cfg.OutDir, Options{})
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	mutated := false
	for _, m := range tr.Members() {
		t.Logf("member %d: %s %q", m.Index, m.Agent.Config().Net, m.Agent.History)
		for _, h := range m.Agent.History {
			mutated = mutated || strings.HasPrefix(h, "dict.") || strings.HasPrefix(h, "latent.") || strings.HasPrefix(h, "head.")
		}
	}
	if !mutated {
		t.Error("no architecture mutation applied to any member")
	}
}

// TestDictConfigTakesBothTables: for a Dict observation a config may give
// [net.mlp] and [net.cnn] together, whichever the encoder — the 1-D keys
// take the MLP, the image keys the CNN — and a config giving both for an
// env that observes no Dict is refused naming the table and its line.
func TestDictConfigTakesBothTables(t *testing.T) {
	if err := registerSignEnv(); err != nil {
		t.Fatal(err)
	}
	tables := "\n[net.mlp]\nhidden = [16]\n\n[net.cnn]\nchannels = [8]\nkernels = [2]\nstrides = [1]\n"
	for _, encoder := range []string{"mlp", "cnn"} {
		text := "[env]\nid = \"DictSign-v0\"\n\n[net]\nencoder = \"" + encoder + "\"\n" + tables
		cfg, err := ParseConfig([]byte(text))
		if err != nil {
			t.Fatalf("encoder %s: %v", encoder, err)
		}
		env, err := envs.Make(cfg.Env.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		a, err := agent.New(env.ObservationSpace(), env.ActionSpace(), cfg.PPO, 1)
		if err != nil {
			t.Fatalf("encoder %s: %v", encoder, err)
		}
		if got := a.Config().Net.String(); !strings.HasPrefix(got, "dict{pos: mlp[16] ReLU, img: cnn[8] k[2] s[1] ReLU}") {
			t.Errorf("encoder %s: the agent's net is %s, want the given tables per key", encoder, got)
		}
	}
	text := "[env]\nid = \"CartPole-v1\"\n\n[net]\nencoder = \"mlp\"\n" + tables
	_, err := ParseConfig([]byte(text))
	if err == nil || !strings.Contains(err.Error(), `[net.cnn] given, but net.encoder = "mlp" and CartPole-v1 observes`) || !strings.Contains(err.Error(), "(line 10)") {
		t.Errorf("both tables for a Box env: %v, want the CNN table refused with its line", err)
	}
}

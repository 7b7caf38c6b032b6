package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/netconf"
)

// TestKLAdaptLRMatchesSkrl replays the KL streams of
// testdata/kl_adaptive.json (gen_kl_adaptive.py: skrl's torch
// KLAdaptiveLR stepped once per value) and wants skrl's learning rates
// exactly: both sides do the same double-precision operations.
func TestKLAdaptLRMatchesSkrl(t *testing.T) {
	var ref struct {
		Cases []struct {
			Name        string    `json:"name"`
			LR          float64   `json:"lr"`
			KLThreshold float64   `json:"kl_threshold"`
			KLFactor    float64   `json:"kl_factor"`
			LRFactor    float64   `json:"lr_factor"`
			MinLR       float64   `json:"min_lr"`
			MaxLR       float64   `json:"max_lr"`
			KL          []float64 `json:"kl"`
			LRs         []float64 `json:"lrs"`
		} `json:"cases"`
	}
	if readTestdata(t, "kl_adaptive.json", &ref); len(ref.Cases) == 0 {
		t.Fatal("kl_adaptive.json has no cases")
	}
	for _, c := range ref.Cases {
		cfg := DefaultConfig()
		cfg.KLThreshold, cfg.KLFactor, cfg.LRFactor, cfg.MinLR, cfg.MaxLR = c.KLThreshold, c.KLFactor, c.LRFactor, c.MinLR, c.MaxLR
		if c.Name == "defaults" {
			// skrl's defaults are ours: leave the optional keys unset.
			if c.KLFactor != DefaultKLFactor || c.LRFactor != DefaultLRFactor || c.MinLR != DefaultMinLR || c.MaxLR != DefaultMaxLR {
				t.Fatalf("skrl's defaults %+v differ from ours", c)
			}
			cfg.KLFactor, cfg.LRFactor, cfg.MinLR, cfg.MaxLR = 0, 0, 0, 0
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		lr, seen := c.LR, map[string]bool{}
		for i, kl := range c.KL {
			next := cfg.KLAdaptLR(lr, kl)
			if next != c.LRs[i] {
				t.Fatalf("%s: step %d (kl %g): lr %g -> %g, skrl %g", c.Name, i, kl, lr, next, c.LRs[i])
			}
			switch {
			case next == cfg.clampLR(0):
				seen["min"] = true
			case next == cfg.clampLR(1):
				seen["max"] = true
			case next < lr:
				seen["down"] = true
			case next > lr:
				seen["up"] = true
			}
			lr = next
		}
		if len(seen) < 4 {
			t.Errorf("%s: the stream only covers %v of down, up, min, max", c.Name, seen)
		}
	}
}

// klAgent returns a CartPole agent with the KL-adaptive rate and one epoch
// per update, so that an update's mean approximate KL is its epoch's.
func klAgent(t *testing.T) (*PPO, *envs.Vector) {
	t.Helper()
	list := make([]envs.Env, 4)
	for i := range list {
		list[i], _ = envs.Make("CartPole-v1", nil)
	}
	vec, err := envs.NewVector(list)
	if err != nil {
		t.Fatal(err)
	}
	cfg := probeConfig(netconf.EncoderMLP)
	cfg.UpdateEpochs, cfg.LR, cfg.KLThreshold = 1, 3e-4, 0.002
	a, err := New(vec.ObservationSpace(), vec.ActionSpace(), cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	return a, vec
}

// TestKLAdaptiveRateFollowsTheUpdates trains with one epoch per update:
// each update's rate is the last one's adapted by the last one's mean KL,
// the first is lr, and the rate moves both ways (lr 3e-4 is too small for
// a KL of 0.002 at first; the KL grows as the policy sharpens).
func TestKLAdaptiveRateFollowsTheUpdates(t *testing.T) {
	a, vec := klAgent(t)
	cfg := a.Config()
	want, up, down := cfg.LR, false, false
	for i := range 40 {
		ts, err := a.Train(context.Background(), vec, cfg.LearnStep)
		if err != nil {
			t.Fatal(err)
		}
		st := ts.Last
		if st.LR != want {
			t.Fatalf("update %d: lr %g, want %g", i, st.LR, want)
		}
		next := cfg.KLAdaptLR(st.LR, st.ApproxKL)
		up, down = up || next > st.LR, down || next < st.LR
		want = next
	}
	if !up || !down {
		t.Errorf("the rate only went up %v / down %v in 40 updates", up, down)
	}
}

// TestKLAdaptiveRateIsSavedAndScaled: the adapted rate is the agent's
// state — in its file, in a clone — and a new lr (evolution's mutation)
// moves it in proportion, within max_lr.
func TestKLAdaptiveRateIsSavedAndScaled(t *testing.T) {
	a, vec := klAgent(t)
	if _, err := a.Train(context.Background(), vec, 10*a.Config().LearnStep); err != nil {
		t.Fatal(err)
	}
	adapted := a.adam.LR
	if adapted == a.Config().LR {
		t.Fatalf("the rate did not adapt in 10 updates (%g)", adapted)
	}
	b, _ := saveLoad(t, a)
	if b.adam.LR != adapted || b.Config().KLThreshold != 0.002 {
		t.Fatalf("loaded: rate %g, kl_threshold %g; saved %g, 0.002", b.adam.LR, b.Config().KLThreshold, adapted)
	}
	if c := a.Clone(9); c.adam.LR != adapted {
		t.Fatalf("clone's rate %g, want %g", c.adam.LR, adapted)
	}
	cfg := a.Config()
	cfg.LR *= 2
	if err := a.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if a.adam.LR != min(adapted*2, DefaultMaxLR) {
		t.Errorf("lr doubled: rate %g, want %g", a.adam.LR, adapted*2)
	}
	cfg.LR = 100
	if err := a.SetConfig(cfg); err != nil || a.adam.LR != DefaultMaxLR {
		t.Errorf("lr 100: rate %g (%v), want max_lr %g", a.adam.LR, err, DefaultMaxLR)
	}
	cfg.KLThreshold = 0
	if err := a.SetConfig(cfg); err != nil || a.adam.LR != 100 {
		t.Errorf("kl_threshold off: rate %g (%v), want lr 100", a.adam.LR, err)
	}
}

func TestKLAdaptiveConfigErrors(t *testing.T) {
	for _, c := range []struct {
		set  func(*Config)
		want string
	}{
		{func(c *Config) { c.KLThreshold = -1 }, "kl_threshold = -1"},
		{func(c *Config) { c.KLThreshold, c.KLFactor = 0.01, 1 }, "kl_factor = 1: want > 1"},
		{func(c *Config) { c.KLThreshold, c.LRFactor = 0.01, 0.5 }, "lr_factor = 0.5: want > 1"},
		{func(c *Config) { c.KLThreshold, c.MinLR, c.MaxLR = 0.01, 1e-3, 1e-4 }, "want min_lr < max_lr"},
		{func(c *Config) { c.KLThreshold, c.MinLR = 0.01, 0.5 }, "want min_lr < max_lr"},
		{func(c *Config) { c.MaxLR = 1e-3 }, "set only with kl_threshold > 0"},
		{func(c *Config) { c.KLThreshold, c.AnnealLR = 0.01, true }, "want one learning-rate schedule"},
	} {
		cfg := DefaultConfig()
		c.set(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", cfg, err, c.want)
		}
	}
}

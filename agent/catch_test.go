package agent

import (
	"context"
	"testing"

	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/netconf"
)

// TestCNNAgentImprovesOnCatch trains a small CNN agent on bsuite's Catch
// (1×10×5 images) for a short budget: its mean return must rise clearly
// above the untrained policy's (a random paddle catches about one ball in
// five: mean ≈ −0.6).
func TestCNNAgentImprovesOnCatch(t *testing.T) {
	vec, err := envs.MakeVector("Catch-v0", 8, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := probeConfig(netconf.EncoderCNN)
	cfg.Net.CNN.Channels, cfg.Net.CNN.Kernels, cfg.Net.CNN.Strides = []int{8, 8}, []int{3, 3}, []int{1, 1}
	cfg.LearnStep, cfg.BatchSize, cfg.Gamma = 512, 128, 0.99
	a, err := New(vec.ObservationSpace(), vec.ActionSpace(), cfg, 4)
	if err != nil {
		t.Fatal(err)
	}
	env, _ := envs.Make("Catch-v0", nil)
	before, _ := a.Evaluate(env, 50, 1000, 1)
	if _, err := a.Train(context.Background(), vec, 6000); err != nil {
		t.Fatal(err)
	}
	after, err := a.Evaluate(env, 50, 1000, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("mean return %.2f before, %.2f after 6,000 steps", before, after)
	if after < 0.5 || after < before+0.5 {
		t.Errorf("mean return %.2f after training (%.2f before), want >= 0.5 and a clear gain", after, before)
	}
}

package evo

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestNewWarnsOfARoundedLearnStep: a learn_step that is not a multiple of
// num_envs trains whole steps of every env, fewer than the config and
// metrics.csv say; the run says so (it did not).
func TestNewWarnsOfARoundedLearnStep(t *testing.T) {
	for _, tc := range []struct {
		learnStep int
		warn      bool
	}{{129, true}, {128, false}} {
		cfg := tiny(t)
		cfg.PPO.LearnStep = tc.learnStep
		var log bytes.Buffer
		tr, err := New(cfg, Options{Log: slog.New(slog.NewTextHandler(&log, nil))})
		if err != nil {
			t.Fatal(err)
		}
		tr.Close()
		want := "ppo.learn_step = 129 is not a multiple of env.num_envs = 2: each rollout takes 128 env steps (64 per env)"
		if got := strings.Contains(log.String(), want); got != tc.warn {
			t.Errorf("learn_step %d: warned %v, want %v:\n%s", tc.learnStep, got, tc.warn, log.String())
		}
	}
}

// TestNewWarnsOfAnActionStdForDiscreteActions: action_std_init sets a
// Gaussian policy's log std; given for an env of Discrete actions it does
// nothing, and the run says so instead of accepting it silently.
func TestNewWarnsOfAnActionStdForDiscreteActions(t *testing.T) {
	for _, std := range []float64{-0.5, 0} {
		cfg := tiny(t)
		cfg.PPO.ActionStdInit = std
		var log bytes.Buffer
		tr, err := New(cfg, Options{Log: slog.New(slog.NewTextHandler(&log, nil))})
		if err != nil {
			t.Fatal(err)
		}
		tr.Close()
		want := "ppo.action_std_init = -0.5 has no effect: it is the initial log standard deviation of a Gaussian policy, for Box actions, and CartPole-v1 acts in Discrete(2)"
		if got := strings.Contains(log.String(), want); got != (std != 0) {
			t.Errorf("action_std_init %g: warned %v, want %v:\n%s", std, got, std != 0, log.String())
		}
	}
}

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

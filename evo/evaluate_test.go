package evo

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/evolverl/evolve/envs"
)

// endlessEnv is registered without a time limit and never ends an episode:
// it observes [0] and pays 1 per step. With option bad_after = k it turns
// bad after its k-th step (counted over its whole life, across resets):
// option bad = "observation" makes its observations NaN, "reward" its
// rewards +Inf. A training env of the tiny config steps 128 times per
// generation; evaluation then steps training env 0 further.
type endlessEnv struct {
	badAfter, steps int
	bad             string
	obs             []float32
}

func (e *endlessEnv) ObservationSpace() envs.Space { return envs.NewBox(-1, 1, 1) }
func (e *endlessEnv) ActionSpace() envs.Space      { return envs.Discrete{N: 2} }
func (e *endlessEnv) Reset(int64) ([]float32, envs.Info) {
	e.obs[0] = 0
	return e.obs, envs.Info{}
}
func (e *endlessEnv) Step([]float32) ([]float32, float64, bool, bool, envs.Info) {
	e.steps++
	r := 1.0
	if e.badAfter > 0 && e.steps > e.badAfter {
		if e.bad == "reward" {
			r = math.Inf(1)
		} else {
			e.obs[0] = float32(math.NaN())
		}
	}
	return e.obs, r, false, false, envs.Info{}
}

func registerEndlessEnv() error {
	if _, ok := envs.Lookup("Endless-v0"); ok {
		return nil // -count > 1
	}
	return envs.Register(envs.Spec{ID: "Endless-v0", New: func(o envs.Options) (envs.Env, error) {
		k, err := o.Int("bad_after", 0)
		if err != nil {
			return nil, err
		}
		bad, _ := o["bad"].(string)
		return &endlessEnv{badAfter: k, bad: bad, obs: make([]float32, 1)}, o.Only("bad_after", "bad")
	}})
}

// runWithin runs tr and fails the test if it has not ended after limit.
func runWithin(t *testing.T, tr *Trainer, limit time.Duration) (Summary, error) {
	t.Helper()
	type result struct {
		sum Summary
		err error
	}
	done := make(chan result, 1)
	go func() {
		sum, err := tr.Run(context.Background())
		done <- result{sum, err}
	}()
	select {
	case r := <-done:
		return r.sum, r.err
	case <-time.After(limit):
		t.Fatalf("the run has not ended after %v", limit)
		return Summary{}, nil
	}
}

func TestEvaluationEndsOnAnEnvWithoutTimeLimit(t *testing.T) {
	if err := registerEndlessEnv(); err != nil {
		t.Fatal(err)
	}
	tr := newTiny(t, func(c *Config) {
		c.Env.ID = "Endless-v0"
		c.Env.EvalMaxSteps = 1000
		c.Population.MaxSteps = 1
	})
	sum, err := runWithin(t, tr, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Generations != 1 || sum.EliteFitness != 1000 {
		t.Fatalf("summary %+v: want one generation, elite fitness 1000 (episodes cut at 1000 steps of reward 1)", sum)
	}
	for _, row := range readMetrics(t, tr.cfg.OutDir)[1:] {
		if row[3] != "1000" || row[4] != "false" {
			t.Errorf("agent %s: fitness %s, diverged %s; want 1000, false", row[1], row[3], row[4])
		}
	}
}

// TestBadEnvOutputFailsTheRun: NaN or Inf env output fails the run with an
// error naming the agent and the env, whether training or evaluation meets
// it; the last good checkpoint stays the resume point.
func TestBadEnvOutputFailsTheRun(t *testing.T) {
	if err := registerEndlessEnv(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		bad      string
		badAfter int
		want     []string
	}{
		{"NaN observation in training", "observation", 10,
			[]string{"agent 0 on env Endless-v0: train: envs: vector env 0", "step returned observation[0] = NaN"}},
		// 150 steps: after every training env's 128; evaluation plays on
		// env 0 of the training vector, whose count goes on from 128 (this
		// env's count survives Reset), so step 23 of the first episode.
		{"NaN observation in evaluation", "observation", 150,
			[]string{"agent 0 on env Endless-v0: evaluate episode 1 step 23: env *evo.endlessEnv step returned observation[0] = NaN"}},
		{"Inf reward in evaluation", "reward", 150,
			[]string{"agent 0 on env Endless-v0: evaluate episode 1 step 23: env *evo.endlessEnv step returned reward +Inf"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTiny(t, func(c *Config) {
				c.Env.ID = "Endless-v0"
				c.Env.EvalEpisodes = 2
				c.Env.Options = envs.Options{"max_episode_steps": 100, "bad": tc.bad, "bad_after": tc.badAfter}
				c.Population.Size = 1
				c.Tournament.Size = 1
				c.Population.MaxSteps = 1
			})
			_, err := runWithin(t, tr, time.Minute)
			checkFailedRun(t, err, tr.cfg.OutDir, tc.want...)
		})
	}
}

package agent

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/netconf"
)

// endlessEnv has no time limit and never ends an episode: it observes
// [0, 0] and pays 1 per step. spoil, when set, may change what the env
// returns at step n of an episode (0: the reset), to imitate a broken
// simulator.
type endlessEnv struct {
	obs   []float32
	step  int
	spoil func(n int, obs []float32, reward float64) ([]float32, float64)
}

func (e *endlessEnv) ObservationSpace() envs.Space { return envs.NewBox(-1, 1, 2) }
func (e *endlessEnv) ActionSpace() envs.Space      { return envs.Discrete{N: 2} }
func (e *endlessEnv) Reset(int64) ([]float32, envs.Info) {
	e.step = 0
	obs, _ := e.output(0)
	return obs, envs.Info{}
}
func (e *endlessEnv) Step([]float32) ([]float32, float64, bool, bool, envs.Info) {
	e.step++
	obs, r := e.output(1)
	return obs, r, false, false, envs.Info{}
}
func (e *endlessEnv) output(reward float64) ([]float32, float64) {
	e.obs = append(e.obs[:0], 0, 0)
	if e.spoil == nil {
		return e.obs, reward
	}
	return e.spoil(e.step, e.obs, reward)
}

func endlessAgent(t *testing.T) *PPO {
	t.Helper()
	env := &endlessEnv{}
	a, err := New(env.ObservationSpace(), env.ActionSpace(), probeConfig(netconf.EncoderMLP), 1)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestEvaluateCutsEpisodesAtMaxSteps(t *testing.T) {
	a := endlessAgent(t)
	tests := []struct {
		name     string
		env      envs.Env
		maxSteps int
		want     float64
	}{
		{"an env without a time limit is cut at the cap", &endlessEnv{}, 50, 50},
		{"a time limit under the cap ends the episode first", envs.NewTimeLimit(&endlessEnv{}, 20), 50, 20},
		{"a cap of one step", &endlessEnv{}, 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := a.Evaluate(tc.env, 3, tc.maxSteps, 1)
			if err != nil || got != tc.want {
				t.Fatalf("Evaluate = %v, %v; want %v (every episode %v steps of reward 1)", got, err, tc.want, tc.want)
			}
		})
	}
	if _, err := a.Evaluate(&endlessEnv{}, 1, 0, 1); err == nil || !strings.Contains(err.Error(), "max steps 0") {
		t.Errorf("a cap of 0 steps: err = %v", err)
	}
}

// TestEvaluateRefusesNonFiniteEnvOutput holds evaluation to the checks
// envs.Vector makes in training: bad env output is an error naming the env,
// the episode and the step, never a meaningless finite return.
func TestEvaluateRefusesNonFiniteEnvOutput(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name  string
		spoil func(n int, obs []float32, r float64) ([]float32, float64)
		want  string
	}{
		{"NaN observation after 5 steps", func(n int, obs []float32, r float64) ([]float32, float64) {
			if n >= 5 {
				obs[1] = float32(nan)
			}
			return obs, r
		}, "episode 1 step 5: env *agent.endlessEnv step returned observation[1] = NaN"},
		{"Inf observation at a reset", func(n int, obs []float32, r float64) ([]float32, float64) {
			if n == 0 {
				obs[0] = float32(-inf)
			}
			return obs, r
		}, "episode 1: env *agent.endlessEnv reset returned observation[0] = -Inf"},
		{"Inf reward after 3 steps", func(n int, obs []float32, r float64) ([]float32, float64) {
			if n >= 3 {
				r = inf
			}
			return obs, r
		}, "episode 1 step 3: env *agent.endlessEnv step returned reward +Inf"},
		{"NaN reward", func(n int, obs []float32, r float64) ([]float32, float64) {
			return obs, nan
		}, "episode 1 step 1: env *agent.endlessEnv step returned reward NaN"},
		{"observation of the wrong size", func(n int, obs []float32, r float64) ([]float32, float64) {
			if n == 2 {
				return append(obs, obs...), r
			}
			return obs, r
		}, "episode 1 step 2: env *agent.endlessEnv step returned 4 observation values, want 2"},
	}
	a := endlessAgent(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Behind a time limit, as envs.Make builds it: the error names
			// the env itself, not the wrapper.
			env := envs.NewTimeLimit(&endlessEnv{spoil: tc.spoil}, 500)
			ret, err := a.Evaluate(env, 2, 100, 1)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Evaluate = %v, %v; want an error containing %q", ret, err, tc.want)
			}
		})
	}
}

// cancelAt is an endless env that cancels a context at step n: what a
// signal does while an agent is being evaluated.
type cancelAt struct {
	endlessEnv
	n      int
	cancel context.CancelFunc
}

func (e *cancelAt) Step(a []float32) ([]float32, float64, bool, bool, envs.Info) {
	if e.step+1 == e.n {
		e.cancel()
	}
	return e.endlessEnv.Step(a)
}

// TestPlayContextStopsWhenCancelled: a cancelled context stops evaluation
// before the next step, with an error wrapping context.Canceled (an
// evaluation of many long episodes stopped only at its end before), and an
// env whose spaces are not the agent's is refused before anything is played.
func TestPlayContextStopsWhenCancelled(t *testing.T) {
	a := endlessAgent(t)
	ctx, cancel := context.WithCancel(context.Background())
	env := &cancelAt{n: 30, cancel: cancel}
	played, err := a.PlayContext(ctx, env, 1000, 100_000, 1)
	if !errors.Is(err, context.Canceled) || played.Steps != 30 {
		t.Errorf("PlayContext cancelled at step 30: %d steps, %v; want 30 and context.Canceled", played.Steps, err)
	}
	other := envs.NewTimeLimit(&boxActionEnv{}, 10)
	if _, err := a.Play(other, 1, 10, 1); err == nil || !strings.Contains(err.Error(), "spaces") {
		t.Errorf("Play on an env with other spaces: %v; want an error naming the spaces", err)
	}
	if _, err := a.Play(nil, 1, 10, 1); err == nil {
		t.Error("Play on a nil env: no error")
	}
	if _, err := a.Train(context.Background(), nil, 10); err == nil {
		t.Error("Train on a nil vector: no error")
	}
}

// boxActionEnv is endlessEnv with a continuous action.
type boxActionEnv struct{ endlessEnv }

func (e *boxActionEnv) ActionSpace() envs.Space { return envs.NewBox(-1, 1, 1) }

// TestActRefusesNonFiniteObservations: an observation with a NaN or Inf
// (a sensor fault in a deployed program) is an error naming the value and
// the row, not a NaN action with a nil error; an agent not built is an
// error too.
func TestActRefusesNonFiniteObservations(t *testing.T) {
	a := endlessAgent(t)
	for _, obs := range [][]float32{{float32(math.NaN()), 0}, {0, 0, 0, float32(math.Inf(-1))}} {
		if act, err := a.Act(obs, nil, true); err == nil || !strings.Contains(err.Error(), "want finite numbers") {
			t.Errorf("Act(%v) = %v, %v; want an error", obs, act, err)
		}
	}
	if _, err := a.Act([]float32{0.5, -0.5}, nil, true); err != nil {
		t.Errorf("Act on a finite observation: %v", err)
	}
	var zero PPO
	if _, err := zero.Act([]float32{0, 0}, nil, true); err == nil {
		t.Error("Act of a zero PPO: no error")
	}
}

// TestPlaySampledSamplesReproducibly: PlaySampled acts as training does
// (an untrained CartPole policy's sampled episodes are not its
// deterministic ones), reproducibly: two copies with one random stream play
// the same episodes.
func TestPlaySampledSamplesReproducibly(t *testing.T) {
	env, err := envs.Make("CartPole-v1", nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(env.ObservationSpace(), env.ActionSpace(), probeConfig(netconf.EncoderMLP), 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	det, err := a.PlayContext(ctx, env, 10, 500, 3)
	if err != nil {
		t.Fatal(err)
	}
	var sampled [2]Episodes
	for i := range sampled {
		if sampled[i], err = a.Clone(7).PlaySampled(ctx, env, 10, 500, 3); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(sampled[0].Returns, sampled[1].Returns) || sampled[0].Steps != sampled[1].Steps {
		t.Errorf("two copies sampled %v and %v", sampled[0].Returns, sampled[1].Returns)
	}
	if slices.Equal(det.Returns, sampled[0].Returns) {
		t.Errorf("sampled episodes %v are the deterministic ones", det.Returns)
	}
}

// errAfter is a context whose Err is nil for its first n calls and
// context.Canceled after: a cancellation at a chosen check.
type errAfter struct {
	context.Context
	n int
}

func (c *errAfter) Err() error {
	if c.n--; c.n < 0 {
		return context.Canceled
	}
	return nil
}

// TestTrainStopsWithinAnUpdate: a cancellation during the update stops it
// at the next minibatch (a large recurrent agent's update takes minutes),
// where it used to run every epoch before Train looked again.
func TestTrainStopsWithinAnUpdate(t *testing.T) {
	for _, kind := range []netconf.EncoderKind{netconf.EncoderMLP, netconf.EncoderLSTM} {
		vec, err := envs.MakeVector("CartPole-v1", 2, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer vec.Close()
		cfg := probeConfig(kind)
		cfg.LearnStep, cfg.BatchSize, cfg.UpdateEpochs, cfg.MaxSeqLen = 64, 16, 4, 8
		a, err := New(vec.ObservationSpace(), vec.ActionSpace(), cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		full, err := a.Clone(3).Train(context.Background(), vec, 64)
		if err != nil || full.Last.Minibatches < 8 {
			t.Fatalf("%s: an update of %d minibatches, %v; want at least 8", kind, full.Last.Minibatches, err)
		}
		// Train's check before the rollout and two minibatches' pass.
		vec2, err := envs.MakeVector("CartPole-v1", 2, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer vec2.Close()
		_, err = a.Clone(3).Train(&errAfter{Context: context.Background(), n: 3}, vec2, 64)
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "after 2 minibatches") {
			t.Errorf("%s: Train cancelled in its update: %v; want context.Canceled after 2 minibatches", kind, err)
		}
	}
}

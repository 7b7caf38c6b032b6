package cli

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/evolverl/evolve/envs"
)

// faultyFault is what Faulty-v0 does wrong from its third step on: "" (nothing), "nan"
// (an observation), "inf" (a reward) or "panic". Tests set it around the command.
var faultyFault atomic.Value

// faultyEnv is an env of CartPole's spaces whose output faultyFault spoils.
type faultyEnv struct{ t int }

func (e *faultyEnv) ObservationSpace() envs.Space { return envs.NewBox(-1, 1, 4) }
func (e *faultyEnv) ActionSpace() envs.Space      { return envs.Discrete{N: 2} }
func (e *faultyEnv) Reset(int64) ([]float32, envs.Info) {
	e.t = 0
	return make([]float32, 4), envs.Info{}
}

func (e *faultyEnv) Step([]float32) ([]float32, float64, bool, bool, envs.Info) {
	e.t++
	obs, r := make([]float32, 4), 1.0
	if e.t >= 3 {
		switch faultyFault.Load() {
		case "nan":
			obs[2] = float32(math.NaN())
		case "inf":
			r = math.Inf(1)
		case "panic":
			panic("faulty env")
		}
	}
	return obs, r, e.t == 10, false, envs.Info{}
}

var registerFaulty sync.Once

// TestPlaySampleAndTrainingCatchABadEnv: an observation that is not finite or a reward
// that is not is bad input in play and sample as in training (exit 2, naming the env's own
// type and what it returned, nothing written); a panic in the env is a failure naming its
// site (exit 1), not a crash.
func TestPlaySampleAndTrainingCatchABadEnv(t *testing.T) {
	registerFaulty.Do(func() {
		if err := envs.Register(envs.Spec{ID: "Faulty-v0", New: func(envs.Options) (envs.Env, error) { return &faultyEnv{}, nil }, MaxEpisodeSteps: 10}); err != nil {
			t.Fatal(err)
		}
	})
	faultyFault.Store("")
	config, run := writeTiny(t, 512)
	text := strings.Replace(string(mustRead(t, config)), `id = "CartPole-v1"`, `id = "Faulty-v0"`, 1)
	if err := os.WriteFile(config, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := evolve(context.Background(), "-config", config, "-quiet"); code != exitOK {
		t.Fatalf("training on the sound env: exit %d\n%s", code, stderr)
	}
	defer faultyFault.Store("")
	dir := t.TempDir()
	for _, c := range []struct {
		fault, want string
		code        int
	}{
		{"nan", "env *cli.faultyEnv step returned observation[2] = NaN", exitBadInput},
		{"inf", "env *cli.faultyEnv step returned reward +Inf", exitBadInput},
		{"panic", "panic: faulty env, in github.com/evolverl/evolve/cli.(*faultyEnv).Step (", exitFailure},
	} {
		faultyFault.Store(c.fault)
		rec, data := filepath.Join(dir, c.fault+"-play.npz"), filepath.Join(dir, c.fault+"-sample.npz")
		for _, args := range [][]string{
			{"play", "-agent", run, "-episodes", "2", "-record", rec},
			{"sample", "-o", data, "-episodes", "2", run},
			{"-config", config, "-out", filepath.Join(dir, c.fault+"-run"), "-quiet"},
		} {
			code, _, stderr := evolve(context.Background(), args...)
			if code != c.code || !strings.Contains(stderr, c.want) {
				t.Errorf("%s with %s: exit %d, stderr %q; want %d and %q", args[0], c.fault, code, stderr, c.code, c.want)
			}
		}
		for _, f := range []string{rec, data} {
			if _, err := os.Stat(f); err == nil {
				t.Errorf("%s: written despite the bad env", f)
			}
		}
	}
}

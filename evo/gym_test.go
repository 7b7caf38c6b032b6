package evo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evolverl/evolve/internal/pytest"
	"github.com/evolverl/evolve/internal/runtest"
)

// TestGymnasiumCartPolePopulation trains the population of
// examples/gymnasium/cartpole.toml, for three generations of 2 agents, on
// Gymnasium's CartPole-v1 through the bridge when a Python with Gymnasium
// is found:
// it must learn, and a run stopped after its first generation and resumed
// must end bit-identical to one that ran straight through (seeds pass to
// reset(seed=...), so the Python env is as deterministic as the built-in).
func TestGymnasiumCartPolePopulation(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("trains two populations through Python")
	}
	python := pytest.Gymnasium(t)
	const gens = 3
	text, err := os.ReadFile("../examples/gymnasium/cartpole.toml")
	if err != nil {
		t.Fatal(err)
	}
	text = bytes.Replace(text, []byte(`python = "python3"`), fmt.Appendf(nil, "python = %q", python), 1)
	parse := func() Config {
		cfg, err := ParseConfig(text)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Population.Size, cfg.Population.EvoSteps, cfg.Population.Target = 2, 4096, math.Inf(1)
		cfg.Population.MaxSteps = gens * 2 * 4096
		cfg.OutDir = filepath.Join(t.TempDir(), "run")
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	straight := parse()
	sum, err := run(t, straight, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("gym:CartPole-v1: %d steps at %.0f env-steps/s, elite %.1f", sum.TotalSteps, sum.StepsPerSecond, sum.EliteFitness)
	if sum.Generations != gens || sum.EliteFitness < 150 {
		t.Errorf("%d generations, elite %.1f; want %d and an elite of at least 150", sum.Generations, sum.EliteFitness, gens)
	}

	split := parse()
	stopAndResume(t, split, Options{Workers: 1}, 1)
	runtest.SameRun(t, straight.OutDir, split.OutDir)
}

// TestGymChildrenEndWithTheRun trains on a standard-library Python env
// through the bridge (no Gymnasium needed), cancels the run while agents
// are training, and checks that every Python child has been reaped.
func TestGymChildrenEndWithTheRun(t *testing.T) {
	pytest.StdlibEnvs(t, "../envs/testdata/gymtest")
	cfg, err := ParseConfig([]byte(strings.NewReplacer("num_envs = 2", "num_envs = 4",
		"max_steps = 3072", "max_steps = 100_000_000", "evo_steps = 512", "evo_steps = 512\nworkers = 2",
		`module_env = "gymtest:Masked"`, `module_env = "gymtest:Masked"`+"\n"+
			`wrappers = [{ name = "gymtest.ScaleReward", kwargs = { factor = 2.0 } }, "gymtest.ScaleReward"]`,
	).Replace(gymMaskedConfig)))
	if err != nil {
		t.Fatal(err)
	}
	cfg.OutDir = filepath.Join(t.TempDir(), "run")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	saw := 0
	tr, err := New(cfg, Options{OnGeneration: func(r GenerationReport) {
		if r.Generation == 2 {
			// Cancel while the third generation trains, its children alive.
			go func() {
				for range 200 {
					if saw = len(pythonChildren(t)); saw > 0 {
						break
					}
					time.Sleep(5 * time.Millisecond)
				}
				cancel()
			}()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Run(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("run: %v, want context.Canceled", err)
	}
	if saw == 0 {
		t.Fatal("never saw a Python child while the run trained")
	}
	if left := pythonChildren(t); len(left) > 0 {
		t.Fatalf("python children left after the run ended: %v", left)
	}
}

// pythonChildren lists this process's child processes (zombies included),
// as "pid state".
func pythonChildren(t *testing.T) []string {
	paths, _ := filepath.Glob("/proc/[0-9]*/stat")
	if paths == nil {
		t.Skip("no /proc to list child processes")
	}
	var kids []string
	me := strconv.Itoa(os.Getpid())
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces, so split after ')'.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 && f[1] == me && strings.Contains(s[:i], "python") {
			kids = append(kids, strings.Fields(s)[0]+" "+f[0])
		}
	}
	return kids
}

package evo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/evolverl/evolve/internal/pytest"
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
	_, err = run(t, split, Options{Workers: 1}, func(r GenerationReport) bool { return r.Generation == 1 })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped run: err = %v, want context.Canceled", err)
	}
	tr, err := Resume(split.OutDir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	sameMetrics(t, readMetrics(t, straight.OutDir), readMetrics(t, split.OutDir))
	if !bytes.Equal(readFile(t, filepath.Join(straight.OutDir, "elite.safetensors")), readFile(t, filepath.Join(split.OutDir, "elite.safetensors"))) {
		t.Fatal("elite files differ between the straight and the resumed run")
	}
}

package evo

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/evolverl/evolve/internal/runtest"
)

// run trains cfg to its end (or until stop returns true after a
// generation, which cancels the run) and returns the trainer's error.
func run(t *testing.T, cfg Config, opts Options, stop func(GenerationReport) bool) (Summary, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if stop != nil {
		opts.OnGeneration = func(r GenerationReport) {
			if stop(r) {
				cancel()
			}
		}
	}
	tr, err := New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	return tr.Run(ctx)
}

// readMetrics returns metrics.csv's rows without the wall_s column.
func readMetrics(t *testing.T, dir string) [][]string { return runtest.Metrics(t, dir) }

func readFile(t *testing.T, path string) []byte { return runtest.ReadFile(t, path) }

func sameMetrics(t *testing.T, a, b [][]string) { runtest.SameMetrics(t, a, b) }

// TestWorkersDoNotChangeResults is also the race test: with -race it trains
// 2 generations instead of 3.
func TestWorkersDoNotChangeResults(t *testing.T) {
	gens := 3
	if raceEnabled {
		gens = 2
	}
	var dirs []string
	for _, w := range []int{1, 4} {
		cfg := tiny(t)
		cfg.Population.MaxSteps = gens * 3 * 256
		if _, err := run(t, cfg, Options{Workers: w}, nil); err != nil {
			t.Fatalf("workers %d: %v", w, err)
		}
		dirs = append(dirs, cfg.OutDir)
	}
	m1, m4 := readMetrics(t, dirs[0]), readMetrics(t, dirs[1])
	if len(m1) != 1+gens*3 {
		t.Fatalf("%d metrics rows, want a header and %d", len(m1), gens*3)
	}
	sameMetrics(t, m1, m4)
	if !bytes.Equal(readFile(t, filepath.Join(dirs[0], "elite.safetensors")), readFile(t, filepath.Join(dirs[1], "elite.safetensors"))) {
		t.Fatal("elite files differ between workers = 1 and 4")
	}
}

// TestWorkersDoNotChangeRecurrentResults repeats the check for LSTM agents
// (BPTT) on Probe7.
func TestWorkersDoNotChangeRecurrentResults(t *testing.T) {
	var dirs []string
	for _, w := range []int{1, 2} {
		cfg, err := ParseConfig([]byte(`
seed = 5
out_dir = "unused"
[env]
id = "Probe7-v0"
num_envs = 2
eval_episodes = 4
[population]
size = 2
max_steps = 1024
evo_steps = 256
[ppo]
learn_step = 64
batch_size = 16
max_seq_len = 4
update_epochs = 1
[net]
encoder = "lstm"
[net.lstm]
hidden = 16
[net.latent]
size = 8
[net.head]
hidden = [16]
[mutation]
no_mutation = 0.25
architecture = 0.25
parameters = 0.25
rl_hp = 0.25
`))
		if err != nil {
			t.Fatal(err)
		}
		cfg.OutDir = filepath.Join(t.TempDir(), "run")
		if _, err := run(t, cfg, Options{Workers: w}, nil); err != nil {
			t.Fatalf("workers %d: %v", w, err)
		}
		dirs = append(dirs, cfg.OutDir)
	}
	sameMetrics(t, readMetrics(t, dirs[0]), readMetrics(t, dirs[1]))
	if !bytes.Equal(readFile(t, filepath.Join(dirs[0], "elite.safetensors")), readFile(t, filepath.Join(dirs[1], "elite.safetensors"))) {
		t.Fatal("elite files differ between workers = 1 and 2")
	}
}

func TestResumeIsExact(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("trains three populations")
	}
	straight := tiny(t)
	straight.Population.MaxSteps = 4 * 3 * 256
	if _, err := run(t, straight, Options{}, nil); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		every     int // checkpoint.every
		stopAfter int // generation after which the run is cancelled
		rows      int // metrics rows (generations) before the resume
		ckpt      int // generation of the checkpoint it resumes from
	}{
		{"checkpoint every generation", 1, 2, 2, 2},
		// Generation 3 is in metrics.csv but not checkpointed: the resume
		// drops its rows and trains it again, to the same results.
		{"checkpoint every second generation", 2, 3, 3, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			split := tiny(t)
			split.Population.MaxSteps = straight.Population.MaxSteps
			split.Checkpoint.Every = tc.every
			_, err := run(t, split, Options{}, func(r GenerationReport) bool { return r.Generation == tc.stopAfter })
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("stopped run: err = %v, want context.Canceled", err)
			}
			if rows := readMetrics(t, split.OutDir); len(rows) != 1+tc.rows*3 {
				t.Fatalf("stopped after generation %d with %d metrics rows", tc.stopAfter, len(rows)-1)
			}
			tr, err := Resume(split.OutDir, Options{Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			if tr.gen != tc.ckpt {
				t.Fatalf("resumed from generation %d, want %d", tr.gen, tc.ckpt)
			}
			sum, err := tr.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if sum.Generations != 4 || !sum.Finished || sum.StopReason != StopBudget {
				t.Fatalf("resumed run ended %+v, want 4 generations, finished by the budget", sum)
			}
			sameMetrics(t, readMetrics(t, straight.OutDir), readMetrics(t, split.OutDir))
			if !bytes.Equal(readFile(t, filepath.Join(straight.OutDir, "elite.safetensors")), readFile(t, filepath.Join(split.OutDir, "elite.safetensors"))) {
				t.Fatal("elite files differ between the straight and the resumed run")
			}

			// A finished run resumes to nothing.
			tr, err = Resume(split.OutDir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !tr.Finished() {
				t.Fatal("a finished run does not say so on resume")
			}
			if s, err := tr.Run(context.Background()); err != nil || s.Generations != 4 {
				t.Fatalf("Run of a finished run: %+v, %v", s, err)
			}
		})
	}
}

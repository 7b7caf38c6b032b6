package evo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/internal/runtest"
)

// tinyConfig is a run of a few seconds: 3 CartPole agents of a small
// network training 256 steps per generation.
const tinyConfig = runtest.TinyConfig

// writeConfig writes text to dir/name and returns its path.
func writeConfig(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// tiny returns the tiny config with out_dir in a new temporary directory.
func tiny(t *testing.T) Config {
	t.Helper()
	return parseTiny(t, tinyConfig)
}

// parseTiny parses the config text, failing the test on an error, and
// points its out_dir into the test's temporary directory.
func parseTiny(t *testing.T, text string) Config {
	t.Helper()
	cfg, err := ParseConfig([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	cfg.OutDir = filepath.Join(t.TempDir(), "run")
	return cfg
}

// checkFailedRun checks what a run that failed (not on bad input) leaves:
// an error naming each of want, latest still at the initial checkpoint,
// and a summary whose stop reason is "error".
func checkFailedRun(t *testing.T, err error, dir string, want ...string) {
	t.Helper()
	if err == nil || errors.Is(err, ErrBadInput) {
		t.Fatalf("err = %v; want a failure that is not bad input", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
	if g, err := os.ReadFile(filepath.Join(dir, "checkpoints", "latest")); err != nil || strings.TrimSpace(string(g)) != "gen-000000" {
		t.Errorf("latest = %q, %v; want the last good generation, gen-000000", g, err)
	}
	var sum map[string]any
	if err := json.Unmarshal(readFile(t, filepath.Join(dir, "summary.json")), &sum); err != nil || sum["stop_reason"] != StopError {
		t.Errorf("summary.json: %v, %v", sum, err)
	}
}

// stopAndResume trains cfg until generation gen ends, cancels it there,
// resumes it and trains it to its end: what a run interrupted at gen does.
func stopAndResume(t *testing.T, cfg Config, opts Options, gen int) {
	t.Helper()
	if _, err := run(t, cfg, opts, func(r GenerationReport) bool { return r.Generation == gen }); !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped run: err = %v, want context.Canceled", err)
	}
	tr, err := Resume(cfg.OutDir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// straightAndStopped trains the tiny config with max_steps maxSteps to its
// end, and a second time (its config edited by edit, if not nil) until
// generation stopAt ends, where it is cancelled: the two runs a
// resume test compares.
func straightAndStopped(t *testing.T, maxSteps, stopAt int, edit func(*Config)) (straight, stopped Config) {
	t.Helper()
	straight = tiny(t)
	straight.Population.MaxSteps = maxSteps
	if _, err := run(t, straight, Options{}, nil); err != nil {
		t.Fatal(err)
	}
	stopped = tiny(t)
	stopped.Population.MaxSteps = maxSteps
	if edit != nil {
		edit(&stopped)
	}
	if _, err := run(t, stopped, Options{}, func(r GenerationReport) bool { return r.Generation == stopAt }); err == nil {
		t.Fatal("the stopped run did not stop")
	}
	return straight, stopped
}

// sameRunWhateverWorkers trains the config mk makes with 1 and with 2
// workers, and once stopped after generation 3 and resumed, wants the
// three runs' files the same, and returns the first run's directory.
func sameRunWhateverWorkers(t *testing.T, mk func(*testing.T) Config) string {
	t.Helper()
	var dirs []string
	for _, w := range []int{1, 2} {
		cfg := mk(t)
		if _, err := run(t, cfg, Options{Workers: w}, nil); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, cfg.OutDir)
	}
	runtest.SameRun(t, dirs[0], dirs[1])
	cfg := mk(t)
	stopAndResume(t, cfg, Options{}, 3)
	runtest.SameRun(t, dirs[0], cfg.OutDir)
	return dirs[0]
}

// wantColumnMoves fails the test unless metrics.csv of the run in dir has
// the column col with two values at least: evolution moved it.
func wantColumnMoves(t *testing.T, dir, col string) {
	t.Helper()
	rows := readMetrics(t, dir)
	c := slices.Index(rows[0], col)
	if c < 0 {
		t.Fatalf("metrics.csv has no %s column: %v", col, rows[0])
	}
	seen := map[string]bool{}
	for _, r := range rows[1:] {
		seen[r[c]] = true
	}
	if len(seen) < 2 {
		t.Errorf("%s never moved: %v", col, seen)
	}
}

// uninterrupted trains the tiny config (with maxSteps when > 0) to its end
// in a new directory, the run a stopped one must end as, and returns its
// config; tests that train populations to compare them skip in -short mode
// and under the race detector.
func uninterrupted(t *testing.T, maxSteps int) Config {
	t.Helper()
	if testing.Short() || raceEnabled {
		t.Skip("trains populations to compare them")
	}
	cfg := tiny(t)
	if maxSteps > 0 {
		cfg.Population.MaxSteps = maxSteps
	}
	if _, err := run(t, cfg, Options{}, nil); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// copyRunDir copies the run directory from into a new temporary directory
// and returns the copy's path, so that a test may damage it.
func copyRunDir(t *testing.T, from string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.CopyFS(dir, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// resumeToTheEnd resumes the run in dir and trains it to its end, failing
// the test (saying what was resumed) on an error.
func resumeToTheEnd(t *testing.T, dir, what string) {
	t.Helper()
	tr, err := Resume(dir, Options{})
	if err != nil {
		t.Fatalf("resume %s: %v", what, err)
	}
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// extendLogged resumes the run in dir, trains it to the budget maxSteps
// with no target, and returns what it logged.
func extendLogged(t *testing.T, dir string, maxSteps int) string {
	t.Helper()
	var log bytes.Buffer
	tr, err := Resume(dir, Options{Log: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.SetStopRules(maxSteps, math.Inf(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return log.String()
}

// resumeTo resumes the run in dir with the budget maxSteps and no target.
func resumeTo(t *testing.T, dir string, maxSteps int) *Trainer {
	t.Helper()
	tr, err := Resume(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.SetStopRules(maxSteps, math.Inf(1)); err != nil {
		t.Fatal(err)
	}
	return tr
}

// setNaN makes every entry of the agent's first weight matrix NaN, or with
// all of every one: it diverges (or fails to act) at its first step.
func setNaN(a *agent.PPO, all bool) {
	ws := a.WeightMatrices()
	if !all {
		ws = ws[:1]
	}
	for _, w := range ws {
		for i := range w.Data {
			w.Data[i] = float32(math.NaN())
		}
	}
}

// editPopulation rewrites population.json of the checkpoint in ckpt as
// edit leaves its fields, and population.sha256 to match: a checkpoint as
// another build (or a hand that knows the format) would have written it.
func editPopulation(t *testing.T, ckpt string, edit func(pop map[string]json.RawMessage)) {
	t.Helper()
	var pop map[string]json.RawMessage
	if err := json.Unmarshal(runtest.ReadFile(t, filepath.Join(ckpt, populationFile)), &pop); err != nil {
		t.Fatal(err)
	}
	edit(pop)
	b, err := json.MarshalIndent(pop, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{populationFile: b, populationSumFile: sumFileLine(b)} {
		if err := os.WriteFile(filepath.Join(ckpt, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

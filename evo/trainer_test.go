package evo

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evolverl/evolve/envs"
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
	m1 := readMetrics(t, dirs[0])
	if len(m1) != 1+gens*3 {
		t.Fatalf("%d metrics rows, want a header and %d", len(m1), gens*3)
	}
	runtest.SameRun(t, dirs[0], dirs[1])
}

// TestWorkersDoNotChangeRecurrentResults repeats the check for LSTM and GRU
// agents (BPTT) on Probe7.
func TestWorkersDoNotChangeRecurrentResults(t *testing.T) {
	for _, kind := range []string{"lstm", "gru", "transformer"} {
		t.Run(kind, func(t *testing.T) { workersDoNotChangeRecurrentResults(t, kind) })
	}
}

func workersDoNotChangeRecurrentResults(t *testing.T, kind string) {
	var dirs []string
	for _, w := range []int{1, 2} {
		cfg, err := ParseConfig([]byte(strings.ReplaceAll(strings.ReplaceAll(`
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
`, "lstm", kind), "transformer]\nhidden = 16", "transformer]\nwidth = 16\nmlp = 32\ncontext = 4\nmin_width = 8")))
		if err != nil {
			t.Fatal(err)
		}
		cfg.OutDir = filepath.Join(t.TempDir(), "run")
		if _, err := run(t, cfg, Options{Workers: w}, nil); err != nil {
			t.Fatalf("workers %d: %v", w, err)
		}
		dirs = append(dirs, cfg.OutDir)
	}
	runtest.SameRun(t, dirs[0], dirs[1])
}

func TestResumeIsExact(t *testing.T) {
	straight := uninterrupted(t, 4*3*256)
	tests := []struct {
		name      string
		every     int // checkpoint.every
		stopAfter int // generation after which the run is cancelled
		rows      int // metrics rows (generations) before the resume
		ckpt      int // generation of the checkpoint it resumes from
		cut       int // bytes cut off the end of metrics.csv before the resume
	}{
		{"checkpoint every generation", 1, 2, 2, 2, 0},
		// Generation 3 is in metrics.csv but not checkpointed: the resume
		// drops its rows and trains it again, to the same results.
		{"checkpoint every second generation", 2, 3, 3, 2, 0},
		// A crash tore generation 3's last row: the resume drops it with
		// the rest of generation 3.
		{"torn last row after the checkpoint", 2, 3, 3, 2, 25},
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
			if tc.cut > 0 {
				path := filepath.Join(split.OutDir, "metrics.csv")
				b := readFile(t, path)
				if err := os.WriteFile(path, b[:len(b)-tc.cut], 0o644); err != nil {
					t.Fatal(err)
				}
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
			runtest.SameRun(t, straight.OutDir, split.OutDir)

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

// TestMetricsUpTo checks what a resume keeps of metrics.csv: the rows up to
// the checkpoint's generation, a torn last row of a later generation
// dropped, any other malformed row an error naming its line.
func TestMetricsUpTo(t *testing.T) {
	header := []string{"generation", "agent", "fitness"}
	const head = "generation,agent,fitness\n"
	tests := []struct {
		name, csv string
		rows      int    // rows kept
		err       string // or the error
	}{
		{"whole", head + "1,0,5\n1,1,6\n2,0,7\n2,1,8\n3,0,9\n", 4, ""},
		{"torn row of a later generation", head + "1,0,5\n2,0,7\n3,0,9\n3,1", 2, ""},
		{"torn first row of a later generation", head + "1,0,5\n2,0,7\n3,", 2, ""},
		{"torn generation field", head + "1,0,5\n2,0,7\n1", 2, ""},
		{"torn open quote", head + "1,0,5\n2,0,7\n3,0,\"ab", 2, ""},
		{"anything after a later generation", head + "1,0,5\n3,0,9\n3,x\n", 1, ""},
		{"malformed row before the checkpoint", head + "1,0\n2,0,7\n3,0,9\n", 0, "record on line 2: wrong number of fields"},
		{"malformed last row that ends its line", head + "1,0,5\n2,0,7\n3,0\n", 0, "record on line 4: wrong number of fields"},
		{"torn row of the checkpoint's generation", head + "1,0,5\n2,0,7\n2,1", 0, "record on line 4: wrong number of fields"},
		{"bad generation", head + "1,0,5\nx,0,7\n", 0, `record on line 3: generation "x"`},
		{"other header", "a,b,c\n1,0,5\n", 0, "header differs"},
		{"empty", "", 0, "header differs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := metricsUpTo([]byte(tc.csv), header, 2)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || len(rows) != tc.rows {
				t.Fatalf("%d rows, %v; want %d rows", len(rows), err, tc.rows)
			}
		})
	}
}

// TestStopRulesExtendAFinishedRun stops a run by its target after 2
// generations, resumes it with no target and a budget of 4, and checks
// that it trains exactly what a run with those rules from the start
// trains; then that config.toml keeps the new rules, and that rules which
// would have stopped the run too are refused.
func TestStopRulesExtendAFinishedRun(t *testing.T) {
	const budget = 4 * 3 * 256
	straight := uninterrupted(t, budget)

	early := tiny(t)
	early.Population.MaxSteps = 100 * budget
	early.Population.Target = 0 // every CartPole return reaches it
	early.Population.MinGenerations = 2
	if sum, err := run(t, early, Options{}, nil); err != nil || sum.StopReason != StopTarget || sum.Generations != 2 {
		t.Fatalf("run with a target: %+v, %v; want a stop by the target after 2 generations", sum, err)
	}
	tr := resumeTo(t, early.OutDir, budget)
	if tr.Finished() {
		t.Fatal("a run given a larger budget and no target is still finished")
	}
	sum, err := tr.Run(context.Background())
	if err != nil || sum.Generations != 4 || sum.StopReason != StopBudget {
		t.Fatalf("extended run: %+v, %v; want 4 generations, stopped by the budget", sum, err)
	}
	runtest.SameRun(t, straight.OutDir, early.OutDir)

	saved, err := LoadConfig(filepath.Join(early.OutDir, "config.toml"))
	if err != nil || saved.Population.MaxSteps != budget || !math.IsInf(saved.Population.Target, 1) {
		t.Fatalf("config.toml after the extension: max_steps %d, target %v, %v; want %d and inf",
			saved.Population.MaxSteps, saved.Population.Target, err, budget)
	}
	tr, err = Resume(early.OutDir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Finished() {
		t.Fatal("the extended run does not resume as finished")
	}
	for _, tc := range []struct {
		maxSteps int
		target   float64
		want     string
	}{
		{budget, math.Inf(1), "already taken"},
		{2 * budget, -1, "already reaches it"},
		{0, math.Inf(1), "want >= 1"},
		{2 * budget, math.NaN(), "NaN"},
	} {
		if err := tr.SetStopRules(tc.maxSteps, tc.target); !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("SetStopRules(%d, %v) on a finished run: %v; want an error saying %q", tc.maxSteps, tc.target, err, tc.want)
		}
	}
	tr.Close()
}

// TestStopRulesAnInterruptedRunMeets: a run stopped between checkpoints,
// resumed with a budget it has already spent, was let train one more
// generation (exit 0, and config.toml's budget then below the steps taken)
// where a finished run is refused; both are refused now, and the directory
// is left as it was.
func TestStopRulesAnInterruptedRunMeets(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("trains populations to compare them")
	}
	cfg := tiny(t)
	cfg.Population.EliteEpisodes = 2
	if _, err := run(t, cfg, Options{}, func(r GenerationReport) bool { return r.Generation == 2 }); !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped run: %v", err)
	}
	tr, err := Resume(cfg.OutDir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if tr.Finished() {
		t.Fatal("the stopped run resumes as finished")
	}
	best := tr.best
	for _, tc := range []struct {
		maxSteps int
		target   float64
		want     string
	}{
		{tr.totalSteps, math.Inf(1), "already taken"},
		{1000, math.Inf(1), "already taken"},
		{cfg.Population.MaxSteps, best, "already reaches it"},
	} {
		if err := tr.SetStopRules(tc.maxSteps, tc.target); !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("SetStopRules(%d, %v) on a run stopped after generation 2: %v; want an error saying %q", tc.maxSteps, tc.target, err, tc.want)
		}
	}
	if err := tr.SetStopRules(tr.totalSteps+1, best+1); err != nil {
		t.Errorf("rules it does not meet yet: %v", err)
	}
}

// TestResumeAcceptsTheWholeConfigDigest resumes a checkpoint that records
// the config's whole Digest, as those written before the stopping rules
// left the checkpoint's digest did, and checks that the run goes on as
// one that never stopped.
func TestResumeAcceptsTheWholeConfigDigest(t *testing.T) {
	straight := uninterrupted(t, 0)
	old := tiny(t)
	if _, err := run(t, old, Options{}, func(r GenerationReport) bool { return r.Generation == 2 }); !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped run: %v", err)
	}
	full, err := old.Digest()
	if err != nil {
		t.Fatal(err)
	}
	// Such checkpoints kept no config either.
	editPopulation(t, filepath.Join(old.OutDir, "checkpoints", "gen-000002"), func(pop map[string]json.RawMessage) {
		pop["config_digest"], _ = json.Marshal(full)
		delete(pop, "config")
	})
	resumeToTheEnd(t, old.OutDir, "from a checkpoint with the whole config's digest")
	runtest.SameRun(t, straight.OutDir, old.OutDir)
}

// TestMetricsUpdateLR: update_lr is the lr of the agent's last update —
// the lr column itself without anneal_lr, decayed below it with.
func TestMetricsUpdateLR(t *testing.T) {
	for _, anneal := range []bool{false, true} {
		cfg := tiny(t)
		cfg.PPO.AnnealLR = anneal
		cfg.Population.Independent = true // the lr stays each agent's own
		tr, err := New(cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tr.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		rows, _ := runtest.CSV(t, filepath.Join(cfg.OutDir, "metrics.csv"))
		for i, r := range rows {
			lr, err1 := strconv.ParseFloat(r["lr"], 64)
			ulr, err2 := strconv.ParseFloat(r["update_lr"], 64)
			if err := errors.Join(err1, err2); err != nil {
				t.Fatalf("row %d: %v", i+1, err)
			}
			if !anneal && ulr != lr || anneal && !(ulr >= 0 && ulr < lr) {
				t.Errorf("anneal_lr %v, row %d: update_lr %g, lr %g", anneal, i+1, ulr, lr)
			}
		}
	}
}

// TestAnnealingSpansAtLeastAGeneration: with a budget under one generation
// (the run trains one anyway), the annealing horizon covers the steps the
// agents train, where the budget's share alone ended it after a quarter of
// the generation and the rest trained at lr 0.
func TestAnnealingSpansAtLeastAGeneration(t *testing.T) {
	cfg := tiny(t)
	cfg.PPO.AnnealLR = true
	cfg.Population.Independent = true
	cfg.Population.MaxSteps = cfg.Population.Size * cfg.Population.EvoSteps / 4
	tr, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, m := range tr.Members() {
		if a := m.Agent; a.TotalSteps < a.Steps {
			t.Errorf("agent %d trained %d steps with an annealing horizon of %d", m.Index, a.Steps, a.TotalSteps)
		}
	}
}

// cancelOnMake is an env id whose every instance is CartPole-v1, but whose
// instance number cancelAt (counting from 1) cancels cancelRun on its first
// reset: the elite confirmation's env, made after the training vector's.
var cancelOnMake struct {
	sync.Mutex
	made, cancelAt int
	cancelRun      context.CancelFunc
}

type cancellingEnv struct {
	envs.Env
	cancel context.CancelFunc
}

func (e *cancellingEnv) Reset(seed int64) ([]float32, envs.Info) {
	if e.cancel != nil {
		e.cancel()
	}
	return e.Env.Reset(seed)
}

func init() {
	envs.Register(envs.Spec{ID: "CancelOnConfirm-v0", MaxEpisodeSteps: 500, Summary: "CartPole; cancels a test's run when its confirmation env resets",
		New: func(opts envs.Options) (envs.Env, error) {
			inner, err := envs.Make("CartPole-v1", nil)
			if err != nil {
				return nil, err
			}
			cancelOnMake.Lock()
			defer cancelOnMake.Unlock()
			cancelOnMake.made++
			e := &cancellingEnv{Env: inner}
			if cancelOnMake.made == cancelOnMake.cancelAt {
				e.cancel = cancelOnMake.cancelRun
			}
			return e, nil
		}})
}

// TestConfirmationIsCancellable: a run stopped while the elite's
// confirmation plays is abandoned at once, as one stopped while training
// is: the error wraps context.Canceled, no checkpoint of that generation is
// written, and the run resumes from the one before.
func TestConfirmationIsCancellable(t *testing.T) {
	cfg := parseTiny(t, strings.Replace(tinyConfig, `id = "CartPole-v1"`, `id = "CancelOnConfirm-v0"`, 1))
	// A million confirmation episodes would take minutes to play out.
	cfg.Population.Size, cfg.Population.EliteEpisodes, cfg.Population.Workers = 1, 1_000_000, 1
	cfg.Tournament.Size = 1
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cancelOnMake.Lock()
	// New and Validate build one env each; the run's training vector
	// num_envs more: the next is the confirmation's.
	cancelOnMake.made, cancelOnMake.cancelAt, cancelOnMake.cancelRun = 0, 0, cancel
	cancelOnMake.Unlock()
	tr, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cancelOnMake.Lock()
	cancelOnMake.cancelAt = cancelOnMake.made + cfg.Env.NumEnvs + 1
	cancelOnMake.Unlock()
	start := time.Now()
	sum, err := tr.Run(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the stopped run took %v", d)
	}
	if _, err := os.Stat(filepath.Join(cfg.OutDir, "checkpoints", "gen-000001")); err == nil {
		t.Error("the abandoned generation was checkpointed")
	}
	// The summary describes the checkpoint the run resumes from (generation
	// 0), not the abandoned generation's steps.
	written, err := ReadSummary(cfg.OutDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []Summary{sum, written} {
		if s.Generations != 0 || s.TotalSteps != 0 || s.GlobalSteps != 0 {
			t.Errorf("summary: %d generations, %d steps, %d global steps; want 0, 0, 0 (generation 1 was abandoned)",
				s.Generations, s.TotalSteps, s.GlobalSteps)
		}
	}
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/evo"
)

// benchEvalSeed seeds the re-evaluation of every elite: all of them play
// the same fresh episodes, none of which a run's tournament saw (those
// seeds are 63-bit hashes).
const benchEvalSeed = 1_000_000_007

// benchVariant is one way of running a config: "evo" as written, "fixed"
// with [population] independent = true, "lrF" evolving from a learning rate
// F times the config's.
type benchVariant struct {
	Name     string
	Fixed    bool
	LRFactor float64 // 1 but for lrF
}

func parseVariant(s string) (benchVariant, error) {
	switch {
	case s == "evo":
		return benchVariant{Name: s, LRFactor: 1}, nil
	case s == "fixed":
		return benchVariant{Name: s, Fixed: true, LRFactor: 1}, nil
	case strings.HasPrefix(s, "lr"):
		f, err := strconv.ParseFloat(s[2:], 64)
		if err == nil && f > 0 && !math.IsInf(f, 0) {
			return benchVariant{Name: s, LRFactor: f}, nil
		}
	}
	return benchVariant{}, fmt.Errorf("variant %q: want evo, fixed or lrF (lr0.1: evolution from a tenth of the config's lr)", s)
}

// apply returns cfg as variant v runs it. A changed lr widens the [hp.lr]
// range to include it, so that evolution starts there and can move back.
func (v benchVariant) apply(cfg evo.Config) evo.Config {
	cfg.Population.Independent = v.Fixed
	if v.LRFactor != 1 {
		cfg.PPO.LR *= v.LRFactor
		hp := make(map[string]evo.HPRange, len(cfg.HP))
		for k, r := range cfg.HP {
			hp[k] = r
		}
		if r, ok := hp["lr"]; ok {
			r.Min, r.Max = min(r.Min, cfg.PPO.LR), max(r.Max, cfg.PPO.LR)
			hp["lr"] = r
		}
		cfg.HP = hp
	}
	return cfg
}

// benchRun is one finished run of the benchmark: a config, a variant and a
// seed.
type benchRun struct {
	Config, Env, Variant string
	Seed                 int64
	Size                 int
	Summary              evo.Summary
	// EliteSteps is the elite's own env steps, its ancestors' included.
	EliteSteps int
	// EvalReturn is the elite's mean return over EvalEpisodes fresh
	// episodes (NaN when re-evaluation is off).
	EvalReturn   float64
	EvalEpisodes int
	// LastBest and LastMean are the last generation's best and mean
	// fitness (diverged agents count as −Inf in the best, not in the mean).
	LastBest, LastMean float64
	// FinalLR is the geometric mean of the last generation's lr, exactly
	// the shared lr when the agents agree. benchmarks.csv keeps it exact
	// (the shortest float64 that reads back the same); BENCHMARKS.md shows
	// 3 significant digits.
	FinalLR float64
	// StepsToAnchor is the population's env steps when a generation's
	// best fitness first reached the anchor (-1: never, or no anchor).
	StepsToAnchor int
	// Dir is the run's directory and BaseLR the config's own lr.
	Dir    string
	BaseLR float64
}

// StepsPerAgent is the population's env steps divided by its size: what
// one agent's budget was, to set beside single-agent figures.
func (r benchRun) StepsPerAgent() int { return r.Summary.TotalSteps / r.Size }

// StepsPerSecond is the run's env steps per second over all its sessions.
func (r benchRun) StepsPerSecond() float64 {
	if r.Summary.WallSeconds <= 0 {
		return 0
	}
	return float64(r.Summary.TotalSteps) / r.Summary.WallSeconds
}

// Score is what is held against the anchor: the re-evaluated return when
// there is one, the elite's fitness otherwise.
func (r benchRun) Score() float64 {
	if r.EvalEpisodes > 0 {
		return r.EvalReturn
	}
	return r.Summary.EliteFitness
}

// errNotRun is run's answer with -collect for a run not finished in -out.
var errNotRun = errors.New("not run")

// run trains (or reuses, or resumes) one run of config name in variant v
// with seed and returns what the report needs of it.
func (o benchOptions) run(ctx context.Context, name string, v benchVariant, base evo.Config, seed int64, stderr io.Writer) (benchRun, error) {
	cfg := v.apply(base)
	cfg.Seed = seed
	cfg.OutDir = filepath.Join(o.out, "runs", name, v.Name, fmt.Sprintf("seed-%d", seed))
	if o.noTarget {
		cfg.Population.Target = math.Inf(1)
	}
	if o.workers > 0 {
		cfg.Population.Workers = o.workers
	}
	if o.collect {
		if sum, err := evo.ReadSummary(cfg.OutDir); err != nil || !sum.Finished {
			return benchRun{}, errNotRun
		}
	}
	tr, err := o.trainer(ctx, cfg)
	if err != nil {
		return benchRun{}, err
	}
	if !o.quiet && !tr.Finished() {
		fmt.Fprintf(stderr, "bench: %s %s seed %d: training %d agents on %s, up to %s env steps\n",
			name, v.Name, seed, cfg.Population.Size, cfg.Env.ID, commas(cfg.Population.MaxSteps))
	}
	if _, err := tr.Run(ctx); err != nil {
		return benchRun{}, err
	}
	r := benchRun{Config: name, Env: cfg.Env.ID, Variant: v.Name, Seed: seed, Size: cfg.Population.Size,
		Dir: cfg.OutDir, BaseLR: base.PPO.LR, EvalReturn: math.NaN()}
	if err := o.measure(&r, cfg); err != nil {
		return r, err
	}
	if !o.quiet {
		fmt.Fprintf(stderr, "bench: %s %s seed %d: elite %.2f, re-evaluated %.2f, last generation best %.2f mean %.2f; %s env steps in %s (%s/s)\n",
			name, v.Name, seed, r.Summary.EliteFitness, r.EvalReturn, r.LastBest, r.LastMean, commas(r.Summary.TotalSteps),
			fmtDuration(time.Duration(r.Summary.WallSeconds*float64(time.Second))), commas(int(r.StepsPerSecond()+0.5)))
	}
	return r, nil
}

// trainer resumes the run of cfg in its directory (a finished one is
// reused as it is) or prepares it there. A run of another config in that
// directory is an error, never overwritten.
func (o benchOptions) trainer(ctx context.Context, cfg evo.Config) (*evo.Trainer, error) {
	opts := evo.Options{Workers: o.workers, Log: slog.New(slog.DiscardHandler)}
	// A run directory has its config.toml before anything else of it: a run
	// stopped before its first checkpoint is started again by Resume.
	if _, err := os.Stat(filepath.Join(cfg.OutDir, "config.toml")); err != nil {
		if err := evo.CheckOutDir(cfg.OutDir); err != nil {
			return nil, fmt.Errorf("-out %s: %w", o.out, err)
		}
		return evo.NewContext(ctx, cfg, opts) // which checks the config, making the env once
	}
	old, err := evo.LoadConfigContext(ctx, filepath.Join(cfg.OutDir, "config.toml"))
	if err != nil {
		return nil, err
	}
	want, err1 := cfg.Digest()
	got, err2 := old.Digest()
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	if want != got {
		what := ""
		if d := configDiff(old, cfg); d != "" {
			what = " (" + d + ")"
		}
		advice := "remove it or choose another -out"
		if o.collect {
			advice = "report it with the config it was trained with (and -no-target if it was)"
		} else if math.IsInf(old.Population.Target, 1) != math.IsInf(cfg.Population.Target, 1) {
			advice = "was it trained with -no-target? Otherwise " + advice
		}
		return nil, fmt.Errorf("%s holds a run of another config%s: %s%w", cfg.OutDir, what, advice, errBadInput)
	}
	return evo.ResumeContext(ctx, cfg.OutDir, opts)
}

// measure reads what the finished run r of cfg reports (summary,
// metrics, the steps to the anchor) and re-evaluates its elite on the
// bench's own fresh episodes.
func (o benchOptions) measure(r *benchRun, cfg evo.Config) error {
	var err error
	if r.Summary, err = evo.ReadSummary(cfg.OutDir); err != nil {
		return err
	}
	m, err := evo.ReadMetrics(filepath.Join(cfg.OutDir, "metrics.csv"))
	if err != nil {
		return err
	}
	// A finished run's metrics.csv holds every generation its summary counts;
	// one cut short would report an earlier generation as the last.
	if last := m.Rows[len(m.Rows)-1].Generation; r.Summary.Finished && last < r.Summary.Generations {
		return fmt.Errorf("%s ends at generation %d, but summary.json counts %d: the file was cut short: restore it, or remove the run to train it again%w",
			filepath.Join(cfg.OutDir, "metrics.csv"), last, r.Summary.Generations, errBadInput)
	}
	r.LastBest, r.LastMean, r.FinalLR = lastGeneration(m)
	r.StepsToAnchor = -1
	if a, ok := anchors[r.Env]; ok {
		r.StepsToAnchor = stepsToReach(m, a.Return)
	}
	if r.Summary.EliteFile == "" {
		return nil
	}
	// The run's own elite file, wherever the run directory is now:
	// summary.json names it by the path it had when it was written.
	r.Summary.EliteFile = filepath.Join(cfg.OutDir, "elite.safetensors")
	a, err := agent.Load(r.Summary.EliteFile)
	if err != nil {
		return err
	}
	r.EliteSteps = a.Steps
	if o.evalEpisodes == 0 {
		return nil
	}
	env, err := envs.Make(cfg.Env.ID, cfg.Env.Options)
	if err != nil {
		return err
	}
	defer envs.Close(env)
	if r.EvalReturn, err = a.Evaluate(env, o.evalEpisodes, cfg.Env.EvalMaxSteps, benchEvalSeed); err != nil {
		return fmt.Errorf("re-evaluate %s: %w", r.Summary.EliteFile, err)
	}
	r.EvalEpisodes = o.evalEpisodes
	return nil
}

// lastGeneration returns the best and the mean fitness of the last
// generation in m, and the geometric mean of its lr (NaN without an lr
// column); the mean fitness leaves out diverged agents (NaN if all are).
func lastGeneration(m *evo.Metrics) (best, mean, lr float64) {
	last := m.Rows[len(m.Rows)-1].Generation
	col := slices.Index(m.HPNames, "lr")
	best = math.Inf(-1)
	sum, logLR, first, n, all := 0.0, 0.0, 0.0, 0, 0
	for _, r := range m.Rows {
		if r.Generation != last {
			continue
		}
		best = max(best, r.Fitness)
		if !math.IsInf(r.Fitness, 0) {
			sum += r.Fitness
			n++
		}
		if col >= 0 {
			if all == 0 {
				first = r.HP[col]
			}
			logLR += math.Log(r.HP[col] / first)
			all++
		}
	}
	mean, lr = math.NaN(), math.NaN()
	if n > 0 {
		mean = sum / float64(n)
	}
	if all > 0 {
		// Relative to the first lr, so that a population that shares one
		// lr reports it exactly (0.001, not 0.0010000000000000002).
		lr = first * math.Exp(logLR/float64(all))
	}
	return best, mean, lr
}

// stepsToReach returns the population's env steps at the end of the first
// generation in m whose best fitness reached score, or -1.
func stepsToReach(m *evo.Metrics, score float64) int {
	for _, r := range m.Rows {
		if r.Fitness >= score {
			return int(r.TotalSteps)
		}
	}
	return -1
}

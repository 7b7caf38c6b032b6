package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"image/color"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/evo"
	"github.com/evolverl/evolve/internal/atomicfile"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The configs `evolve bench` runs when it is given none: the classic
// tasks, then with -long the ones that take hours on two cores (and every
// configs/minatar*.toml).
var (
	benchClassic = []string{"cartpole", "acrobot", "mountaincar-continuous", "mountaincar", "pendulum",
		"cartpole-novel-lstm", "pendulum-novel-lstm"}
	benchLong = []string{"lunarlander", "lunarlander-continuous"}
)

// anchor is the published score of tuned single-agent PPO on an env that a
// benchmark row is set beside.
type anchor struct {
	Return float64
	Steps  int // the env steps it was trained for
	Source string
}

// anchors are rl-baselines3-zoo's figures for tuned PPO (ppo_lstm from
// sb3-contrib for the NoVel envs), by our env id.
var anchors = map[string]anchor{
	"CartPole-v1":              {500, 100_000, "zoo PPO"},
	"Acrobot-v1":               {-73.5, 1_000_000, "zoo PPO"},
	"Pendulum-v1":              {-172, 100_000, "zoo PPO with gSDE"},
	"MountainCarContinuous-v0": {88.3, 20_000, "zoo PPO"},
	"MountainCar-v0":           {-110.4, 1_000_000, "zoo PPO, VecNormalize"},
	"LunarLander-v3":           {242, 1_000_000, "zoo PPO, v2"},
	"LunarLanderContinuous-v3": {271, 1_000_000, "zoo PPO, v2"},
	"CartPoleNoVel-v1":         {500, 100_000, "zoo ppo_lstm"},
	"PendulumNoVel-v1":         {-218, 100_000, "zoo ppo_lstm"},
}

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

// benchOptions are the bench command's settings.
type benchOptions struct {
	seeds, workers, evalEpisodes int
	out, report, configDir       string
	noTarget, quiet, collect     bool
	defaults                     bool // no configs given: the default list
	// notRun names the runs -collect found missing or unfinished.
	notRun        []string
	variants      []benchVariant
	configs       []string // paths
	command, note string
}

// benchCmd is `evolve bench [flags] [CONFIG...]`: it trains every config
// with every variant and seed in turn (runs already in -out are reused or
// resumed), then writes BENCHMARKS.md, benchmarks.csv and, for configs run
// from a changed lr, lr-<config>.png.
func benchCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCommand("evolve bench", fmt.Sprintf("usage: evolve bench [-seeds N] [-out DIR] [-report DIR] [-long] [-no-target] [-variants LIST] [-workers N] [CONFIG.toml ...]\n\n"+
		"Trains each config with each variant and seed in sequence and writes BENCHMARKS.md and benchmarks.csv.\n"+
		"Without CONFIGs: %s (and with -long %s, minatar*.toml) from -configs.\n\n",
		strings.Join(benchClassic, ", "), strings.Join(benchLong, ", ")), stderr)
	fs := c.fs
	var o benchOptions
	fs.IntVar(&o.seeds, "seeds", 3, "run seeds 1 to `N` of every config")
	fs.StringVar(&o.out, "out", "bench", "write the runs under `DIR`/runs/<config>/<variant>/seed-<N>; finished runs there are reused, stopped ones resumed")
	fs.StringVar(&o.report, "report", "", "write BENCHMARKS.md, benchmarks.csv and the lr charts to `DIR` (default: -out)")
	fs.StringVar(&o.configDir, "configs", "configs", "read the default configs from `DIR`")
	long := fs.Bool("long", false, "with the default configs, add the long ones (LunarLander, MinAtar)")
	fs.BoolVar(&o.noTarget, "no-target", false, "ignore the configs' targets: every run spends its whole step budget")
	variants := fs.String("variants", "evo", "comma-separated `LIST` of evo (as configured), fixed (independent agents, no selection), lrF (evolution from F × the config's lr, e.g. lr0.1,lr10)")
	fs.IntVar(&o.workers, "workers", 0, "train at most `N` agents at once (0: each config's population.workers)")
	fs.IntVar(&o.evalEpisodes, "eval-episodes", 100, "re-evaluate each run's elite on `N` fresh episodes (0: off)")
	fs.StringVar(&o.note, "note", "", "a `TEXT` for the report's header (the load on the machine, ...)")
	fs.BoolVar(&o.quiet, "quiet", false, "print nothing but errors")
	fs.BoolVar(&o.collect, "collect", false, "train nothing: report the finished runs in -out and list the missing ones")
	if status, ok := c.parse(args); !ok {
		return status
	}
	bad := c.misuse
	switch {
	case o.seeds < 1:
		return bad("-seeds %d: want >= 1", o.seeds)
	case o.workers < 0:
		return bad("-workers %d: want >= 0", o.workers)
	case o.evalEpisodes < 0:
		return bad("-eval-episodes %d: want >= 0 (0: off)", o.evalEpisodes)
	case o.out == "":
		return bad("-out: want a directory")
	}
	if o.report == "" {
		o.report = o.out
	}
	for _, s := range strings.Split(*variants, ",") {
		v, err := parseVariant(strings.TrimSpace(s))
		if err != nil {
			return bad("-variants: %v", err)
		}
		if slices.ContainsFunc(o.variants, func(w benchVariant) bool { return w.Name == v.Name }) {
			return bad("-variants: %q given twice", v.Name)
		}
		o.variants = append(o.variants, v)
	}
	o.configs = fs.Args()
	if o.defaults = len(o.configs) == 0; o.defaults {
		names := benchClassic
		if *long {
			names = append(slices.Clip(names), benchLong...)
		}
		for _, n := range names {
			o.configs = append(o.configs, filepath.Join(o.configDir, n+".toml"))
		}
		if *long {
			more, _ := filepath.Glob(filepath.Join(o.configDir, "minatar*.toml"))
			o.configs = append(o.configs, more...)
		}
	} else if *long {
		return bad("-long applies to the default configs only, not to %s", o.configs[0])
	}
	// The command as the report records it: the flags that were set (the
	// note stands in the report anyway), then the configs.
	cmd := []string{"evolve bench"}
	fs.Visit(func(f *flag.Flag) {
		switch {
		case f.Name == "note":
		case f.Value.String() == "true" && slices.Contains([]string{"long", "no-target", "quiet", "collect"}, f.Name):
			cmd = append(cmd, "-"+f.Name)
		default:
			cmd = append(cmd, "-"+f.Name, f.Value.String())
		}
	})
	o.command = strings.Join(append(cmd, fs.Args()...), " ")

	// Every config is read and checked before the first run starts.
	cfgs := make([]evo.Config, len(o.configs))
	for i, p := range o.configs {
		cfg, err := evo.LoadConfig(p)
		if err != nil {
			return bad("%v", err)
		}
		cfgs[i] = cfg
	}
	var runs []benchRun
	for i, cfg := range cfgs {
		name := strings.TrimSuffix(filepath.Base(o.configs[i]), ".toml")
		for _, v := range o.variants {
			for s := range o.seeds {
				r, err := o.run(ctx, name, v, cfg, int64(s+1), stderr)
				if errors.Is(err, errNotRun) {
					o.notRun = append(o.notRun, fmt.Sprintf("%s %s seed %d", name, v.Name, s+1))
					continue
				}
				if err != nil {
					fmt.Fprintf(stderr, "evolve bench: %s %s seed %d: %v\n", name, v.Name, s+1, err)
					switch {
					case ctx.Err() != nil:
						fmt.Fprintf(stderr, "evolve bench: stopped; the same command continues (finished runs are reused, this one resumed)\n")
						if sig, ok := stopSignal(ctx); ok {
							return exitCode(sig)
						}
						return 130
					case errors.Is(err, evo.ErrBadInput):
						return exitBadInput
					}
					return exitFailure
				}
				runs = append(runs, r)
			}
		}
	}
	written, err := o.writeReport(runs)
	for _, p := range written {
		fmt.Fprintln(stdout, p)
	}
	if err != nil {
		fmt.Fprintf(stderr, "evolve bench: %v\n", err)
		return exitFailure
	}
	return exitOK
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
	opts := evo.Options{Workers: o.workers, Log: slog.New(slog.DiscardHandler)}
	if o.collect {
		if sum, err := evo.ReadSummary(cfg.OutDir); err != nil || !sum.Finished {
			return benchRun{}, errNotRun
		}
	}
	var tr *evo.Trainer
	if _, err := os.Stat(filepath.Join(cfg.OutDir, "checkpoints")); err == nil {
		// A run of the same config is reused (finished) or resumed; a
		// run of another config there is an error, never overwritten.
		old, err := evo.LoadConfig(filepath.Join(cfg.OutDir, "config.toml"))
		if err != nil {
			return benchRun{}, err
		}
		want, err1 := cfg.Digest()
		got, err2 := old.Digest()
		if err := errors.Join(err1, err2); err != nil {
			return benchRun{}, err
		}
		if want != got {
			return benchRun{}, fmt.Errorf("%s holds a run of another config: remove it or choose another -out: %w", cfg.OutDir, evo.ErrBadInput)
		}
		if tr, err = evo.Resume(cfg.OutDir, opts); err != nil {
			return benchRun{}, err
		}
	} else {
		if err := cfg.Validate(); err != nil {
			return benchRun{}, err
		}
		if err := evo.CheckOutDir(cfg.OutDir); err != nil {
			return benchRun{}, fmt.Errorf("-out %s: %w", o.out, err)
		}
		var err error
		if tr, err = evo.New(cfg, opts); err != nil {
			return benchRun{}, err
		}
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
	var err error
	if r.Summary, err = evo.ReadSummary(cfg.OutDir); err != nil {
		return r, err
	}
	m, err := evo.ReadMetrics(filepath.Join(cfg.OutDir, "metrics.csv"))
	if err != nil {
		return r, err
	}
	r.LastBest, r.LastMean, r.FinalLR = lastGeneration(m)
	r.StepsToAnchor = -1
	if a, ok := anchors[r.Env]; ok {
		r.StepsToAnchor = stepsToReach(m, a.Return)
	}
	if r.Summary.EliteFile != "" {
		// The run's own elite file, wherever the run directory is now:
		// summary.json names it by the path it had when it was written.
		r.Summary.EliteFile = filepath.Join(cfg.OutDir, "elite.safetensors")
		a, err := agent.Load(r.Summary.EliteFile)
		if err != nil {
			return r, err
		}
		r.EliteSteps = a.Steps
		if o.evalEpisodes > 0 {
			env, err := envs.Make(cfg.Env.ID, cfg.Env.Options)
			if err != nil {
				return r, err
			}
			r.EvalReturn, err = a.Evaluate(env, o.evalEpisodes, cfg.Env.EvalMaxSteps, benchEvalSeed)
			if c, ok := env.(io.Closer); ok {
				c.Close()
			}
			if err != nil {
				return r, fmt.Errorf("re-evaluate %s: %w", r.Summary.EliteFile, err)
			}
			r.EvalEpisodes = o.evalEpisodes
		}
	}
	if !o.quiet {
		fmt.Fprintf(stderr, "bench: %s %s seed %d: elite %.2f, re-evaluated %.2f, last generation best %.2f mean %.2f; %s env steps in %s (%s/s)\n",
			name, v.Name, seed, r.Summary.EliteFitness, r.EvalReturn, r.LastBest, r.LastMean, commas(r.Summary.TotalSteps),
			fmtDuration(time.Duration(r.Summary.WallSeconds*float64(time.Second))), commas(int(r.StepsPerSecond()+0.5)))
	}
	return r, nil
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

// benchGroup is the runs of one config in one variant, seeds in order.
type benchGroup struct {
	config, env, variant string
	runs                 []benchRun
}

func groupRuns(runs []benchRun) []benchGroup {
	var gs []benchGroup
	for _, r := range runs {
		if n := len(gs); n > 0 && gs[n-1].config == r.Config && gs[n-1].variant == r.Variant {
			gs[n-1].runs = append(gs[n-1].runs, r)
			continue
		}
		gs = append(gs, benchGroup{config: r.Config, env: r.Env, variant: r.Variant, runs: []benchRun{r}})
	}
	return gs
}

// column returns f of every run of g.
func (g benchGroup) column(f func(benchRun) float64) []float64 {
	xs := make([]float64, len(g.runs))
	for i, r := range g.runs {
		xs[i] = f(r)
	}
	return xs
}

// fmtReturn formats a return for the report.
func fmtReturn(x float64) string {
	if math.IsNaN(x) {
		return "—"
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}

// cell formats "mean ± std (x1, x2, ...)".
func cell(xs []float64) string {
	m, s := meanStd(xs)
	if math.IsNaN(m) || math.IsInf(m, 0) {
		m, s = math.NaN(), math.NaN()
	}
	each := make([]string, len(xs))
	for i, x := range xs {
		each[i] = fmtReturn(x)
	}
	if math.IsNaN(m) {
		return "— (" + strings.Join(each, ", ") + ")"
	}
	return fmt.Sprintf("%s ± %s (%s)", fmtReturn(m), fmtReturn(s), strings.Join(each, ", "))
}

// writeReport writes BENCHMARKS.md, benchmarks.csv and the lr charts and
// returns the paths written.
func (o benchOptions) writeReport(runs []benchRun) ([]string, error) {
	if err := os.MkdirAll(o.report, 0o755); err != nil {
		return nil, err
	}
	var written []string
	groups := groupRuns(runs)
	charts, err := o.writeLRCharts(groups)
	written = append(written, charts...)
	if err != nil {
		return written, err
	}
	md := filepath.Join(o.report, "BENCHMARKS.md")
	if err := atomicfile.WriteBytes(md, o.markdown(groups, charts)); err != nil {
		return written, err
	}
	written = append(written, md)
	path := filepath.Join(o.report, "benchmarks.csv")
	b, err := benchCSV(runs)
	if err == nil {
		err = atomicfile.WriteBytes(path, b)
	}
	if err != nil {
		return written, err
	}
	return append(written, path), nil
}

// benchCSVHeader is benchmarks.csv's columns, one row per run.
var benchCSVHeader = []string{"config", "env", "variant", "seed", "population_size", "generations", "stop_reason",
	"population_steps", "steps_per_agent", "elite_steps", "elite_fitness", "eval_return", "eval_episodes",
	"last_best", "last_mean", "final_lr", "steps_to_anchor", "wall_s", "steps_per_s", "anchor", "anchor_steps"}

func benchCSV(runs []benchRun) ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write(benchCSVHeader)
	for _, r := range runs {
		a, ok := anchors[r.Env]
		aRet, aSteps := "", ""
		if ok {
			aRet, aSteps = fmtFloat(a.Return), strconv.Itoa(a.Steps)
		}
		s := r.Summary
		w.Write([]string{r.Config, r.Env, r.Variant, strconv.FormatInt(r.Seed, 10), strconv.Itoa(r.Size),
			strconv.Itoa(s.Generations), s.StopReason, strconv.Itoa(s.TotalSteps), strconv.Itoa(r.StepsPerAgent()),
			strconv.Itoa(r.EliteSteps), fmtFloat(s.EliteFitness), fmtFloat(r.EvalReturn), strconv.Itoa(r.EvalEpisodes),
			fmtFloat(r.LastBest), fmtFloat(r.LastMean), fmtFloat(r.FinalLR), strconv.Itoa(r.StepsToAnchor),
			strconv.FormatFloat(s.WallSeconds, 'f', 3, 64),
			strconv.FormatFloat(r.StepsPerSecond(), 'f', 0, 64), aRet, aSteps})
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// cpuModel returns the first "model name" of /proc/cpuinfo, or GOARCH.
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				return strings.TrimSpace(v)
			}
		}
	}
	return runtime.GOARCH
}

// stopSentence says why the runs in the table stopped, from their
// summaries' stop_reason: "Every run …" when they agree, otherwise how many
// stopped for each reason ("Of the 6 runs, 4 stopped at … and 2 spent …").
func (o benchOptions) stopSentence(groups []benchGroup) string {
	count := map[string]int{}
	var reasons []string // in order of first appearance
	total := 0
	for _, g := range groups {
		for _, r := range g.runs {
			if count[r.Summary.StopReason] == 0 {
				reasons = append(reasons, r.Summary.StopReason)
			}
			count[r.Summary.StopReason]++
			total++
		}
	}
	// why is the verb phrase for reason, singular ("its") or plural ("their").
	why := func(reason string, one bool) string {
		its := map[bool]string{true: "its", false: "their"}[one]
		switch reason {
		case evo.StopTarget:
			return "stopped at " + its + " config's `target` once a generation's best reached it (after `min_generations`)"
		case evo.StopBudget:
			if o.noTarget {
				return "spent " + its + " whole step budget (`-no-target`)"
			}
			return "spent " + its + " whole step budget"
		}
		return fmt.Sprintf("stopped with stop_reason %q", reason)
	}
	switch len(reasons) {
	case 0:
		return "No run is in the table."
	case 1:
		if total == 1 {
			return "The run " + why(reasons[0], true) + "."
		}
		return "Every run " + why(reasons[0], true) + "."
	}
	parts := make([]string, len(reasons))
	for i, reason := range reasons {
		parts[i] = fmt.Sprintf("%d %s", count[reason], why(reason, count[reason] == 1))
	}
	last := len(parts) - 1
	return fmt.Sprintf("Of the %d runs, %s and %s.", total, strings.Join(parts[:last], ", "), parts[last])
}

// markdown returns BENCHMARKS.md.
func (o benchOptions) markdown(groups []benchGroup, charts []string) []byte {
	var b bytes.Buffer
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# Benchmarks\n\n")
	p("Written by `%s` on %s UTC: %s, %d CPUs, %s.\n", strings.TrimSpace(o.command),
		time.Now().UTC().Format("2006-01-02 15:04"), cpuModel(), runtime.NumCPU(), runtime.Version())
	if o.note != "" {
		p("\n%s\n", o.note)
	}
	p("\n%s Returns are undiscounted, with deterministic actions. *elite* is summary.json's "+
		"`elite_fitness`: for a config with `[population] elite_episodes`, the elite's mean return on the run's "+
		"confirmation episodes (played from one seed for the whole run); without, the best generation-best "+
		"fitness of the run (a mean over `eval_episodes` episodes, maximised over generations, so optimistic); ",
		o.stopSentence(groups))
	if o.evalEpisodes > 0 {
		p("*re-evaluated* is the elite file played on %d fresh episodes (from the same seed for every run); ", o.evalEpisodes)
	}
	p("*last gen* is the last generation's best and mean fitness. Each cell is mean ± population std "+
		"over seeds with the seeds' values in brackets. *steps/agent* is the population's env steps "+
		"divided by its size, to set beside the anchor's single-agent steps; wall time and steps/s are per run, "+
		"averaged over seeds. Variants: *evo* the config as written; *fixed* `[population] independent = true` "+
		"(no selection, no mutation: separate PPO agents with the initial hyperparameters); *lrF* evolution "+
		"started from F × the config's lr (its `[hp.lr]` range widened to include it). The anchor is tuned "+
		"single-agent PPO from rl-baselines3-zoo; *≥ anchor* counts the seeds whose %s reaches it.\n\n",
		map[bool]string{true: "re-evaluated return", false: "elite fitness"}[o.evalEpisodes > 0])
	p("| config | variant | elite | ")
	if o.evalEpisodes > 0 {
		p("re-evaluated | ")
	}
	p("last gen best | last gen mean | anchor | ≥ anchor |\n|---|---|---|")
	if o.evalEpisodes > 0 {
		p("---|")
	}
	p("---|---|---|---|\n")
	for _, g := range groups {
		p("| %s | %s | %s | ", g.config, g.variant, cell(g.column(func(r benchRun) float64 { return r.Summary.EliteFitness })))
		if o.evalEpisodes > 0 {
			p("%s | ", cell(g.column(func(r benchRun) float64 { return r.EvalReturn })))
		}
		p("%s | %s | ", cell(g.column(func(r benchRun) float64 { return r.LastBest })),
			cell(g.column(func(r benchRun) float64 { return r.LastMean })))
		if a, ok := anchors[g.env]; ok {
			reached := 0
			for _, r := range g.runs {
				if r.Score() >= a.Return {
					reached++
				}
			}
			p("%s @ %s (%s) | %d/%d |\n", fmtFloat(a.Return), siFormat(float64(a.Steps)), a.Source, reached, len(g.runs))
		} else {
			p("— | — |\n")
		}
	}
	p("\n*to anchor* is the population's env steps divided by its size when a generation's best fitness (over " +
		"`eval_episodes` episodes, so optimistic) first reached the anchor, per seed. " +
		"*final lr* is the geometric mean of the last generation's lr, per seed.\n\n")
	p("| config | variant | to anchor (per agent) | steps/agent | population steps | wall | steps/s | final lr |\n|---|---|---|---|---|---|---|---|\n")
	for _, g := range groups {
		var reach, lrs []string
		for _, r := range g.runs {
			if r.StepsToAnchor < 0 {
				reach = append(reach, "never")
			} else {
				reach = append(reach, siFormat(float64(int(float64(r.StepsToAnchor/r.Size)/1000+0.5)*1000)))
			}
			lrs = append(lrs, strconv.FormatFloat(r.FinalLR, 'g', 3, 64))
		}
		perAgent, _ := meanStd(g.column(func(r benchRun) float64 { return float64(r.StepsPerAgent()) }))
		total, _ := meanStd(g.column(func(r benchRun) float64 { return float64(r.Summary.TotalSteps) }))
		wall, _ := meanStd(g.column(func(r benchRun) float64 { return r.Summary.WallSeconds }))
		sps, _ := meanStd(g.column(benchRun.StepsPerSecond))
		p("| %s | %s | %s | %s | %s | %s | %s | %s |\n", g.config, g.variant, strings.Join(reach, ", "),
			commas(int(perAgent+0.5)), commas(int(total+0.5)), fmtDuration(time.Duration(wall*float64(time.Second))),
			commas(int(sps+0.5)), strings.Join(lrs, ", "))
	}
	var missing []string
	for _, n := range append(slices.Clip(benchClassic), benchLong...) {
		if !o.defaults {
			break // the configs were chosen
		}
		if !slices.ContainsFunc(o.configs, func(c string) bool { return strings.TrimSuffix(filepath.Base(c), ".toml") == n }) {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		p("\nNot run in this report: %s.\n", strings.Join(missing, ", "))
	}
	if len(o.notRun) > 0 {
		p("\nMissing or unfinished in the runs' directory (`-collect` trains nothing): %s.\n", strings.Join(o.notRun, ", "))
	}
	for _, c := range charts {
		rel, err := filepath.Rel(o.report, c)
		if err != nil {
			rel = c
		}
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(c), "lr-"), ".png")
		p("\n![%s: the population's lr per generation](%s)\n", name, filepath.ToSlash(rel))
	}
	return b.Bytes()
}

// writeLRCharts writes lr-<config>.png for every config run from a changed
// lr: one panel per evolving variant, with every agent's lr per generation
// (grey dots), each seed's population geometric mean (a line) and the
// config's own lr (dashed). It returns the paths written.
func (o benchOptions) writeLRCharts(groups []benchGroup) ([]string, error) {
	var written []string
	for i := 0; i < len(groups); {
		j := i
		changed := false
		for ; j < len(groups) && groups[j].config == groups[i].config; j++ {
			changed = changed || groups[j].variant != "evo" && groups[j].variant != "fixed"
		}
		var panels []*plot.Plot
		for _, g := range groups[i:j] {
			if !changed || g.variant == "fixed" {
				continue
			}
			p, err := lrPanel(g)
			if err != nil {
				return written, err
			}
			panels = append(panels, p)
		}
		if len(panels) > 0 {
			path := filepath.Join(o.report, "lr-"+groups[i].config+".png")
			if err := savePNG(path, 8*vg.Inch, vg.Length(len(panels))*2.6*vg.Inch, panels); err != nil {
				return written, err
			}
			written = append(written, path)
		}
		i = j
	}
	return written, nil
}

// lrPanel charts the lr of every agent of g's runs per generation.
func lrPanel(g benchGroup) (*plot.Plot, error) {
	p := newPlot()
	p.Title.Text = fmt.Sprintf("%s, %s: lr of the population per generation", g.config, g.variant)
	p.X.Label.Text = "generation"
	p.X.Tick.Marker = integerTicks{}
	p.Y.Label.Text = hpLabels["lr"]
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	var dots plotter.XYs
	var lines []plot.Plotter
	lo, hi := g.runs[0].BaseLR, g.runs[0].BaseLR
	for k, r := range g.runs {
		m, err := evo.ReadMetrics(filepath.Join(r.Dir, "metrics.csv"))
		if err != nil {
			return nil, err
		}
		col := slices.Index(m.HPNames, "lr")
		if col < 0 {
			return nil, fmt.Errorf("%s: no lr column", filepath.Join(r.Dir, "metrics.csv"))
		}
		logSum := map[int]float64{}
		count := map[int]int{}
		var gens []int
		for _, row := range m.Rows {
			lr := row.HP[col]
			if !(lr > 0) {
				continue
			}
			if count[row.Generation] == 0 {
				gens = append(gens, row.Generation)
			}
			logSum[row.Generation] += math.Log(lr)
			count[row.Generation]++
			dots = append(dots, plotter.XY{X: float64(row.Generation), Y: lr})
			lo, hi = min(lo, lr), max(hi, lr)
		}
		var mean plotter.XYs
		for _, gen := range gens {
			mean = append(mean, plotter.XY{X: float64(gen), Y: math.Exp(logSum[gen] / float64(count[gen]))})
		}
		if len(mean) > 0 {
			line, pts := lineDots(mean, plotutil.Color(k), vg.Points(1.5), nil)
			lines = append(lines, line, pts)
			p.Legend.Add(fmt.Sprintf("seed %d (geometric mean)", r.Seed), line, pts)
		}
	}
	if len(dots) > 0 {
		s, _ := plotter.NewScatter(dots)
		s.GlyphStyle = draw.GlyphStyle{Color: color.Gray{Y: 170}, Radius: vg.Points(1.8), Shape: draw.CircleGlyph{}}
		p.Add(s)
		p.Legend.Add("each agent", s)
	}
	p.Add(lines...) // over the dots
	base := g.runs[0].BaseLR
	ref := plotter.NewFunction(func(float64) float64 { return base })
	ref.Color, ref.Dashes, ref.Width = color.Gray{Y: 60}, []vg.Length{vg.Points(2), vg.Points(2)}, vg.Points(1)
	p.Add(ref)
	p.Legend.Add("the config's lr "+strconv.FormatFloat(base, 'g', 3, 64), ref)
	p.Y.Min, p.Y.Max = lo/1.3, hi*1.3
	return p, nil
}

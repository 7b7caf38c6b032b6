package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/evolverl/evolve/evo"
	"github.com/evolverl/evolve/evo/natsrun"
)

// Exit statuses.
const (
	exitOK       = 0
	exitFailure  = 1
	exitBadInput = 2
)

// Run is the whole command without its process-wide setup (signals, GOGC;
// see Main): it parses args (without the program name), trains, resumes,
// inspects, plots or plays, and returns the exit status. Output for people
// goes to stderr, the final summary to stdout. Cancelling ctx stops a
// training run as a signal does: the last complete generation stays
// checkpointed and Run returns 130 (or 143 when Main's handler cancelled
// it for SIGTERM). Environments registered with envs.Register before the
// call can be named by the config.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "inspect" {
		return inspectCmd(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "plot" {
		return plotCmd(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "play" {
		return playCmd(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "worker" {
		return workerCmd(ctx, args[1:], stderr)
	}
	if len(args) > 0 && args[0] == "bench" {
		return benchCmd(ctx, args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("evolve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: evolve -config FILE [-out DIR] [-seed N] [STOP] [-workers N | -nats URL] [-quiet]\n"+
			"       evolve -resume DIR [STOP] [-workers N | -nats URL] [-quiet]\n"+
			"       (STOP: -max-steps N, -target X or -no-target, replacing the run's stopping rules)\n"+
			"       evolve worker -nats URL [-workers N] [-quiet]\n"+
			"       evolve inspect [-json] FILE|DIR\n"+
			"       evolve plot [-o DIR] [-hp NAME] RUN_DIR\n"+
			"       evolve play -agent FILE|DIR [-env ID] [-episodes N] [-gif OUT.gif] [-record OUT.npz] ...\n"+
			"       evolve bench [-seeds N] [-out DIR] [-long] [-no-target] [-variants LIST] [CONFIG ...]\n\n")
		fs.PrintDefaults()
	}
	configPath := fs.String("config", "", "train with the TOML config `FILE` (configs/pop.toml documents every key)")
	resume := fs.String("resume", "", "continue the run in `DIR` from its latest checkpoint")
	out := fs.String("out", "", "write the run to `DIR` (overrides out_dir)")
	seed := fs.Int64("seed", 0, "replace the config's seed with `N`")
	workers := fs.Int("workers", 0, "train at most `N` agents at once (0: the config's population.workers)")
	quiet := fs.Bool("quiet", false, "print only errors and the final summary")
	maxSteps := fs.Int("max-steps", 0, "stop after `N` env steps of the population (replaces population.max_steps; with -resume, trains a finished run further)")
	target := fs.Float64("target", 0, "stop once the elite's score reaches `X` (replaces population.target; with -resume, trains a finished run further)")
	noTarget := fs.Bool("no-target", false, "never stop on a score: spend the whole budget (population.target = inf)")
	var nf natsFlags
	nf.register(fs, true)
	if err := fs.Parse(args); err != nil {
		return parseStatus(err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	// usage reports flags that do not go together in one line, and where
	// the flags are described; without any argument it shows them all.
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "evolve: "+format+"\n", a...)
		if len(args) == 0 {
			fs.Usage()
		} else {
			fmt.Fprintf(stderr, "evolve: run evolve -h for the flags\n")
		}
		return exitBadInput
	}
	switch {
	case fs.NArg() > 0:
		return usage("unexpected argument %q", fs.Arg(0))
	case set["config"] == set["resume"]:
		return usage("give exactly one of -config FILE and -resume DIR")
	case set["resume"] && (set["seed"] || set["out"]):
		return usage("-seed and -out do not apply to -resume: a resumed run keeps its seed and directory")
	case *workers < 0:
		return usage("-workers %d: want >= 0", *workers)
	case set["target"] && set["no-target"]:
		return usage("give at most one of -target X and -no-target")
	case set["max-steps"] && *maxSteps < 1:
		return usage("-max-steps %d: want >= 1", *maxSteps)
	case set["target"] && math.IsNaN(*target):
		return usage("-target NaN: want a number")
	case set["config"] && *configPath == "" || set["resume"] && *resume == "" || set["out"] && *out == "":
		return usage("-config, -resume and -out need a non-empty value")
	case nf.check() != "":
		return usage("%s", nf.check())
	case nf.url != "" && set["workers"]:
		return usage("-workers does not apply with -nats: each worker's -workers says how many tasks it trains at once")
	}

	terminal := isTerminal(stderr)
	level := slog.LevelWarn
	if *quiet {
		level = slog.LevelError
	}
	ui := &display{w: stderr, terminal: terminal && !*quiet, quiet: *quiet}
	opts := evo.Options{Workers: *workers, Log: slog.New(slog.NewTextHandler(ui, &slog.HandlerOptions{Level: level})),
		OnGeneration: ui.generation}
	if nf.url != "" {
		pool, code := natsPool(&nf, opts.Log, stderr)
		if pool == nil {
			return code
		}
		defer pool.Close()
		opts.Pool = pool
	}

	// stopRules applies -max-steps, -target and -no-target to the rules of cfg.
	stopRules := func(cfg evo.Config) (int, float64) {
		p := cfg.Population
		if set["max-steps"] {
			p.MaxSteps = *maxSteps
		}
		switch {
		case set["target"]:
			p.Target = *target
		case *noTarget:
			p.Target = math.Inf(1)
		}
		return p.MaxSteps, p.Target
	}
	newRules := set["max-steps"] || set["target"] || set["no-target"]

	var tr *evo.Trainer
	var err error
	if set["resume"] {
		tr, err = evo.Resume(*resume, opts)
		if err == nil && newRules {
			if err = tr.SetStopRules(stopRules(tr.Config())); err != nil {
				tr.Close()
				err = fmt.Errorf("resume %s: %w", *resume, err)
			}
		}
	} else {
		var cfg evo.Config
		cfg, err = evo.LoadConfig(*configPath)
		if err == nil {
			where := fmt.Sprintf("config %s: out_dir = %q", *configPath, cfg.OutDir)
			if set["out"] {
				cfg.OutDir = *out
				where = "-out " + *out
			}
			if set["seed"] {
				cfg.Seed = *seed
			}
			if set["workers"] {
				cfg.Population.Workers = *workers
			}
			cfg.Population.MaxSteps, cfg.Population.Target = stopRules(cfg)
			err = cfg.Validate()
			// Whether the run can be written is known before anything is
			// built, trained or written.
			if err == nil {
				if err = evo.CheckOutDir(cfg.OutDir); err != nil {
					err = fmt.Errorf("%s: %w", where, err)
				}
			}
			if err == nil {
				tr, err = evo.New(cfg, opts)
			}
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "evolve: %v\n", err)
		if errors.Is(err, evo.ErrBadInput) {
			return exitBadInput
		}
		return exitFailure
	}
	if tr.Finished() {
		sum, err := tr.Run(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "evolve: %v\n", err)
			return exitFailure
		}
		fmt.Fprintf(stdout, "run %s has already finished (%s after %d generations): nothing to do; -max-steps N, -target X or -no-target train it further\n",
			tr.Dir(), sum.StopReason, sum.Generations)
		printSummary(stdout, sum)
		return exitOK
	}

	cfg := tr.Config()
	if !*quiet {
		verb := "training"
		if set["resume"] {
			verb = "resuming"
		}
		where := fmt.Sprintf("%d workers", tr.Workers())
		if tr.Workers() == 1 {
			where = "1 worker"
		}
		if nf.url != "" {
			where = "workers of " + redact(nf.url)
		}
		fmt.Fprintf(stderr, "evolve: %s %d agents on %s (%s), up to %d env steps, in %s\n",
			verb, cfg.Population.Size, cfg.Env.ID, where, cfg.Population.MaxSteps, tr.Dir())
	}
	ui.start(tr)
	sum, err := tr.Run(ctx)
	ui.stop()
	if err != nil {
		if ctx.Err() != nil {
			sig, ok := stopSignal(ctx)
			code := 130
			name := "SIGINT"
			if ok {
				code, name = exitCode(sig), signalName(sig)
			}
			fmt.Fprintf(stderr, "evolve: stopped by %s; the checkpoint of generation %d is in %s\n", name, sum.Generations,
				filepath.Join(tr.Dir(), "checkpoints"))
			fmt.Fprintf(stderr, "evolve: continue with: evolve -resume %s\n", shellQuote(tr.Dir()))
			printSummary(stdout, sum)
			return code
		}
		fmt.Fprintf(stderr, "evolve: %v\n", err)
		if errors.Is(err, evo.ErrBadInput) || errors.Is(err, natsrun.ErrMismatch) {
			return exitBadInput
		}
		return exitFailure
	}
	printSummary(stdout, sum)
	return exitOK
}

// printSummary prints the end-of-run summary.
func printSummary(w io.Writer, s evo.Summary) {
	why := map[string]string{evo.StopTarget: "target reached", evo.StopBudget: "step budget spent",
		evo.StopInterrupted: "interrupted", evo.StopError: "failed"}[s.StopReason]
	fmt.Fprintf(w, "generations   %d (%s)\n", s.Generations, why)
	fmt.Fprintf(w, "total steps   %s in %s (this session: %s steps/s)\n", commas(s.TotalSteps),
		fmtDuration(time.Duration(s.WallSeconds*float64(time.Second))), commas(int(s.StepsPerSecond+0.5)))
	if s.EliteFile != "" {
		fmt.Fprintf(w, "elite         fitness %.6g (agent %d), saved to %s\n", s.EliteFitness, s.EliteIndex, s.EliteFile)
	} else {
		fmt.Fprintf(w, "elite         none yet (no agent has been evaluated with a finite fitness)\n")
	}
	fmt.Fprintf(w, "metrics       %s\n", filepath.Join(s.Dir, "metrics.csv"))
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// shellQuote quotes a path for the resume hint when it needs quoting.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// commas formats n with thousands separators.
func commas(n int) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// fmtDuration formats d as 1h02m03s, 2m03s or 4.5s.
func fmtDuration(d time.Duration) string {
	switch {
	case d >= time.Hour:
		return fmt.Sprintf("%dh%02dm%02ds", int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60)
	case d >= time.Minute:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}

package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/evo"
	"github.com/evolverl/evolve/evo/natsrun"
)

// trainSynopsis is the usage of evolve itself, every subcommand's first
// line included.
const trainSynopsis = "usage: evolve -config FILE|NAME [-set KEY=VALUE ...] [-out DIR] [-seed N] [STOP] [-workers N | -nats URL] [-quiet]\n" +
	"       evolve -env ID [-set KEY=VALUE ...] [-out DIR] [-seed N] [STOP] [-workers N | -nats URL] [-quiet]\n" +
	"       evolve -resume DIR [STOP] [-workers N | -nats URL] [-quiet]\n" +
	"       (STOP: -max-steps N, -target X or -no-target, replacing the run's stopping rules)\n" +
	"       evolve configs [NAME]\n" +
	"       evolve worker -nats URL [-workers N] [-name NAME] [-gym-python PATH] [-quiet]\n" +
	"       evolve inspect [-json] FILE|DIR\n" +
	"       evolve plot [-o DIR] [-hp NAME] RUN_DIR\n" +
	"       evolve plot [-o DIR] RUN_DIR|BENCH_DIR ...   (compare runs)\n" +
	"       evolve play -agent FILE|DIR [-env ID] [-episodes N] [-gif OUT.gif] [-record OUT.npz] ...\n" +
	"       evolve sample -o OUT.npz [-generations LIST | -elite] [-method M] [-episodes N] ... RUN_DIR\n" +
	"       evolve bench [-seeds N] [-out DIR] [-long] [-no-target] [-variants LIST] [CONFIG ...]\n\n"

// trainFlags are the flags of a training run (evolve -config, -resume).
type trainFlags struct {
	config, resume, out string
	env                 string   // -env: train the shipped config of this env
	sets                setFlags // -set KEY=VALUE overrides
	seed                int64
	workers             int
	quiet               bool
	maxSteps            stepsValue
	target              float64
	noTarget            bool
	nats                natsFlags
	set                 map[string]bool // the flags given
	stderr              io.Writer       // for notes before training
}

func (f *trainFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.config, "config", "", "train with the TOML config `FILE` (configs/pop.toml documents every key), or the shipped config of that name ("+programName+" configs lists them)")
	fs.StringVar(&f.env, "env", "", "train env `ID` with its shipped config ("+programName+" configs), or evolve's defaults when it has none; with -set, -out, -seed, the stop flags and -workers or -nats as -config")
	fs.Var(&f.sets, "set", "override a config key, `KEY=VALUE` (ppo.lr=1e-3, population.size=8; TOML values, repeatable), checked as in the file")
	fs.StringVar(&f.resume, "resume", "", "continue the run in the run directory `DIR` from its latest checkpoint")
	fs.StringVar(&f.out, "out", "", "write the run to `DIR` (overrides out_dir)")
	fs.Int64Var(&f.seed, "seed", 0, "replace the config's seed with `N`")
	fs.IntVar(&f.workers, "workers", 0, "train at most `N` agents at once (0: the config's population.workers)")
	fs.BoolVar(&f.quiet, "quiet", false, "print only errors and the final summary")
	fs.Var(&f.maxSteps, "max-steps", "stop after `N` env steps of the population, e.g. 1e6 or 1_000_000 (replaces population.max_steps; with -resume, trains a finished run further)")
	fs.Float64Var(&f.target, "target", 0, "stop once the elite's score reaches `X` (replaces population.target; with -resume, trains a finished run further)")
	fs.BoolVar(&f.noTarget, "no-target", false, "never stop on a score: spend the whole budget (population.target = inf)")
	f.nats.register(fs, true)
}

// check returns what is wrong with the flags together, or "".
func (f *trainFlags) check(fs *flag.FlagSet) string {
	set := f.set
	switch {
	case fs.NArg() > 0:
		if strings.HasSuffix(fs.Arg(0), ".toml") {
			return fmt.Sprintf("unexpected argument %q: give a config with -config %s", fs.Arg(0), fs.Arg(0))
		}
		if !strings.ContainsAny(fs.Arg(0), `./\`) { // a word, not a path: a mistyped subcommand
			return fmt.Sprintf("unexpected argument %q: not a subcommand (%s)", fs.Arg(0), strings.Join(subcommandNames(), ", "))
		}
		return fmt.Sprintf("unexpected argument %q", fs.Arg(0))
	case count(set["config"], set["resume"], set["env"]) != 1:
		return "give exactly one of -config FILE, -env ID and -resume DIR"
	case set["resume"] && (set["seed"] || set["out"] || set["set"]):
		return "-seed, -out and -set do not apply to -resume: a resumed run keeps its config, seed and directory"
	case f.workers < 0:
		return fmt.Sprintf("-workers %d: want >= 0", f.workers)
	case set["target"] && set["no-target"]:
		return "give at most one of -target X and -no-target"
	case set["max-steps"] && f.maxSteps < 1:
		return fmt.Sprintf("-max-steps %d: want >= 1", f.maxSteps)
	case set["target"] && math.IsNaN(f.target):
		return "-target NaN: want a number"
	case set["config"] && f.config == "" || set["resume"] && f.resume == "" || set["out"] && f.out == "" || set["env"] && f.env == "" ||
		set["nats"] && f.nats.url == "":
		return "-config, -env, -resume, -out and -nats need a non-empty value"
	case set["resume"] && isFile(f.resume) && isFile(filepath.Join(filepath.Dir(f.resume), "config.toml")) && filepath.Base(f.resume) != "config.toml":
		return fmt.Sprintf("-resume %s is a file of the run in %s: -resume takes the run's directory (-resume %s)", f.resume, filepath.Dir(f.resume), shellQuote(filepath.Dir(f.resume)))
	case set["resume"] && isFile(f.resume):
		return fmt.Sprintf("-resume %s is a file: -resume takes a run's directory (its -out or out_dir); a config file starts a run with -config %s", f.resume, shellQuote(f.resume))
	case f.nats.check() != "":
		return f.nats.check()
	case f.nats.url != "" && set["workers"]:
		return "-workers does not apply with -nats: each worker's -workers says how many tasks it trains at once"
	case f.nats.url == "" && (set["nats-ack-wait"] || set["nats-max-deliver"]):
		return "-nats-ack-wait and -nats-max-deliver need -nats URL (without it the run trains here)"
	case set["nats-ack-wait"] && f.nats.ackWait <= 0:
		return fmt.Sprintf("-nats-ack-wait %v: want > 0 (leave it out for 30s)", f.nats.ackWait)
	case set["nats-max-deliver"] && f.nats.maxDeliver <= 0:
		return fmt.Sprintf("-nats-max-deliver %d: want > 0 (leave it out for 5)", f.nats.maxDeliver)
	}
	return ""
}

// stopRules applies -max-steps, -target and -no-target to the rules of cfg.
func (f *trainFlags) stopRules(cfg evo.Config) (maxSteps int, target float64) {
	p := cfg.Population
	if f.set["max-steps"] {
		p.MaxSteps = int(f.maxSteps)
	}
	switch {
	case f.set["target"]:
		p.Target = f.target
	case f.noTarget:
		p.Target = math.Inf(1)
	}
	return p.MaxSteps, p.Target
}

// stopFlags returns the stopping-rule flags given (" -max-steps N" and
// the others), for the command that continues a stopped run: config.toml
// holds new rules only from the first checkpoint after them, and giving
// them again when it does changes nothing.
func (f *trainFlags) stopFlags() string {
	s := ""
	if f.set["max-steps"] {
		s += fmt.Sprintf(" -max-steps %d", int(f.maxSteps))
	}
	switch {
	case f.set["target"]:
		s += " -target " + strconv.FormatFloat(f.target, 'g', -1, 64)
	case f.noTarget:
		s += " -no-target"
	}
	return s
}

// newRules reports whether the flags replace the run's stopping rules.
func (f *trainFlags) newRules() bool {
	return f.set["max-steps"] || f.set["target"] || f.set["no-target"]
}

// trainCmd is evolve without a subcommand: train a run from a config, or
// resume one.
func trainCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCommand("evolve", trainSynopsis, stderr)
	var f trainFlags
	f.register(c.fs)
	if status, ok := c.parse(args); !ok {
		return status
	}
	f.set, f.stderr = c.set(), stderr
	if len(args) == 0 {
		fmt.Fprintf(stderr, "evolve: give exactly one of -config FILE, -env ID and -resume DIR\n")
		c.usage()
		return exitBadInput
	}
	if msg := f.check(c.fs); msg != "" {
		return c.misuse("%s", msg)
	}
	ui := &display{w: stderr, terminal: isTerminal(stderr) && !f.quiet, quiet: f.quiet}
	level := slog.LevelWarn
	if f.quiet {
		level = slog.LevelError
	}
	opts := evo.Options{Workers: f.workers, Log: slog.New(newLineHandler(ui, "evolve", level)),
		OnGeneration: ui.generation}
	if f.nats.url != "" {
		// Said before the server is reached (and warned about).
		if _, err := os.Stat(f.resume); f.set["resume"] && errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(stderr, "evolve: resume %s: no such run directory\n", f.resume)
			return exitBadInput
		}
		pool, status := natsPool(&f.nats, opts.Log, stderr)
		if pool == nil {
			return status
		}
		defer pool.Close()
		opts.Pool = pool
	}
	tr, err := f.trainer(ctx, opts)
	if err != nil && stopped(ctx, err) { // a Ctrl-C while the envs started
		fmt.Fprintf(stderr, "evolve: stopped while the run was set up: %v\n", context.Cause(ctx))
		return stopStatus(ctx)
	}
	if err != nil {
		// One problem a line (a config's all of them), those after the
		// first indented under the file they belong to.
		fmt.Fprintf(stderr, "evolve: %s\n", strings.ReplaceAll(err.Error(), "\n", "\n  "))
		if errors.Is(err, evo.ErrBadInput) {
			return exitBadInput
		}
		return exitFailure
	}
	return f.train(ctx, tr, ui, stdout, stderr)
}

// trainer resumes the run of -resume, or prepares the new run of -config
// with the flags applied and checked, before anything is built or written.
func (f *trainFlags) trainer(ctx context.Context, opts evo.Options) (*evo.Trainer, error) {
	if f.set["resume"] {
		return f.resumed(ctx, opts)
	}
	cfg, src, err := f.loadConfig(ctx)
	if err != nil {
		return nil, err
	}
	if src.note != "" && !f.quiet {
		fmt.Fprintf(f.stderr, "evolve: %s\n", src.note)
	}
	where := fmt.Sprintf("%s: out_dir = %q", src.name, cfg.OutDir)
	switch {
	case f.set["out"] && evo.HoldsRun(f.out): // exactly there: refused, not renamed
		return nil, fmt.Errorf("-out %s already holds a run: continue it with -resume %s, or choose another -out%w", f.out, shellQuote(f.out), errBadInput)
	case f.set["out"]:
		if err := evo.CheckNewOutDir(f.out); err != nil {
			if !strings.HasPrefix(err.Error(), f.out+" ") { // about a directory above it
				return nil, fmt.Errorf("-out %s: %w", f.out, err)
			}
			return nil, fmt.Errorf("-out %w", err)
		}
		cfg.OutDir = f.out
		where = "-out " + f.out
	case evo.CheckNewOutDir(cfg.OutDir) != nil && evo.CheckOutDir(cfg.OutDir) == nil:
		// The config's out_dir run again, or taken by other files: the
		// next free out_dir_N.
		free := evo.FreeOutDir(cfg.OutDir)
		if free == cfg.OutDir { // no out_dir_N helps (inside a run, ".")
			return nil, fmt.Errorf("%s: out_dir %w", src.name, evo.CheckNewOutDir(cfg.OutDir))
		}
		what, hint := "holds a run", fmt.Sprintf(" (continue it with -resume %s)", shellQuote(cfg.OutDir))
		if !evo.HoldsRun(cfg.OutDir) {
			what, hint = "is taken", fmt.Sprintf(" (%v)", evo.CheckNewOutDir(cfg.OutDir))
		}
		where = fmt.Sprintf("%s: out_dir = %q, which %s, so %s", src.name, cfg.OutDir, what, free)
		if !f.quiet {
			fmt.Fprintf(f.stderr, "evolve: %s %s%s; this one goes to %s\n", cfg.OutDir, what, hint, free)
		}
		cfg.OutDir = free
	}
	if f.set["seed"] {
		cfg.Seed = f.seed
	}
	if f.set["workers"] {
		cfg.Population.Workers = f.workers
	}
	cfg.Population.MaxSteps, cfg.Population.Target = f.stopRules(cfg)
	// No Validate here: ParseConfig checked the config, and New checks it
	// again with the flags applied (each check makes the env, a gym: env's
	// Python child among them, which is slow to start).
	// Whether the run can be written is known before anything is built,
	// trained or written.
	if err := evo.CheckOutDir(cfg.OutDir); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if gen := cfg.Population.Size * cfg.Population.EvoSteps; cfg.Population.MaxSteps < gen && !f.quiet {
		fmt.Fprintf(f.stderr, "evolve: note: max_steps %s is less than one generation (%s × evo_steps %s = %s steps): the run trains one generation\n",
			commas(cfg.Population.MaxSteps), counted(cfg.Population.Size, "agent"), commas(cfg.Population.EvoSteps), commas(gen))
	}
	return evo.NewContext(ctx, cfg, opts)
}

// resumed resumes the run of -resume with the flags' stopping rules.
func (f *trainFlags) resumed(ctx context.Context, opts evo.Options) (*evo.Trainer, error) {
	tr, err := evo.ResumeContext(ctx, f.resume, opts)
	if err != nil || !f.newRules() {
		return tr, err
	}
	if err := tr.SetStopRules(f.stopRules(tr.Config())); err != nil {
		tr.Close()
		return nil, fmt.Errorf("resume %s: %w", f.resume, err)
	}
	return tr, nil
}

// train runs tr to its end and reports: the summary on stdout, and on a
// signal where the checkpoint is and how to continue.
func (f *trainFlags) train(ctx context.Context, tr *evo.Trainer, ui *display, stdout, stderr io.Writer) int {
	if tr.Finished() {
		sum, err := tr.Run(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "evolve: %v\n", err)
			return exitFailure
		}
		// A target alone does not lift a spent budget, nor a budget alone a
		// target reached.
		further := fmt.Sprintf("-max-steps N (more than its %s steps) trains it further", commas(sum.TotalSteps))
		if sum.StopReason == evo.StopTarget {
			further = "-target X (above the elite's score) or -no-target trains it further"
		}
		fmt.Fprintf(stdout, "run %s has already finished (%s after %s): nothing to do; %s\n",
			tr.Dir(), stopWhy(sum.StopReason), counted(sum.Generations, "generation"), further)
		printSummary(stdout, sum)
		return exitOK
	}
	if !f.quiet {
		f.announce(tr, stderr)
	}
	ui.start(tr)
	sum, err := tr.Run(ctx)
	ui.stop()
	switch {
	case err != nil && stopped(ctx, err):
		sig, ok := stopSignal(ctx)
		status, name := 130, "SIGINT"
		if ok {
			status, name = exitCode(sig), signalName(sig)
		}
		fmt.Fprintf(stderr, "evolve: stopped by %s; the checkpoint of generation %d is in %s\n", name, sum.Generations,
			filepath.Join(tr.Dir(), "checkpoints"))
		fmt.Fprintf(stderr, "evolve: continue with: %s\n", f.resumeCommand(tr.Dir()))
		printSummary(stdout, sum)
		return status
	case err != nil:
		fmt.Fprintf(stderr, "evolve: %v\n", err)
		if errors.Is(err, natsrun.ErrMismatch) || errors.Is(err, natsrun.ErrRefused) || errors.Is(err, natsrun.ErrUndelivered) {
			// The run is whole up to its last checkpoint; what failed it
			// is the workers'.
			fmt.Fprintf(stderr, "evolve: once the workers are fixed, continue with: %s\n", f.resumeCommand(tr.Dir()))
		}
		if errors.Is(err, evo.ErrBadInput) || errors.Is(err, natsrun.ErrMismatch) || errors.Is(err, envs.ErrBadOutput) {
			return exitBadInput // the env's output is bad input too
		}
		return exitFailure
	}
	printSummary(stdout, sum)
	return exitOK
}

// resumeCommand is the command that continues the run in dir: its stop flags given
// again, and on the same NATS server (or it would train here) with the
// same credentials and delivery settings. A password in the URL is not
// printed: the command says to put it back.
func (f *trainFlags) resumeCommand(dir string) string {
	again := f.stopFlags()
	if f.nats.url != "" {
		again += " -nats " + shellQuote(redact(f.nats.url))
		for _, fl := range []struct{ name, value string }{{"nats-creds", f.nats.creds}, {"nats-nkey", f.nats.nkey},
			{"nats-tls-ca", f.nats.tlsCA}, {"nats-tls-cert", f.nats.tlsCert}, {"nats-tls-key", f.nats.tlsKey}} {
			if fl.value != "" {
				again += " -" + fl.name + " " + shellQuote(fl.value)
			}
		}
		if f.set["nats-ack-wait"] {
			again += " -nats-ack-wait " + f.nats.ackWait.String()
		}
		if f.set["nats-max-deliver"] {
			again += fmt.Sprintf(" -nats-max-deliver %d", f.nats.maxDeliver)
		}
		if redact(f.nats.url) != f.nats.url {
			again += " (with the password in place of xxxxx)"
		}
	}
	return programName + " -resume " + shellQuote(dir) + again
}

// announce says what is about to train, where, and on what.
func (f *trainFlags) announce(tr *evo.Trainer, stderr io.Writer) {
	cfg := tr.Config()
	verb := "training"
	if f.set["resume"] {
		verb = "resuming"
	}
	where := fmt.Sprintf("%d workers", tr.Workers())
	if tr.Workers() == 1 {
		where = "1 worker"
	}
	if f.nats.url != "" {
		where = "workers of " + redact(f.nats.url)
	}
	fmt.Fprintf(stderr, "evolve: %s %s on %s (%s), up to %s, in %s\n",
		verb, counted(cfg.Population.Size, "agent"), cfg.Env.ID, where, counted(cfg.Population.MaxSteps, "env step"), tr.Dir())
}

// stopWhy says a summary's stop reason in words.
func stopWhy(reason string) string {
	return map[string]string{evo.StopTarget: "target reached", evo.StopBudget: "step budget spent",
		evo.StopInterrupted: "interrupted", evo.StopError: "failed"}[reason]
}

// printSummary prints the end-of-run summary.
func printSummary(w io.Writer, s evo.Summary) {
	fmt.Fprintf(w, "generations   %d (%s)\n", s.Generations, stopWhy(s.StopReason))
	session := fmt.Sprintf(" (this session: %s steps/s)", commas(int(s.StepsPerSecond+0.5)))
	if s.StepsPerSecond == 0 { // a finished run resumed: nothing trained now
		session = ""
	}
	fmt.Fprintf(w, "total steps   %s in %s%s\n", commas(s.TotalSteps),
		fmtDuration(time.Duration(s.WallSeconds*float64(time.Second))), session)
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

// isFile reports whether path names something other than a directory.
func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir()
}

// count returns how many of bs are true.
func count(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

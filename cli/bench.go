package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/evolverl/evolve/configs"
	"github.com/evolverl/evolve/evo"
)

// The configs `evolve bench` runs when it is given none: the classic
// tasks, then with -long the ones that take hours on two cores (and every
// configs/minatar*.toml).
var (
	benchClassic = []string{"cartpole", "acrobot", "mountaincar-continuous", "mountaincar", "pendulum",
		"cartpole-novel-lstm", "pendulum-novel-lstm"}
	benchLong = []string{"lunarlander", "lunarlander-continuous"}
)

// benchOptions are the bench command's settings.
type benchOptions struct {
	seeds, workers, evalEpisodes int
	out, report, configDir       string
	noTarget, quiet, collect     bool
	defaults                     bool // no configs given: the default list
	// notRun names the runs -collect found missing or unfinished.
	notRun []string
	// others names the <config>/<variant> directories in -out that this
	// report leaves out (runs of an earlier bench with other configs or
	// variants).
	others        []string
	variants      []benchVariant
	configs       []string // paths
	command, note string
}

// benchCmd is `evolve bench [flags] [CONFIG...]`: it trains every config
// with every variant and seed in turn (runs already in -out are reused or
// resumed), then writes BENCHMARKS.md, benchmarks.csv and, for configs run
// from a changed lr, lr-<config>.png.
func benchCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCommand("evolve bench", fmt.Sprintf("usage: evolve bench [-seeds N] [-out DIR] [-report DIR] [-long] [-no-target] [-variants LIST] [-workers N] [CONFIG.toml|NAME ...]\n\n"+
		"Trains each config with each variant and seed in sequence and writes BENCHMARKS.md and benchmarks.csv.\n"+
		"Without CONFIGs: %s (and with -long %s, minatar*.toml) from -configs.\n\n",
		strings.Join(benchClassic, ", "), strings.Join(benchLong, ", ")), stderr)
	var o benchOptions
	long, variants := o.register(c.fs)
	pos, status, ok := c.parseInterspersed(args)
	if !ok {
		return status
	}
	if msg := o.complete(c.fs, pos, *long, *variants); msg != "" {
		return c.misuse("%s", msg)
	}
	// Every config is read and checked before the first run starts.
	cfgs := make([]evo.Config, len(o.configs))
	for i, p := range o.configs {
		cfg, err := loadBenchConfig(ctx, p)
		if err != nil && stopped(ctx, err) { // a stop while a gym: env started
			fmt.Fprintf(stderr, "evolve bench: stopped while the configs were checked: %v\n", context.Cause(ctx))
			return stopStatus(ctx)
		}
		if err != nil {
			fmt.Fprintf(stderr, "evolve bench: %v\n", err)
			return exitBadInput
		}
		cfgs[i] = cfg
	}
	runs, status := o.runAll(ctx, cfgs, stderr)
	if status != exitOK {
		return status
	}
	o.others = o.otherRuns()
	if msg := o.emptyCollect(runs); msg != "" {
		fmt.Fprintf(stderr, "evolve bench: %s\n", msg)
		return exitBadInput
	}
	if len(o.others) > 0 && !o.quiet {
		fmt.Fprintf(stderr, "evolve bench: note: %s in %s are not in this report (name their configs and -variants to report them)\n",
			strings.Join(o.others, ", "), filepath.Join(o.out, "runs"))
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

// register defines the bench flags on fs, the options' own and -long and
// -variants, which complete reads.
func (o *benchOptions) register(fs *flag.FlagSet) (long *bool, variants *string) {
	fs.IntVar(&o.seeds, "seeds", 3, "run seeds 1 to `N` of every config")
	fs.StringVar(&o.out, "out", "bench", "write the runs under `DIR`/runs/<config>/<variant>/seed-<N>; finished runs there are reused, stopped ones resumed")
	fs.StringVar(&o.report, "report", "", "write BENCHMARKS.md, benchmarks.csv and the lr charts to `DIR` (default: -out)")
	fs.StringVar(&o.configDir, "configs", "configs", "read the default configs from `DIR`")
	long = fs.Bool("long", false, "with the default configs, add the long ones (LunarLander, MinAtar)")
	fs.BoolVar(&o.noTarget, "no-target", false, "ignore the configs' targets: every run spends its whole step budget")
	variants = fs.String("variants", "evo", "comma-separated `LIST` of evo (as configured), fixed (independent agents, no selection), lrF (evolution from F × the config's lr, e.g. lr0.1,lr10)")
	fs.IntVar(&o.workers, "workers", 0, "train at most `N` agents at once (0: each config's population.workers)")
	fs.IntVar(&o.evalEpisodes, "eval-episodes", 100, "re-evaluate each run's elite on `N` fresh episodes (0: off)")
	fs.StringVar(&o.note, "note", "", "a `TEXT` for the report's header (the load on the machine, ...)")
	fs.BoolVar(&o.quiet, "quiet", false, "print nothing but errors")
	fs.BoolVar(&o.collect, "collect", false, "train nothing: report the finished runs in -out and list the missing ones")
	return long, variants
}

// complete checks the parsed flags and derives the variants, the config
// paths and the command line the report records; it returns what is wrong,
// or "".
func (o *benchOptions) complete(fs *flag.FlagSet, pos []string, long bool, variants string) string {
	switch {
	case o.seeds < 1:
		return fmt.Sprintf("-seeds %d: want >= 1", o.seeds)
	case o.workers < 0:
		return fmt.Sprintf("-workers %d: want >= 0", o.workers)
	case o.evalEpisodes < 0:
		return fmt.Sprintf("-eval-episodes %d: want >= 0 (0: off)", o.evalEpisodes)
	case o.out == "":
		return "-out: want a directory"
	case isSet(fs, "report") && o.report == "":
		return "-report: want a directory (without -report the report goes to -out)"
	case o.collect && !dirExists(o.out):
		return fmt.Sprintf("-collect: -out %s: no such directory, so no runs to report", o.out)
	case isSet(fs, "configs") && len(pos) > 0:
		return fmt.Sprintf("-configs applies to the default configs only, not to %s", pos[0])
	}
	// Where the runs and the report go is known to work before anything trains.
	for _, d := range []struct{ flag, dir string }{{"-out", o.out}, {"-report", o.report}} {
		if d.dir == "" {
			continue
		}
		if err := evo.CheckOutDir(d.dir); err != nil {
			return outDirError(d.flag, d.dir, err)
		}
		if msg := outsideCheckpoints(d.flag, d.dir); msg != "" {
			return msg
		}
	}
	if o.report == "" {
		o.report = o.out
	}
	for _, s := range strings.Split(variants, ",") {
		v, err := parseVariant(strings.TrimSpace(s))
		if err != nil {
			return fmt.Sprintf("-variants: %v", err)
		}
		if slices.ContainsFunc(o.variants, func(w benchVariant) bool { return w.Name == v.Name }) {
			return fmt.Sprintf("-variants: %q given twice", v.Name)
		}
		o.variants = append(o.variants, v)
	}
	o.configs = pos
	if o.defaults = len(o.configs) == 0; o.defaults {
		o.configs = o.defaultConfigs(long, isSet(fs, "configs"))
	} else if long {
		return fmt.Sprintf("-long applies to the default configs only, not to %s", o.configs[0])
	}
	// Runs go to -out/runs/<file name without .toml>: two configs of one
	// name would train into one directory.
	seen := map[string]string{}
	for _, p := range o.configs {
		n := benchName(p)
		if q, ok := seen[n]; ok {
			if filepath.Clean(q) == filepath.Clean(p) {
				return fmt.Sprintf("config %s given twice", p)
			}
			return fmt.Sprintf("configs %s and %s would share %s: copy one to another file name", q, p, filepath.Join(o.out, "runs", n))
		}
		seen[n] = p
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
	o.command = strings.Join(append(cmd, pos...), " ")
	return ""
}

// defaultConfigs is the default list: the files of -configs, or, where that
// directory is missing and -configs was not given (an installed evolve away
// from a checkout), the shipped configs built into the command.
func (o *benchOptions) defaultConfigs(long, dirGiven bool) []string {
	names := benchClassic
	if long {
		names = append(slices.Clip(names), benchLong...)
	}
	if _, err := os.Stat(o.configDir); err != nil && !dirGiven {
		out := slices.Clone(names) // loadBenchConfig reads the shipped config of each name
		if long {
			for _, c := range configs.List() {
				if strings.HasPrefix(c.Name, "minatar") {
					out = append(out, c.Name)
				}
			}
		}
		return out
	}
	var out []string
	for _, n := range names {
		out = append(out, filepath.Join(o.configDir, n+".toml"))
	}
	if long {
		more, _ := filepath.Glob(filepath.Join(o.configDir, "minatar*.toml"))
		out = append(out, more...)
	}
	return out
}

// benchName is the name of config path p in a bench: its file name without
// .toml, which names its runs' directory and its rows in the report.
func benchName(p string) string { return strings.TrimSuffix(filepath.Base(p), ".toml") }

// isSet reports whether flag name was given on the command line.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// runAll trains (or with -collect, finds) every run of every config,
// variant and seed in turn. On a failure it says which run failed and
// returns the command's status; a stopped bench says how to continue.
func (o *benchOptions) runAll(ctx context.Context, cfgs []evo.Config, stderr io.Writer) ([]benchRun, int) {
	var runs []benchRun
	for i, cfg := range cfgs {
		name := benchName(o.configs[i])
		for _, v := range o.variants {
			for s := range o.seeds {
				r, err := o.run(ctx, name, v, cfg, int64(s+1), stderr)
				if errors.Is(err, errNotRun) {
					o.notRun = append(o.notRun, fmt.Sprintf("%s %s seed %d", name, v.Name, s+1))
					continue
				}
				if err != nil {
					fmt.Fprintf(stderr, "evolve bench: %s %s seed %d: %v\n", name, v.Name, s+1, err)
					return nil, benchFailure(ctx, err, stderr)
				}
				runs = append(runs, r)
			}
		}
	}
	return runs, exitOK
}

// benchFailure is the status of a bench whose run failed with err.
func benchFailure(ctx context.Context, err error, stderr io.Writer) int {
	switch {
	case stopped(ctx, err):
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

// loadBenchConfig loads the config file p, or the shipped config of that
// name when no such file exists (evolve configs lists them).
func loadBenchConfig(ctx context.Context, p string) (evo.Config, error) {
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		if b, serr := configs.Read(filepath.ToSlash(p)); serr == nil {
			cfg, err := evo.ParseConfigContext(ctx, b)
			if err != nil {
				return evo.Config{}, fmt.Errorf("shipped config %s: %w", p, err)
			}
			return cfg, nil
		}
	}
	return evo.LoadConfigContext(ctx, p)
}

// emptyCollect returns why -collect must not write its report, or "": a
// report that found none of its runs would replace the BENCHMARKS.md
// already in -report (typically one written with other configs or
// -variants than this command names) with an empty table.
func (o *benchOptions) emptyCollect(runs []benchRun) string {
	md := filepath.Join(o.report, "BENCHMARKS.md")
	if !o.collect || len(runs) > 0 {
		return ""
	}
	if _, err := os.Stat(md); err != nil {
		return ""
	}
	found := "no runs are there"
	if len(o.others) > 0 {
		found = "it holds " + strings.Join(o.others, ", ") + ": name their configs and -variants"
	}
	return fmt.Sprintf("-collect: none of this report's %d runs is finished in %s (%s); %s is left as it is",
		len(o.notRun), filepath.Join(o.out, "runs"), found, md)
}

// otherRuns returns the <config>/<variant> directories under -out/runs
// that this bench's configs and variants do not name.
func (o *benchOptions) otherRuns() []string {
	dirs, _ := filepath.Glob(filepath.Join(o.out, "runs", "*", "*"))
	var others []string
	for _, d := range dirs {
		name, variant := filepath.Base(filepath.Dir(d)), filepath.Base(d)
		ours := slices.ContainsFunc(o.configs, func(c string) bool { return benchName(c) == name }) &&
			slices.ContainsFunc(o.variants, func(v benchVariant) bool { return v.Name == variant })
		if !ours {
			others = append(others, name+"/"+variant)
		}
	}
	return others
}

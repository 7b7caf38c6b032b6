package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/evolverl/evolve/evo"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

// plotUsage is evolve plot's synopsis, printed by -h before the flags.
const plotUsage = `usage: evolve plot [-o DIR] [-hp NAME] RUN_DIR
       evolve plot [-o DIR] RUN_DIR|BENCH_DIR ...

With one run directory, writes to DIR (default RUN_DIR/plots):
  fitness.png          every agent's fitness, the best and mean of each generation
                       and the elite, against the population's env steps
  training.png         loss, entropy, approx KL and explained variance of every
                       PPO update (the run's TensorBoard scalars; without them, the
                       last update of each generation), per population slot
  hyperparameters.png  each hyperparameter that changed, per slot, and update_lr
                       (the rate of each agent's last update) where the KL-adaptive
                       rate or annealing moved it from lr
  network.png          hidden units, and each part of the network that changed
                       (widths, CNN channels and kernels, the memory model and
                       its sizes), per slot; none if no network changed (PBT)
Per-slot charts share fitness.png's x axis; in those drawn from metrics.csv a
ring marks a clone (the slot's agent replaced by a copy of another). -hp NAME
writes only hp-NAME.png.

With several run directories, or directories holding runs below them (a bench's
-out), writes comparison.png: each run's elite score and best of generation
against the population's env steps; runs that differ only in their seed (a
bench's seed-N of one config and variant, or the same config.toml) are drawn as
their mean with a min–max band. DIR defaults to ARG/plots when one directory
is given, else to the current directory.

`

// plotCmd is `evolve plot`: see plotUsage.
func plotCmd(_ context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCommand("evolve plot", plotUsage, stderr)
	outDir := c.fs.String("o", "", "write the PNGs to `DIR` (default: RUN_DIR/plots for one run; for several, ARG/plots with one argument, else the current directory)")
	hp := c.fs.String("hp", "", "write only hp-`NAME`.png: hyperparameter NAME (a metrics.csv column: lr, batch_size, ...) of every slot, for one run")
	pos, status, ok := c.parseInterspersed(args)
	if !ok {
		return status
	}
	if len(pos) == 0 {
		return c.misuse("want a run directory, several, or a directory holding runs (a bench's -out)")
	}
	for _, f := range []string{"o", "hp"} {
		if c.set()[f] && c.fs.Lookup(f).Value.String() == "" {
			return c.misuse("-%s: empty (leave the flag out for its default)", f)
		}
	}
	if msg := outsideCheckpoints("-o", *outDir); *outDir != "" && msg != "" {
		return c.misuse("%s", msg)
	}
	if *outDir != "" {
		if err := evo.CheckOutDir(*outDir); err != nil {
			return c.misuse("%s", outDirError("-o", *outDir, err))
		}
	}
	w := pngWriter{stdout: stdout, stderr: stderr}
	dirs, err := findRuns(pos)
	if err != nil {
		return w.bad("%v", err)
	}
	if len(dirs) == 1 {
		w.dir = cmp.Or(*outDir, filepath.Join(dirs[0], "plots"))
		return plotRunDir(w, dirs[0], *hp)
	}
	if *hp != "" {
		shown := strings.Join(dirs[:2], ", ")
		if len(dirs) > 2 {
			shown += ", ..."
		}
		return w.bad("-hp %s charts one run; %s: %d runs (%s)", *hp, strings.Join(pos, " "), len(dirs), shown)
	}
	w.dir = *outDir
	if w.dir == "" && len(pos) == 1 {
		w.dir = filepath.Join(pos[0], "plots")
	} else if w.dir == "" {
		w.dir = "."
	}
	runs, err := readRuns(dirs)
	if err != nil {
		return w.bad("%v", err)
	}
	if err := os.MkdirAll(w.dir, 0o755); err != nil {
		return w.bad("%v", err)
	}
	return w.write("comparison.png", comparisonFigure(runs))
}

// pngWriter writes a command's charts to dir and lists them on stdout.
type pngWriter struct {
	dir            string
	stdout, stderr io.Writer
}

// bad reports bad input on stderr and returns 2.
func (w pngWriter) bad(format string, a ...any) int {
	fmt.Fprintf(w.stderr, "evolve plot: "+format+"\n", a...)
	return exitBadInput
}

// write saves f as dir/name and prints its path; it returns the exit
// status.
func (w pngWriter) write(name string, f figure) int {
	path := filepath.Join(w.dir, name)
	if err := f.save(path); err != nil {
		fmt.Fprintf(w.stderr, "evolve plot: %v\n", err)
		return exitFailure
	}
	fmt.Fprintln(w.stdout, path)
	return exitOK
}

// plotRunDir writes the charts of the run in dir (plotUsage), or with hp
// only that hyperparameter's.
func plotRunDir(w pngWriter, dir, hp string) int {
	m, err := evo.ReadMetrics(filepath.Join(dir, "metrics.csv"))
	if err != nil {
		return w.bad("%v", err)
	}
	rc := readRunConfig(dir)
	if _, err := evo.ReadRunConfig(dir); err != nil {
		// The charts still draw, but their labels cannot say what the fitness is.
		fmt.Fprintf(w.stderr, "evolve plot: %v: the charts' labels take the defaults (fitness from evaluation, no confirmation)\n", err)
	}
	addUpdateLR(m, hp == updateLRName) // before the slot table, which keeps the rows
	t := newSlotTable(m)
	if hp != "" && !slices.Contains(m.HPNames, hp) {
		addUpdateLR(m, true) // -hp takes it wherever the file has it
		return w.bad("-hp %s: not a hyperparameter column of %s, whose are %s", hp, filepath.Join(dir, "metrics.csv"), strings.Join(m.HPNames, ", "))
	}
	if err := os.MkdirAll(w.dir, 0o755); err != nil {
		return w.bad("%v", err)
	}
	if hp != "" {
		p := hpPlot(m, t, slices.Index(m.HPNames, hp), rc)
		return w.write("hp-"+hp+".png", figure{w: 8 * vg.Inch, h: 4 * vg.Inch, cols: 1, panels: []*plot.Plot{p}, legend: t.legend(rc)})
	}
	fp := fitnessPlot(m, rc)
	if st := w.write("fitness.png", figure{w: 8 * vg.Inch, h: 4.5 * vg.Inch, cols: 1, panels: []*plot.Plot{fp}, legend: fp.Legend}); st != exitOK {
		return st
	}
	charts := []struct {
		name, missing string
		panels        []*plot.Plot
		note          []string
		noClones      bool // lines without the clone events' marks
	}{
		{name: "training.png", missing: "no PPO statistics (loss, entropy, ...) in metrics.csv",
			note: []string{"each point: the last PPO", "update of the generation"}},
		{name: "hyperparameters.png", missing: "no hyperparameter changed during the run"},
		{name: "network.png"},
	}
	updates, err := evo.ReadScalars(dir)
	if err != nil {
		fmt.Fprintf(w.stderr, "evolve plot: %v: training.png from metrics.csv\n", err)
	}
	clipUpdates(w.stderr, updates, m)
	if charts[0].panels = trainingPlots(m, t, updates); slotSeries(updates, "loss", t.slots) != nil {
		charts[0].note, charts[0].noClones = []string{"each line: every PPO update", "(TensorBoard scalars)"}, true
	}
	for _, i := range changedHPs(m) {
		charts[1].panels = append(charts[1].panels, hpPlot(m, t, i, rc))
	}
	charts[2].panels, charts[2].note, charts[2].missing = networkPlots(m, t)
	for _, ch := range charts {
		if len(ch.panels) == 0 {
			fmt.Fprintf(w.stderr, "evolve plot: %s: no %s\n", ch.missing, ch.name)
			continue
		}
		if st := w.write(ch.name, panelFigure(ch.panels, t.legendOf(rc, !ch.noClones), ch.note)); st != exitOK {
			return st
		}
	}
	return exitOK
}

// panelFigure lays out a run's per-slot panels: in one column up to three,
// else in two, with the slots' legend and, below it, the lines of note.
func panelFigure(panels []*plot.Plot, legend plot.Legend, note []string) figure {
	cols, w, h := 1, 8*vg.Inch, 2.6*vg.Inch
	if len(panels) > 3 {
		cols, w, h = 2, 11*vg.Inch, 2.4*vg.Inch
	}
	rows := (len(panels) + cols - 1) / cols
	if len(note) > 0 {
		legend.Add("")
		for _, n := range note {
			legend.Add(n)
		}
	}
	return figure{w: w, h: vg.Length(rows)*h + 0.2*vg.Inch, cols: cols, panels: panels, legend: legend}
}

// runConfig is what the plots read of a run's config.toml: the env id,
// the fitness target (NaN if none), whether the elite is confirmed and
// whether fitness comes from training episodes.
type runConfig struct {
	env                     string
	target                  float64
	confirmed, trainFitness bool
	// eliteSlot is set when slot 0 always holds the last generation's
	// best agent (tournament selection with elitism); eliteMutated when
	// that agent is mutated in place (mutate_elite), keeping its index.
	eliteSlot, eliteMutated bool
	// hpScales are the scales of the run's [hp] ranges (evo.HPScale).
	hpScales map[string]string
}

// readRunConfig reads the config.toml of the run directory dir; what it
// cannot read stays empty: the plots only use it for the title, the labels
// and a reference line.
func readRunConfig(dir string) runConfig {
	rc := runConfig{target: math.NaN()}
	cfg, err := evo.ReadRunConfig(dir)
	if err != nil {
		return rc
	}
	p := cfg.Population
	if !math.IsInf(p.Target, 1) {
		rc.target = p.Target
	}
	rc.env, rc.confirmed, rc.trainFitness = cfg.Env.ID, p.EliteEpisodes > 0, p.Fitness == evo.FitnessTrain
	rc.eliteSlot = p.Selection != evo.SelectPBT && !p.Independent && cfg.Tournament.Elitism
	rc.eliteMutated = cfg.Mutation.MutateElite
	rc.hpScales = map[string]string{}
	for name, r := range cfg.HP {
		rc.hpScales[name] = evo.HPScale(name, r)
	}
	return rc
}

// clipUpdates keeps TensorBoard's per-update scalars within metrics.csv's
// generations, the x range every chart of the run shares (a generation
// whose row was cut from metrics.csv may have its updates in TensorBoard),
// and says when they end a generation or more before it (a damaged or
// removed event file).
func clipUpdates(stderr io.Writer, updates map[string][]evo.Point, m *evo.Metrics) {
	if len(updates) == 0 || len(m.Rows) == 0 {
		return
	}
	end := m.Rows[len(m.Rows)-1].TotalSteps
	last := 0.0
	for tag, pts := range updates {
		i := sort.Search(len(pts), func(i int) bool { return float64(pts[i].Step) > end })
		updates[tag] = pts[:i]
		if strings.HasSuffix(tag, "/loss") && i > 0 {
			last = max(last, float64(pts[i-1].Step))
		}
	}
	if first := m.Rows[0].TotalSteps; last > 0 && last <= end-first {
		fmt.Fprintf(stderr, "evolve plot: TensorBoard's updates end at %s env steps, metrics.csv at %s: training.png shows what TensorBoard holds\n",
			commas(int(last)), commas(int(end)))
	}
}

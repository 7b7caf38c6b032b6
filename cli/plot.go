package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/evolverl/evolve/evo"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

// plotCmd is `evolve plot [-o DIR] [-hp NAME] RUN_DIR`: it reads RUN_DIR/metrics.csv
// and writes fitness.png, hyperparameters.png (when a hyperparameter
// changed during the run) and network.png (when the net column can be
// parsed) to DIR, RUN_DIR/plots by default.
func plotCmd(_ context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCommand("evolve plot", "usage: evolve plot [-o DIR] [-hp NAME] RUN_DIR\n\n", stderr)
	outDir := c.fs.String("o", "", "write the PNGs to `DIR` (default RUN_DIR/plots)")
	hp := c.fs.String("hp", "", "write only hp-`NAME`.png: hyperparameter NAME (a metrics.csv column: lr, batch_size, ...) of every agent per generation")
	pos, status, ok := c.parseInterspersed(args)
	if !ok {
		return status
	}
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "evolve plot: "+format+"\n", a...)
		return exitBadInput
	}
	if len(pos) != 1 {
		return c.misuse("want one run directory, got %d arguments", len(pos))
	}
	dir := pos[0]
	if fi, err := os.Stat(dir); err != nil {
		return bad("%v", err)
	} else if !fi.IsDir() {
		return bad("%s: not a run directory", dir)
	}
	m, err := evo.ReadMetrics(filepath.Join(dir, "metrics.csv"))
	if err != nil {
		return bad("%v", err)
	}
	rc := readRunConfig(dir)
	if *outDir == "" {
		*outDir = filepath.Join(dir, "plots")
	}
	if err := os.MkdirAll(*outDir, 0o755); err != nil {
		return bad("%v", err)
	}

	write := func(name string, w, h vg.Length, plots ...*plot.Plot) bool {
		path := filepath.Join(*outDir, name)
		if err := savePNG(path, w, h, plots); err != nil {
			fmt.Fprintf(stderr, "evolve plot: %v\n", err)
			return false
		}
		fmt.Fprintln(stdout, path)
		return true
	}
	if *hp != "" {
		i := slices.Index(m.HPNames, *hp)
		if i < 0 {
			return bad("-hp %s: %s has the hyperparameter columns %s", *hp, filepath.Join(dir, "metrics.csv"), strings.Join(m.HPNames, ", "))
		}
		if !write("hp-"+*hp+".png", 8*vg.Inch, 4*vg.Inch, hpPlot(m, newLineages(m), i)) {
			return exitFailure
		}
		return exitOK
	}
	if !write("fitness.png", 8*vg.Inch, 4.5*vg.Inch, fitnessPlot(m, rc)) {
		return exitFailure
	}
	if hps := hyperparameterPlots(m); len(hps) == 0 {
		fmt.Fprintf(stderr, "evolve plot: no hyperparameter changed during the run: no hyperparameters.png\n")
	} else if !write("hyperparameters.png", 8*vg.Inch, vg.Length(len(hps))*2.6*vg.Inch, hps...) {
		return exitFailure
	}
	if p := networkPlot(m); p == nil {
		fmt.Fprintf(stderr, "evolve plot: no layer widths in the net column: no network.png\n")
	} else if !write("network.png", 8*vg.Inch, 4*vg.Inch, p) {
		return exitFailure
	}
	return exitOK
}

// runConfig is what the plots read of a run's config.toml: the env id,
// the fitness target (NaN if none), whether the elite is confirmed and
// whether fitness comes from training episodes.
type runConfig struct {
	env                     string
	target                  float64
	confirmed, trainFitness bool
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
	return rc
}

package cli

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/evolverl/evolve/evo"
	"gonum.org/v1/plot"
)

// Tests of plots of several runs: comparisons, bench directories, seeds
// grouped by config and variant.

// runMetrics is a metrics.csv of gens generations of size agents that
// keep their index, stepsPerGen env steps each generation and fitness
// base + 10·generation + slot.
func runMetrics(gens, size, stepsPerGen int, base float64) string {
	var b strings.Builder
	b.WriteString(strings.SplitN(syntheticMetrics, "\n", 2)[0] + "\n")
	for g := 1; g <= gens; g++ {
		for s := range size {
			fmt.Fprintf(&b, "%d,%d,-1,%g,false,%d,%d,0.1,20,1.5,-0.1,3,0.6,0.002,0.1,%g,1,0.001,64,128,mlp[16] ReLU latent 8 head[16] ReLU,none\n",
				g, s, base+10*float64(g)+float64(s), stepsPerGen/size*g, stepsPerGen*g, 0.1*float64(g))
		}
	}
	return b.String()
}

// writeRun writes metrics (and, unless empty, config) as a run directory
// at dir.
func writeRun(t *testing.T, dir, metrics, config string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "metrics.csv"), []byte(metrics), 0o644); err != nil {
		t.Fatal(err)
	}
	if config != "" {
		if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(config), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestPlotSeveralRunsWritesComparison: several run directories make one
// comparison.png, in -o or else the current directory, and no per-run
// charts.
func TestPlotSeveralRunsWritesComparison(t *testing.T) {
	dir := t.TempDir()
	a := writeRun(t, filepath.Join(dir, "a"), runMetrics(4, 2, 1000, 0), "")
	b := writeRun(t, filepath.Join(dir, "b"), runMetrics(3, 2, 1500, 5), "")
	out := filepath.Join(dir, "charts")
	code, stdout, errOut := evolve(context.Background(), "plot", "-o", out, a, b)
	if want := filepath.Join(out, "comparison.png"); code != exitOK || strings.TrimSpace(stdout) != want {
		t.Fatalf("exit %d, stdout %q (want only %s): %s", code, stdout, want, errOut)
	}
	checkPNG(t, filepath.Join(out, "comparison.png"))
	for _, d := range []string{a, b} {
		if _, err := os.Stat(filepath.Join(d, "plots")); err == nil {
			t.Errorf("%s/plots written in comparison mode", d)
		}
	}
	work := t.TempDir()
	t.Chdir(work)
	if code, stdout, errOut := evolve(context.Background(), "plot", a, b); code != exitOK || strings.TrimSpace(stdout) != "comparison.png" {
		t.Fatalf("without -o: exit %d, stdout %q (want comparison.png in the current directory): %s", code, stdout, errOut)
	}
	checkPNG(t, filepath.Join(work, "comparison.png"))
}

// TestPlotBenchDirWritesComparison: a bench's -out is walked for its runs
// (not its report files), and the comparison goes to its plots directory.
// A bench directory holding a single run plots that run's charts.
func TestPlotBenchDirWritesComparison(t *testing.T) {
	bench := t.TempDir()
	for _, r := range []struct {
		variant string
		seed    int
	}{{"evo", 1}, {"evo", 2}, {"fixed", 1}, {"fixed", 2}} {
		writeRun(t, filepath.Join(bench, "runs", "tiny", r.variant, fmt.Sprintf("seed-%d", r.seed)),
			runMetrics(3+r.seed, 2, 1000*r.seed, float64(r.seed)), "")
	}
	if err := os.WriteFile(filepath.Join(bench, "BENCHMARKS.md"), []byte("# report\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, errOut := evolve(context.Background(), "plot", bench)
	if want := filepath.Join(bench, "plots", "comparison.png"); code != exitOK || strings.TrimSpace(stdout) != want {
		t.Fatalf("exit %d, stdout %q (want only %s): %s", code, stdout, want, errOut)
	}
	checkPNG(t, filepath.Join(bench, "plots", "comparison.png"))

	one := filepath.Join(t.TempDir(), "bench")
	run := writeRun(t, filepath.Join(one, "runs", "tiny", "evo", "seed-1"), syntheticMetrics, "")
	if code, stdout, errOut := evolve(context.Background(), "plot", one); code != exitOK || !strings.Contains(stdout, filepath.Join(run, "plots", "fitness.png")) {
		t.Errorf("a bench of one run: exit %d, stdout %q: want that run's charts: %s", code, stdout, errOut)
	}
}

// TestPlotSeveralBadInputExitsTwo: among several arguments, one that holds
// no run, or a run whose metrics.csv is malformed, exits 2 naming it; so
// does -hp, which charts one run.
func TestPlotSeveralBadInputExitsTwo(t *testing.T) {
	dir := t.TempDir()
	a := writeRun(t, filepath.Join(dir, "a"), runMetrics(2, 2, 1000, 0), "")
	b := writeRun(t, filepath.Join(dir, "b"), runMetrics(2, 2, 1000, 0), "")
	empty := filepath.Join(dir, "empty")
	if err := os.MkdirAll(filepath.Join(empty, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	broken := writeRun(t, filepath.Join(dir, "broken"), strings.Replace(syntheticMetrics, "0.0003,64", "fast,64", 1), "")
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"directory without runs", []string{a, empty, b}, []string{empty + ": no metrics.csv in it or below"}},
		{"missing directory", []string{a, filepath.Join(dir, "nope")}, []string{"nope"}},
		{"malformed metrics.csv", []string{a, broken}, []string{filepath.Join(broken, "metrics.csv"), "line 2", "column lr"}},
		{"-hp with several runs", []string{"-hp", "lr", a, b}, []string{"-hp lr charts one run", "2 runs"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, errOut := evolve(context.Background(), append([]string{"plot", "-o", filepath.Join(dir, "out")}, c.args...)...)
			if code != exitBadInput {
				t.Errorf("exit %d, want 2 (stderr %q)", code, errOut)
			}
			for _, w := range c.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q does not name %q", errOut, w)
				}
			}
		})
	}
}

// TestGroupSeeds: a bench's runs group by config and variant; other runs
// by their config.toml apart from seed and out_dir, except a run of a seed
// its group holds already; a run without one stays alone. Seeds are listed
// in numeric order.
func TestGroupSeeds(t *testing.T) {
	dir := t.TempDir()
	cfg := func(seed int, out, extra string) string {
		return fmt.Sprintf("seed = %d\nout_dir = %q\n%s", seed, out, extra)
	}
	dirs := []string{
		writeRun(t, filepath.Join(dir, "b", "runs", "cartpole", "evo", "seed-10"), "", ""),
		writeRun(t, filepath.Join(dir, "b", "runs", "cartpole", "evo", "seed-2"), "", ""),
		writeRun(t, filepath.Join(dir, "b", "runs", "cartpole", "fixed", "seed-1"), "", ""),
		writeRun(t, filepath.Join(dir, "r1"), "", cfg(1, "r1", "")),
		writeRun(t, filepath.Join(dir, "r2"), "", cfg(2, "elsewhere", "")),
		writeRun(t, filepath.Join(dir, "r1again"), "", cfg(1, "r1_2", "")), // the same config and seed again
		writeRun(t, filepath.Join(dir, "big"), "", cfg(3, "big", "[population]\nsize = 8\n")),
		writeRun(t, filepath.Join(dir, "bare"), "", ""),
	}
	labels := runLabels(dirs)
	var runs []*plotRun
	for i, d := range dirs {
		r := &plotRun{dir: d, label: labels[i]}
		r.group, r.groupName, r.seed = seedGroup(d, labels[i])
		runs = append(runs, r)
	}
	var got []string
	for _, g := range groupSeeds(runs) {
		var members []string
		for _, r := range g.runs {
			members = append(members, r.label)
		}
		got = append(got, g.name+" = "+strings.Join(members, " "))
	}
	want := []string{
		"cartpole/evo: seeds 2, 10 = b/runs/cartpole/evo/seed-2 b/runs/cartpole/evo/seed-10",
		"cartpole/fixed = b/runs/cartpole/fixed/seed-1",
		"r1, r2: seeds 1, 2 = r1 r2",
		"r1again = r1again",
		"big = big",
		"bare = bare",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("groups:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestSlotTableCloneEvents: rows take their slot from their position in
// the generation; a clone event is a slot whose agent was replaced by a
// copy of another: the elite moved from its slot, a tournament's clone of
// another slot's agent, PBT's exploit. A clone of the slot's own agent,
// or the same agent going on, is none.
func TestSlotTableCloneEvents(t *testing.T) {
	rows := []struct{ gen, agent, parent int }{
		{1, 0, -1}, {1, 1, -1}, {1, 2, -1}, {1, 3, -1},
		// Tournament with elitism: agent 2, the best, moves to slot 0;
		// slot 1 gets a clone of its own agent, slot 2 one of agent 0,
		// slot 3 keeps agent 3.
		{2, 2, -1}, {2, 4, 1}, {2, 5, 0}, {2, 3, -1},
		// PBT: slot 1 exploits agent 9, in no slot of generation 2; slot 3
		// exploits slot 1's agent 4.
		{3, 2, -1}, {3, 6, 9}, {3, 5, 0}, {3, 7, 4},
	}
	m := &evo.Metrics{}
	for _, r := range rows {
		m.Rows = append(m.Rows, evo.MetricsRow{Generation: r.gen, Agent: r.agent, Parent: r.parent, TotalSteps: float64(100 * r.gen)})
	}
	tb := newSlotTable(m)
	if tb.slots != 4 || len(tb.rows) != 3 || !slices.Equal(tb.steps, []float64{100, 200, 300}) {
		t.Fatalf("%d slots, %d generations, steps %v; want 4, 3, [100 200 300]", tb.slots, len(tb.rows), tb.steps)
	}
	if a := tb.rows[1][2].Agent; a != 5 {
		t.Errorf("generation 2, slot 2: agent %d, want 5", a)
	}
	want := map[[2]int]cloneEvent{
		{1, 0}: {g: 1, slot: 0, from: 2, agent: 2},
		{1, 2}: {g: 1, slot: 2, from: 0, agent: 0},
		{2, 1}: {g: 2, slot: 1, from: -1, agent: 9},
		{2, 3}: {g: 2, slot: 3, from: 1, agent: 4},
	}
	if !maps.Equal(tb.clones, want) {
		t.Errorf("clone events %v,\nwant %v", tb.clones, want)
	}
}

// TestComparisonTitleFits: the comparison's title names the envs of the
// runs compared while they fit on a line and counts them when they do
// not, on lines no wider than maxTitleWidth: a title of nine runs over
// six envs on one line ran off both edges of the figure.
func TestComparisonTitleFits(t *testing.T) {
	runsOn := func(envs ...string) []*plotRun {
		var runs []*plotRun
		for _, e := range envs {
			runs = append(runs, &plotRun{rc: runConfig{env: e}})
		}
		return runs
	}
	for _, tc := range []struct {
		runs  []*plotRun
		title string
	}{
		{runsOn("CartPole-v1", "CartPole-v1"), "CartPole-v1: elite score against env steps"},
		{runsOn("CartPole-v1", "Catch-v0"), "Elite score against env steps,\non CartPole-v1, Catch-v0 (different envs)"},
		{runsOn("CartPole-v1", "CartPole-v1", "Catch-v0", "Catch-v0", "MinAtar/Breakout-v0", "LunarLander-v3", "MountainCar-v0", "Acrobot-v1", "Pendulum-v1"),
			"Elite score against env steps, on 7 different envs"},
		{runsOn("NoisyPositionOnlyCartPoleEasy-v0-with-a-long-suffix"), "NoisyPositionOnlyCartPoleEasy-v0-with-a-long-suffix:\nelite score against env steps"},
		{runsOn(""), "Elite score against env steps"},
	} {
		p := newPlot()
		comparisonLabels(p, tc.runs)
		if p.Title.Text != tc.title {
			t.Errorf("title %q, want %q", p.Title.Text, tc.title)
		}
		for _, line := range strings.Split(p.Title.Text, "\n") {
			if w := p.Title.TextStyle.Width(line); w > maxTitleWidth {
				t.Errorf("title line %q is %.0f points wide, over %.0f", line, w.Points(), maxTitleWidth.Points())
			}
		}
	}
	// A word wider than a line stays whole, on a line of its own.
	long := strings.Repeat("x", 120)
	if got := fitTitle(plot.New().Title.TextStyle, "a b", long, "c"); got != "a b\n"+long+"\nc" {
		t.Errorf("fitTitle with a word wider than a line: %q", got)
	}
}

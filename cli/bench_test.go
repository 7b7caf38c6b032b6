package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/evolverl/evolve/evo"
	"github.com/evolverl/evolve/internal/runtest"
)

// readCSV reads a CSV file into maps from the header's names, one per row.
func readCSV(t *testing.T, path string) []map[string]string {
	rows, _ := runtest.CSV(t, path)
	return rows
}

func TestBenchWritesTheTableOfItsRuns(t *testing.T) {
	config, _ := writeTiny(t, 1024)
	out := filepath.Join(t.TempDir(), "bench")
	args := []string{"bench", "-out", out, "-seeds", "2", "-eval-episodes", "3", "-variants", "evo,fixed", "-quiet", config}
	code, stdout, stderr := evolve(context.Background(), args...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	md, csvPath := filepath.Join(out, "BENCHMARKS.md"), filepath.Join(out, "benchmarks.csv")
	if !strings.Contains(stdout, md) || !strings.Contains(stdout, csvPath) {
		t.Errorf("stdout does not list the files written:\n%s", stdout)
	}
	rows := readCSV(t, csvPath)
	if len(rows) != 4 {
		t.Fatalf("%d rows in benchmarks.csv, want 2 variants × 2 seeds", len(rows))
	}
	text := string(mustRead(t, md))
	for i, variant := range []string{"evo", "fixed"} {
		var elite, eval []float64
		for s := range 2 {
			r := rows[2*i+s]
			if r["config"] != "tiny" || r["variant"] != variant || r["seed"] != strconv.Itoa(s+1) || r["env"] != "CartPole-v1" {
				t.Fatalf("row %d: %v: want tiny, %s, seed %d", 2*i+s, r, variant, s+1)
			}
			// The elite's fitness is the run's summary.json's, exactly.
			var sum struct {
				EliteFitness float64 `json:"elite_fitness"`
				TotalSteps   int     `json:"total_steps"`
			}
			dir := filepath.Join(out, "runs", "tiny", variant, "seed-"+r["seed"])
			if err := json.Unmarshal(mustRead(t, filepath.Join(dir, "summary.json")), &sum); err != nil {
				t.Fatal(err)
			}
			if r["elite_fitness"] != strconv.FormatFloat(sum.EliteFitness, 'g', -1, 64) ||
				r["population_steps"] != strconv.Itoa(sum.TotalSteps) || r["steps_per_agent"] != strconv.Itoa(sum.TotalSteps/2) {
				t.Errorf("row %v: want elite_fitness %v and %d steps from %s/summary.json", r, sum.EliteFitness, sum.TotalSteps, dir)
			}
			if r["eval_episodes"] != "3" || r["anchor"] != "500" || r["anchor_steps"] != "100000" {
				t.Errorf("row %v: want 3 re-evaluation episodes and CartPole's anchor 500 @ 100000", r)
			}
			// Exact, without the noise of exp(mean(log)) (0.0003000000000000001).
			if variant == "fixed" && r["final_lr"] != "0.0003" {
				t.Errorf("row %v: final lr %s, want exactly the initial 0.0003 of independent agents", r, r["final_lr"])
			}
			if r["steps_to_anchor"] != "-1" { // the tiny runs are far from 500
				t.Errorf("row %v: steps_to_anchor %s, want -1", r, r["steps_to_anchor"])
			}
			e, _ := strconv.ParseFloat(r["elite_fitness"], 64)
			v, _ := strconv.ParseFloat(r["eval_return"], 64)
			elite, eval = append(elite, e), append(eval, v)
		}
		// Mean ± population std over the seeds, then each seed.
		want := func(xs []float64) string {
			m := (xs[0] + xs[1]) / 2
			sd := math.Abs(xs[0]-xs[1]) / 2
			return strconv.FormatFloat(m, 'f', 2, 64) + " ± " + strconv.FormatFloat(sd, 'f', 2, 64) +
				" (" + strconv.FormatFloat(xs[0], 'f', 2, 64) + ", " + strconv.FormatFloat(xs[1], 'f', 2, 64) + ")"
		}
		line := "| tiny | " + variant + " | " + want(elite) + " | " + want(eval) + " | "
		if !strings.Contains(text, line) {
			t.Errorf("BENCHMARKS.md has no line beginning %q:\n%s", line, text)
		}
	}
	if want := "Written by `evolve bench -eval-episodes 3 -out " + out + " -quiet -seeds 2 -variants evo,fixed " + config + "` on "; !strings.Contains(text, want) {
		t.Errorf("BENCHMARKS.md does not begin with the command %q:\n%s", want, text)
	}
	// The tiny runs stop on their step budget, and the header says so.
	for _, want := range []string{"Every run spent its whole step budget.", "mean ± population std over seeds"} {
		if !strings.Contains(text, want) {
			t.Errorf("BENCHMARKS.md does not say %q:\n%s", want, text)
		}
	}
	for _, wrong := range []string{"`target`", "std divided by n", "0.0003000"} {
		if strings.Contains(text, wrong) {
			t.Errorf("BENCHMARKS.md says %q:\n%s", wrong, text)
		}
	}
	if strings.Contains(text, "Not run in this report") {
		t.Errorf("BENCHMARKS.md lists default configs as not run although the configs were chosen:\n%s", text)
	}

	// A second bench reuses the finished runs: the same table, to the byte.
	before := mustRead(t, csvPath)
	if code, _, stderr := evolve(context.Background(), args...); code != exitOK {
		t.Fatalf("second bench: exit %d: %s", code, stderr)
	}
	if after := mustRead(t, csvPath); string(after) != string(before) {
		t.Errorf("benchmarks.csv changed when its runs were reused:\n%s\nthen\n%s", before, after)
	}
	// A bench directory moved elsewhere reports the same: each run's elite
	// is read where the run is now, not where summary.json says it was.
	moved := filepath.Join(t.TempDir(), "moved")
	if err := os.Rename(out, moved); err != nil {
		t.Fatal(err)
	}
	movedArgs := []string{"bench", "-collect", "-out", moved, "-seeds", "2", "-eval-episodes", "3", "-variants", "evo,fixed", "-quiet", config}
	if code, _, stderr := evolve(context.Background(), movedArgs...); code != exitOK {
		t.Fatalf("bench -collect of the moved directory: exit %d: %s", code, stderr)
	}
	if after := mustRead(t, filepath.Join(moved, "benchmarks.csv")); string(after) != string(before) {
		t.Errorf("benchmarks.csv of the moved runs differs:\n%s\nthen\n%s", before, after)
	}
	if err := os.Rename(moved, out); err != nil {
		t.Fatal(err)
	}
	// The same directory with another config of that name is refused.
	changed := filepath.Join(t.TempDir(), "tiny.toml")
	text = strings.Replace(string(mustRead(t, config)), "update_epochs = 1", "update_epochs = 2", 1)
	if err := os.WriteFile(changed, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = evolve(context.Background(), "bench", "-out", out, "-seeds", "1", changed)
	if code != exitBadInput || !strings.Contains(stderr, "holds a run of another config (ppo.update_epochs: 1 in the run, 2 here)") {
		t.Errorf("exit %d, stderr %q: want 2 and a run of another config, naming update_epochs", code, stderr)
	}
}

func TestBenchLRVariantStartsThereAndCharts(t *testing.T) {
	config, _ := writeTiny(t, 768)
	out := filepath.Join(t.TempDir(), "bench")
	code, stdout, stderr := evolve(context.Background(), "bench", "-out", out, "-seeds", "1", "-eval-episodes", "0",
		"-variants", "lr10", "-quiet", config)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	m, err := evo.ReadMetrics(filepath.Join(out, "runs", "tiny", "lr10", "seed-1", "metrics.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if lr := m.Rows[0].HP[0]; m.HPNames[0] != "lr" || math.Abs(lr-3e-3) > 1e-12 {
		t.Errorf("first lr %v (%s): want 10 × the default 3e-4", lr, m.HPNames[0])
	}
	chart := filepath.Join(out, "lr-tiny.png")
	checkPNG(t, chart)
	if !strings.Contains(stdout, chart) || !strings.Contains(string(mustRead(t, filepath.Join(out, "BENCHMARKS.md"))), "(lr-tiny.png)") {
		t.Errorf("the lr chart is not listed on stdout or linked from BENCHMARKS.md:\n%s", stdout)
	}
	if rows := readCSV(t, filepath.Join(out, "benchmarks.csv")); rows[0]["eval_return"] != "NaN" || rows[0]["eval_episodes"] != "0" {
		t.Errorf("row %v: want no re-evaluation", rows[0])
	}
}

func TestBenchBadInputExitsTwo(t *testing.T) {
	config, _ := writeTiny(t, 1024)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(bad, []byte("[population]\nsizes = 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Another config of the same file name: its runs would go where config's go.
	sameName := filepath.Join(dir, "other", filepath.Base(config))
	if err := os.MkdirAll(filepath.Dir(sameName), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sameName, mustRead(t, config), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no seeds", []string{"-seeds", "0", config}, "-seeds 0"},
		{"negative workers", []string{"-workers", "-1", config}, "-workers -1"},
		{"negative episodes", []string{"-eval-episodes", "-1", config}, "-eval-episodes -1"},
		{"unknown variant", []string{"-variants", "evo,best", config}, `variant "best"`},
		{"bad lr factor", []string{"-variants", "lr0", config}, `variant "lr0"`},
		{"twice", []string{"-variants", "evo,evo", config}, `"evo" given twice`},
		{"unknown flag", []string{"-sedes", "2", config}, "-sedes"},
		{"long with configs", []string{"-long", config}, "-long applies to the default configs"},
		{"missing config", []string{filepath.Join(dir, "missing.toml")}, "missing.toml"},
		{"bad config", []string{bad}, "population.sizes"},
		{"default configs elsewhere", []string{"-configs", dir}, "cartpole.toml"},
		{"config twice", []string{config, config}, "given twice"},
		{"one name twice", []string{config, sameName}, "would share"},
		{"report a file", []string{"-report", bad, config}, "-report " + bad + " is a file"},
		{"empty report", []string{"-report", "", config}, "-report: want a directory"},
		{"configs beside configs", []string{"-configs", dir, config}, "-configs applies to the default configs only"},
		{"collect from nowhere", []string{"-collect", config}, "no such directory, so no runs to report"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "bench")
			code, _, stderr := evolve(context.Background(), append([]string{"bench", "-out", out}, tc.args...)...)
			if code != exitBadInput || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q: want 2 and a message naming %q", code, stderr, tc.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was created for bad input", out)
			}
		})
	}
}

func TestLastGenerationAndStepsToReach(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "metrics.csv")
	if err := os.WriteFile(path, []byte(syntheticMetrics), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := evo.ReadMetrics(path)
	if err != nil {
		t.Fatal(err)
	}
	best, mean, lr := lastGeneration(m)
	if best != 30 || mean != 27.5 || math.Abs(lr-math.Sqrt(0.0003*0.003)) > 1e-15 {
		t.Errorf("last generation: best %v, mean %v, lr %v; want 30, 27.5 and the geometric mean of 3e-4 and 3e-3", best, mean, lr)
	}
	for _, tc := range []struct {
		score float64
		want  int
	}{{10, 512}, {25, 1024}, {31, -1}} {
		if got := stepsToReach(m, tc.score); got != tc.want {
			t.Errorf("stepsToReach(%v) = %d, want %d", tc.score, got, tc.want)
		}
	}
}

func TestBenchStoppedContinuesWithTheSameCommand(t *testing.T) {
	config, _ := writeTiny(t, 1024)
	out := filepath.Join(t.TempDir(), "bench")
	args := []string{"bench", "-out", out, "-seeds", "1", "-eval-episodes", "0", "-quiet", config}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	code, _, stderr := evolve(ctx, args...)
	if code != 130 || !strings.Contains(stderr, "the same command continues") {
		t.Fatalf("cancelled: exit %d, stderr %q: want 130 and how to continue", code, stderr)
	}
	if code, _, stderr := evolve(context.Background(), args...); code != exitOK {
		t.Fatalf("continued: exit %d: %s", code, stderr)
	}
	if rows := readCSV(t, filepath.Join(out, "benchmarks.csv")); len(rows) != 1 || rows[0]["stop_reason"] != "budget" {
		t.Errorf("rows %v: want the one run, finished by its budget", rows)
	}
}

func TestBenchCollectReportsOnlyFinishedRuns(t *testing.T) {
	config, _ := writeTiny(t, 512)
	out := filepath.Join(t.TempDir(), "bench")
	if code, _, stderr := evolve(context.Background(), "bench", "-out", out, "-seeds", "1", "-eval-episodes", "0", "-quiet", config); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	code, _, stderr := evolve(context.Background(), "bench", "-out", out, "-seeds", "2", "-eval-episodes", "0", "-variants", "evo,fixed", "-collect", config)
	if code != exitOK {
		t.Fatalf("-collect: exit %d: %s", code, stderr)
	}
	if rows := readCSV(t, filepath.Join(out, "benchmarks.csv")); len(rows) != 1 || rows[0]["variant"] != "evo" || rows[0]["seed"] != "1" {
		t.Errorf("rows %v: want only the finished run, evo seed 1", rows)
	}
	text := string(mustRead(t, filepath.Join(out, "BENCHMARKS.md")))
	if !strings.Contains(text, "tiny evo seed 2, tiny fixed seed 1, tiny fixed seed 2.") {
		t.Errorf("BENCHMARKS.md does not list the runs it did not find:\n%s", text)
	}
	if _, err := os.Stat(filepath.Join(out, "runs", "tiny", "fixed")); err == nil {
		t.Errorf("-collect trained a run")
	}
}

// TestBenchCollectRefusesACutMetricsFile: a finished run whose metrics.csv
// ends generations before its summary's count (a file cut short) is bad
// input naming the file, not a report of an earlier generation as the last.
func TestBenchCollectRefusesACutMetricsFile(t *testing.T) {
	config, _ := writeTiny(t, 1024)
	out := filepath.Join(t.TempDir(), "bench")
	if code, _, stderr := evolve(context.Background(), "bench", "-out", out, "-seeds", "1", "-eval-episodes", "0", "-quiet", config); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	path := filepath.Join(out, "runs", "tiny", "evo", "seed-1", "metrics.csv")
	lines := strings.SplitAfter(string(mustRead(t, path)), "\n")
	last := strings.SplitN(lines[len(lines)-2], ",", 2)[0]
	var kept []string
	for _, l := range lines {
		if !strings.HasPrefix(l, last+",") {
			kept = append(kept, l)
		}
	}
	if len(kept) < 2 || len(kept) == len(lines) {
		t.Fatalf("the run has one generation: nothing to cut")
	}
	if err := os.WriteFile(path, []byte(strings.Join(kept, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := evolve(context.Background(), "bench", "-out", out, "-seeds", "1", "-eval-episodes", "0", "-collect", "-quiet", config)
	if code != exitBadInput || !strings.Contains(stderr, path) || !strings.Contains(stderr, "cut short") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit %d naming %s", code, stderr, exitBadInput, path)
	}
}

// TestBenchStopSentence: the report's header counts the runs by their
// summaries' stop_reason instead of claiming they all reached the target.
func TestBenchStopSentence(t *testing.T) {
	run := func(reason string) benchRun {
		var r benchRun
		r.Summary.StopReason = reason
		return r
	}
	groups := func(reasons ...string) []benchGroup {
		var g benchGroup
		for _, r := range reasons {
			g.runs = append(g.runs, run(r))
		}
		return []benchGroup{g}
	}
	target := "at its config's `target` once a generation's best reached it (after `min_generations`)"
	for _, c := range []struct {
		o       benchOptions
		reasons []string
		want    string
	}{
		{benchOptions{}, []string{"target", "target"}, "Every run stopped " + target + "."},
		{benchOptions{}, []string{"budget"}, "The run spent its whole step budget."},
		{benchOptions{noTarget: true}, []string{"budget", "budget"}, "Every run spent its whole step budget (`-no-target`)."},
		{benchOptions{}, []string{"target", "budget", "target"},
			"Of the 3 runs, 2 stopped at their config's `target` once a generation's best reached it (after `min_generations`) and 1 spent its whole step budget."},
		{benchOptions{}, []string{"budget", "target", "error"},
			"Of the 3 runs, 1 spent its whole step budget, 1 stopped " + target + " and 1 stopped with stop_reason \"error\"."},
	} {
		if got := c.o.stopSentence(groups(c.reasons...)); got != c.want {
			t.Errorf("%v: %q\nwant %q", c.reasons, got, c.want)
		}
	}
}

// TestFinalLRExact: a last generation that shares one lr reports it
// exactly, and a mixed one its geometric mean.
func TestFinalLRExact(t *testing.T) {
	m := &evo.Metrics{HPNames: []string{"lr"}}
	for a := range 3 {
		m.Rows = append(m.Rows, evo.MetricsRow{Generation: 1, Agent: a, Fitness: 1, HP: []float64{0.001}})
	}
	if _, _, lr := lastGeneration(m); lr != 0.001 {
		t.Errorf("three agents at lr 0.001: final lr %v, want exactly 0.001", lr)
	}
	m.Rows[0].HP[0], m.Rows[1].HP[0], m.Rows[2].HP[0] = 1e-4, 1e-3, 1e-2
	if _, _, lr := lastGeneration(m); math.Abs(lr-1e-3) > 1e-18 {
		t.Errorf("lr 1e-4, 1e-3, 1e-2: final lr %v, want 1e-3", lr)
	}
}

// TestBenchTakesShippedConfigNames: a config argument that is no file but
// a shipped config's name is that config (-collect: nothing trains).
func TestBenchTakesShippedConfigNames(t *testing.T) {
	out := t.TempDir()
	// Runs of another bench in the same -out are named, not silently left out.
	if err := os.MkdirAll(filepath.Join(out, "runs", "acrobot", "fixed", "seed-1"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := evolve(context.Background(), "bench", "-collect", "-seeds", "1", "-out", out, "-quiet", "zoo/cartpole")
	if code != exitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	if b := mustRead(t, filepath.Join(out, "BENCHMARKS.md")); !strings.Contains(string(b), "cartpole evo seed 1") ||
		!strings.Contains(string(b), "not in this report: acrobot/fixed") {
		t.Errorf("BENCHMARKS.md does not list the missing run and the other one:\n%s", b)
	}
}

// TestBenchCollectKeepsAReportItCannotFill: -collect that finds none of
// its runs (the configs or variants of the runs in -out not named) leaves
// the report there as it is and says what -out holds; it overwrote it with
// an empty table and exited 0.
func TestBenchCollectKeepsAReportItCannotFill(t *testing.T) {
	out := t.TempDir()
	if err := os.MkdirAll(filepath.Join(out, "runs", "small", "lr0.1", "seed-1"), 0o755); err != nil {
		t.Fatal(err)
	}
	md := filepath.Join(out, "BENCHMARKS.md")
	if err := os.WriteFile(md, []byte("the earlier report\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := evolve(context.Background(), "bench", "-collect", "-seeds", "1", "-out", out, "-quiet", "zoo/cartpole")
	if code != exitBadInput || !strings.Contains(stderr, "small/lr0.1") || !strings.Contains(stderr, "left as it is") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit %d naming small/lr0.1", code, stderr, exitBadInput)
	}
	if b := mustRead(t, md); string(b) != "the earlier report\n" {
		t.Errorf("BENCHMARKS.md was rewritten:\n%s", b)
	}
}

// TestBenchDefaultsWithoutACheckout: with no configs given and no configs/
// directory where it runs (an installed evolve), bench takes the shipped
// configs built into the command.
func TestBenchDefaultsWithoutACheckout(t *testing.T) {
	if _, err := os.Stat("configs"); err == nil {
		t.Skip("a configs directory is here")
	}
	out := t.TempDir()
	code, _, stderr := evolve(context.Background(), "bench", "-collect", "-seeds", "1", "-out", out, "-quiet")
	if code != exitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	b := string(mustRead(t, filepath.Join(out, "BENCHMARKS.md")))
	for _, n := range benchClassic {
		if !strings.Contains(b, n+" evo seed 1") {
			t.Errorf("BENCHMARKS.md does not list %s as missing:\n%s", n, b)
		}
	}
}

// TestBenchFlagsAfterConfigs: flags may follow the configs, as in plot and
// sample (-seeds was read as a config file).
func TestBenchFlagsAfterConfigs(t *testing.T) {
	config, _ := writeTiny(t, 512)
	out := t.TempDir()
	code, _, stderr := evolve(context.Background(), "bench", "-collect", "-out", out, config, "-seeds", "2", "-quiet")
	if code != exitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	if b := string(mustRead(t, filepath.Join(out, "BENCHMARKS.md"))); !strings.Contains(b, "tiny evo seed 2") {
		t.Errorf("-seeds 2 after the config was not read:\n%s", b)
	}
}

// TestBenchStepsTableHasNoNeverWithoutAnAnchor: "never" says a run missed
// its env's anchor; an env without one gets "—", as in the first table.
func TestBenchStepsTableHasNoNeverWithoutAnAnchor(t *testing.T) {
	run := func(env string) benchRun {
		return benchRun{Config: "c", Env: env, Variant: "evo", Seed: 1, Size: 2, StepsToAnchor: -1, FinalLR: 3e-4}
	}
	for _, c := range []struct{ env, want string }{{"Probe7-v0", "| c | evo | — |"}, {"CartPole-v1", "| c | evo | never |"}} {
		var b bytes.Buffer
		mdSteps(&b, groupRuns([]benchRun{run(c.env)}))
		if !strings.Contains(b.String(), c.want) {
			t.Errorf("%s: the steps table has no %q:\n%s", c.env, c.want, b.String())
		}
	}
}

package pytest

import (
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evolverl/evolve/evo"
)

// compareVariants returns the configs python/evolve_compare.py runs for
// each method on the shipped config name, as the script writes them.
func compareVariants(t *testing.T, python, name string, methods []string) map[string][]byte {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "python"))
	if err != nil {
		t.Fatal(err)
	}
	config, err := filepath.Abs(filepath.Join("..", "..", "configs", name+".toml"))
	if err != nil {
		t.Fatal(err)
	}
	const sep = "\n#### evolve_compare variant ####\n"
	prog := "import sys; sys.path.insert(0, sys.argv[1]); import evolve_compare as c, evolve_tune as t\n" +
		"base = t.load_base(sys.argv[2])\n" +
		"sys.stdout.write(" + strconv.Quote(sep) + ".join(t.toml_dumps(c.variant(base, m)) for m in sys.argv[3:]))"
	out, err := exec.Command(python, append([]string{"-c", prog, dir, config}, methods...)...).Output()
	if err != nil {
		var stderr string
		if e, ok := err.(*exec.ExitError); ok {
			stderr = string(e.Stderr)
		}
		t.Fatalf("evolve_compare variant on %s: %v\n%s", name, err, stderr)
	}
	parts := strings.Split(string(out), sep)
	if len(parts) != len(methods) {
		t.Fatalf("evolve_compare variant on %s: %d configs for %d methods", name, len(parts), len(methods))
	}
	got := map[string][]byte{}
	for i, m := range methods {
		got[m] = []byte(parts[i])
	}
	return got
}

// tomlPython returns a python3 with tomllib (3.11 or later), which the
// comparison scripts need, and skips the test where there is none.
func tomlPython(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if path, err := exec.LookPath(p); err == nil && exec.Command(path, "-c", "import tomllib").Run() == nil {
			return path
		}
	}
	t.Skip("no python3 with tomllib (Python 3.11 or later): python/evolve_compare.py cannot run here")
	return ""
}

// runScriptsPython runs prog with a python3 that has tomllib, with the
// repository's python/ directory first on sys.path (so that prog imports
// the scripts as modules) and args as sys.argv[1:]; it returns the output,
// trimmed, and fails the test where prog fails.
func runScriptsPython(t *testing.T, prog string, args ...string) string {
	t.Helper()
	python := tomlPython(t)
	dir, err := filepath.Abs(filepath.Join("..", "..", "python"))
	if err != nil {
		t.Fatal(err)
	}
	prog = "import sys; sys.path.insert(0, " + strconv.Quote(dir) + ")\n" + prog
	out, err := exec.Command(python, append([]string{"-c", prog}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestCompareVariants holds the comparison script's methods to what its
// help says they are, read back by evolve's own config parser, on every
// shipped config it benchmarks: the shipped configs explore by PB2, so the
// pbt methods must switch back to PBT's perturbation and the population
// variants keep the budget per agent.
func TestCompareVariants(t *testing.T) {
	python := tomlPython(t)
	for _, name := range []string{"cartpole", "acrobot", "lunarlander", "pendulum"} {
		base, err := evo.LoadConfig(filepath.Join("..", "..", "configs", name+".toml"))
		if err != nil {
			t.Fatal(err)
		}
		if base.PBT.Explore != evo.ExplorePB2 || base.Population.Selection != "pbt" {
			t.Fatalf("configs/%s.toml: selection %q explore %q, want the shipped PB2", name, base.Population.Selection, base.PBT.Explore)
		}
		perAgent := base.Population.MaxSteps / base.Population.Size
		methods := []string{"pb2", "pbt", "pbt-sample", "pb2-sample", "fixed", "fixed-sample", "tournament", "pb2-lr0.1", "pbt-lr10", "pb2-pop4", "pbt-x10", "fixed-x0.2", "pb2-lr0.1-x0.2"}
		variants := compareVariants(t, python, name, methods)
		for _, method := range methods {
			cfg, err := evo.ParseConfig(variants[method])
			if err != nil {
				t.Errorf("%s %s: evolve rejects the variant: %v", name, method, err)
				continue
			}
			p, want := cfg.Population, "pbt"
			if strings.HasPrefix(method, "fixed") || method == "tournament" {
				want = ""
			}
			if p.Selection != want || p.Independent != strings.HasPrefix(method, "fixed") {
				t.Errorf("%s %s: selection %q independent %v", name, method, p.Selection, p.Independent)
			}
			// The -sample methods start from draws, the same draws for a seed
			// whether the agents then train apart or under PBT.
			if want := strings.HasSuffix(method, "-sample"); (p.Init == evo.InitSample) != want {
				t.Errorf("%s %s: init %q", name, method, p.Init)
			}
			if (cfg.PBT != nil) != (want != "") {
				t.Errorf("%s %s: [pbt] %v", name, method, cfg.PBT)
			} else if cfg.PBT != nil && (cfg.PBT.Explore == evo.ExplorePB2) != strings.HasPrefix(method, "pb2") {
				t.Errorf("%s %s: explore %q", name, method, cfg.PBT.Explore)
			}
			k := map[string]float64{"pbt-x10": 10, "fixed-x0.2": 0.2, "pb2-lr0.1-x0.2": 0.2}[method]
			if k == 0 {
				k = 1
			}
			if got := p.MaxSteps / p.Size; math.Abs(float64(got)-k*float64(perAgent)) > 1 {
				t.Errorf("%s %s: %d steps per agent, want %g × base %d", name, method, got, k, perAgent)
			}
			if f := map[string]float64{"pb2-lr0.1": 0.1, "pbt-lr10": 10, "pb2-lr0.1-x0.2": 0.1}[method]; f != 0 && math.Abs(cfg.PPO.LR/(f*base.PPO.LR)-1) > 1e-9 {
				t.Errorf("%s %s: lr %g, want %g × %g", name, method, cfg.PPO.LR, f, base.PPO.LR)
			}
		}
	}

	// A config written for the tournament (no [pbt]): the pbt methods select
	// by PBT all the same, or they would be the tournament under their names.
	methods := []string{"pb2", "pbt", "pbt-sample", "tournament"}
	variants := compareVariants(t, python, "mountaincar", methods)
	for _, method := range methods {
		cfg, err := evo.ParseConfig(variants[method])
		if err != nil {
			t.Errorf("mountaincar %s: evolve rejects the variant: %v", method, err)
			continue
		}
		pbt := method != "tournament"
		if (cfg.Population.Selection == "pbt") != pbt || (cfg.PBT != nil) != pbt ||
			(pbt && (cfg.PBT.Explore == evo.ExplorePB2) != (method == "pb2")) {
			t.Errorf("mountaincar %s: selection %q, [pbt] %+v", method, cfg.Population.Selection, cfg.PBT)
		}
	}
}

// TestCompareRefusesBadArgumentsFirst: arguments that cannot give a report
// are refused before anything trains (exit 2, naming the argument).
func TestCompareRefusesBadArgumentsFirst(t *testing.T) {
	python := tomlPython(t)
	script, err := filepath.Abs(filepath.Join("..", "..", "python", "evolve_compare.py"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	notCurves := filepath.Join(dir, "results.csv")
	if err := os.WriteFile(notCurves, []byte("method,run,global_steps_to_anchor\npb2,seed 1,5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-methods", "fixed:0"}, "want N >= 1"},
		{[]string{"-methods", "tpe:1"}, "need -study-budget"},
		{[]string{"-methods", "fixed:1", "-import", filepath.Join(dir, "missing.csv")}, "-import"},
		{[]string{"-methods", "fixed:1", "-import", notCurves}, "not a curves.csv"},
	} {
		out := filepath.Join(dir, "out")
		cmd := exec.Command(python, append([]string{script, "-config", filepath.Join("..", "..", "configs", "cartpole.toml"),
			"-anchor", "500", "-out", out, "-evolve", "/bin/false"}, tc.args...)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %v, stderr %q; want 2 and %q", tc.args, err, stderr.String(), tc.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: the refused comparison made its -out directory", tc.args)
		}
	}
}

// TestCompareRefusesStudiesWithoutOptuna: with tpe or random among the methods and no
// importable optuna, the comparison stops before training anything (its studies run
// last, after hours of evolve runs), exit 2, saying why on stderr.
func TestCompareRefusesStudiesWithoutOptuna(t *testing.T) {
	python := tomlPython(t)
	dir := t.TempDir()
	fake := filepath.Join(dir, "fake", "optuna")
	if err := os.MkdirAll(fake, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fake, "__init__.py"), []byte("raise ImportError('hidden by the test')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "python", "evolve_compare.py"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	cmd := exec.Command(python, script, "-config", filepath.Join("..", "..", "configs", "cartpole.toml"), "-anchor", "500",
		"-out", out, "-methods", "pb2:1,tpe:1")
	cmd.Env = append(os.Environ(), "PYTHONPATH="+filepath.Dir(fake))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(stderr.String(), "optuna is not importable") ||
		!strings.Contains(stderr.String(), "apt-get install python3-optuna") {
		t.Errorf("exit %v, stderr %q; want 2 and a message saying optuna is missing", err, stderr.String())
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the refused comparison made its -out directory")
	}
}

// TestCompareSharedBudget: B is the smallest end of the finished runs on the
// config's budget; where every method has its own budget (pb2-x0.2 and
// fixed-x0.2 alone) it is the smallest end of those, not 0 (a report of
// nothing but -inf scores); studies never set it, nor does a run still going
// unless none has finished.
func TestCompareSharedBudget(t *testing.T) {
	prog := "import evolve_compare as c\n" +
		"run = lambda end: ('seed 1', [(end // 2, -1.0), (end, 0.0)], None)\n" +
		"for r in ({'pb2': [run(900)], 'pb2-x0.2': [run(200)], 'tpe': [run(50)]},\n" +
		"          {'pb2-x0.2': [run(300)], 'fixed-x0.2': [run(250)], 'tpe': [run(50)]},\n" +
		"          {'tpe': [run(50)]},\n" +
		"          {'fixed': [run(900), ('seed 2 (unfinished)', [(120, -1.0)], None)]},\n" +
		"          {'fixed': [('seed 1 (unfinished)', [(120, -1.0)], None), ('seed 2 (unfinished)', [(300, -1.0)], None)]}):\n" +
		"    print(c.shared_budget(r)[0])\n"
	if got := strings.Fields(runScriptsPython(t, prog)); strings.Join(got, " ") != "900 250 0 900 300" {
		t.Errorf("B = %v, want 900 (the config's budget), 250 (own budgets only), 0 (no evolve run), "+
			"900 (not an unfinished run's 120), 300 (the furthest while none has finished)", got)
	}
}

// TestCompareReportsOnlyWhatItRan: -report-only that finds no run of its
// methods leaves the report in -out as it is (exit 2); a run directory
// written for another config is refused, not reported under this one's
// name; a torn last line of metrics.csv (a crash mid-write) is left out, not
// read as a score.
func TestCompareReportsOnlyWhatItRan(t *testing.T) {
	python := tomlPython(t)
	pydir, err := filepath.Abs(filepath.Join("..", "..", "python"))
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(pydir, "evolve_compare.py")
	config := filepath.Join("..", "..", "configs", "cartpole.toml")
	out := t.TempDir()
	report := filepath.Join(out, "REPORT.md")
	if err := os.WriteFile(report, []byte("an earlier report\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(out, "pb2", "seed-1", "run"), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (int, string) {
		cmd := exec.Command(python, append([]string{script, "-config", config, "-anchor", "500", "-out", out}, args...)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode(), stderr.String()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0, stderr.String()
	}
	if code, msg := run("-methods", "fixed:1", "-report-only"); code != 2 || !strings.Contains(msg, "holds no run of fixed") {
		t.Errorf("-report-only without runs: exit %d, %q; want 2 and a message", code, msg)
	}
	if b, _ := os.ReadFile(report); string(b) != "an earlier report\n" {
		t.Errorf("REPORT.md replaced by %q", b)
	}
	// pb2/seed-1 as an earlier invocation with another config left it.
	if err := os.WriteFile(filepath.Join(out, "pb2", "seed-1", "config.toml"), []byte("seed = 1\n[ppo]\nlr = 0.001\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, msg := run("-methods", "pb2:1", "-report-only"); code != 2 || !strings.Contains(msg, "holds a run of another config") {
		t.Errorf("a run of another config: exit %d, %q; want 2 and a message", code, msg)
	}

	metrics := filepath.Join(out, "metrics.csv")
	text := "generation,agent,global_steps,elite_fitness\n1,0,1000,120.5\n2,0,2000,497.6\n3,0,3000,49"
	if err := os.WriteFile(metrics, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	got := runScriptsPython(t, "import evolve_compare as c; print(c.evolve_curve(sys.argv[1]))", metrics)
	if want := "[(1000, 120.5), (2000, 497.6)]"; got != want {
		t.Errorf("curve of a torn metrics.csv = %s, want %s", got, want)
	}
}

// TestCompareImportJoinsSeeds: -import adds a method not run now whole,
// and to a method run now its finished seeds within the method's count
// (seeds 1-2 of pb2:3 here: seed 3 is trained, 4 is beyond the count, 5 is
// unfinished), in seed order; a seed whose run is in -out too is refused,
// since which of the two to report would be a guess.
func TestCompareImportJoinsSeeds(t *testing.T) {
	dir := t.TempDir()
	curves := filepath.Join(dir, "curves.csv")
	text := "method,run,global_steps,best_confirmed\n"
	for _, r := range []string{"pb2,seed 1", "pb2,seed 2", "pb2,seed 4", "pb2,seed 5 (unfinished)", "fixed,seed 1", "tpe,study 1"} {
		text += r + ",1000,10.0\n"
	}
	if err := os.WriteFile(curves, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	config, err := filepath.Abs(filepath.Join("..", "..", "configs", "cartpole.toml"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	prog := "import evolve_compare as c\n" +
		"a = c.parse_args(['-config', sys.argv[1], '-anchor', '500', '-out', sys.argv[2], '-methods', 'pb2:3,tpe', '-import', sys.argv[3], '-report-only'])\n" +
		"seeds = c.imported_seeds(a)\n" +
		"results = {'pb2': [('seed 3', [(1, 0.0)], None)]}\n" +
		"whole, joined = c.join_imported(results, a.imported_runs, a.methods, seeds)\n" +
		"print(sorted(seeds['pb2']), whole, joined, {m: [l for l, _, _ in r] for m, r in results.items()})\n"
	want := "[1, 2] ['fixed'] {'pb2': ['seed 1', 'seed 2']} {'pb2': ['seed 1', 'seed 2', 'seed 3'], 'fixed': ['seed 1']}"
	if got := runScriptsPython(t, prog, config, out, curves); got != want {
		t.Errorf("-import into pb2:3:\n got %s\nwant %s", got, want)
	}
	if err := os.MkdirAll(filepath.Join(out, "pb2", "seed-2"), 0o755); err != nil {
		t.Fatal(err)
	}
	prog = "import evolve_compare as c\n" +
		"a = c.parse_args(['-config', sys.argv[1], '-anchor', '500', '-out', sys.argv[2], '-methods', 'pb2:3', '-import', sys.argv[3]])\n" +
		"try:\n    c.imported_seeds(a)\nexcept c.BadInput as e:\n    print(e)\n"
	if got := runScriptsPython(t, prog, config, out, curves); !strings.Contains(got, "has pb2's seed 2, and "+filepath.Join(out, "pb2", "seed-2")+" holds a run of it too") {
		t.Errorf("a seed both imported and in -out: %q", got)
	}
}

// TestCompareStopStopsItsRuns: SIGTERM to the comparison stops the evolve
// run it is waiting for (SIGTERM, as evolve takes it) and ends the script
// with a message, instead of leaving the run to train on alone, holding its
// run directory against the rerun.
func TestCompareStopStopsItsRuns(t *testing.T) {
	python := tomlPython(t)
	dir := t.TempDir()
	mark := filepath.Join(dir, "stopped")
	fake := filepath.Join(dir, "evolve")
	script := "#!/bin/sh\ntrap 'echo TERM > " + mark + "; kill $!; exit 143' TERM\nsleep 60 &\nwait\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	compare, err := filepath.Abs(filepath.Join("..", "..", "python", "evolve_compare.py"))
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join("..", "..", "configs", "cartpole.toml")
	cmd := exec.Command(python, compare, "-config", config, "-anchor", "500", "-out", filepath.Join(dir, "out"),
		"-methods", "fixed:1", "-evolve", fake)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	started := filepath.Join(dir, "out", "fixed", "seed-1", "evolve.log")
	for i := 0; i < 100; i++ { // until the fake run has started
		if _, err := os.Stat(started); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("the comparison did not end 20 s after SIGTERM; stderr:\n%s", stderr.String())
	}
	if b, err := os.ReadFile(mark); err != nil || strings.TrimSpace(string(b)) != "TERM" {
		t.Errorf("the run was not sent SIGTERM (%v); stderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "stopped, and its runs and studies with it") {
		t.Errorf("no message of the stop; stderr:\n%s", stderr.String())
	}
}

// TestCompareReportSaysWhereImportedSchedulesAre: a report whose evolve
// runs are all imported has no lr or schedule of its own to list; its two
// sections say so and name the report that has them, instead of standing
// empty under their headings.
func TestCompareReportSaysWhereImportedSchedulesAre(t *testing.T) {
	python := tomlPython(t)
	script, err := filepath.Abs(filepath.Join("..", "..", "python", "evolve_compare.py"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	curves := filepath.Join(dir, "curves.csv")
	text := "method,run,global_steps,best_confirmed\npb2,seed 1,1000,120.0\npb2,seed 1,2000,500.0\n"
	if err := os.WriteFile(curves, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join("..", "..", "configs", "cartpole.toml")
	cmd := exec.Command(python, script, "-config", config, "-anchor", "500", "-out", out,
		"-methods", "pb2:1", "-import", curves, "-report-only")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, msg)
	}
	b, err := os.ReadFile(filepath.Join(out, "REPORT.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, section := range []string{"## Where the learning rate went", "## The winning agents' schedules"} {
		_, rest, ok := strings.Cut(string(b), section)
		if !ok {
			t.Fatalf("REPORT.md lacks %q:\n%s", section, b)
		}
		if !strings.Contains(rest, "None here: pb2 was imported; the report beside "+curves+" lists theirs") {
			t.Errorf("%s does not say where the imported runs' are:\n%s", section, rest)
		}
	}
}

// TestCompareResumesAStoppedStudy: a study directory whose summary.json
// says it stopped before its end goes on with evolve_tune.py -resume (its
// log kept and added to); one that never wrote a summary starts over; a
// finished one is reused as it is.
func TestCompareResumesAStoppedStudy(t *testing.T) {
	dir := t.TempDir()
	prog := "import evolve_compare as c, json, os, types\n" +
		"sys.stderr = open(os.devnull, 'w')  # the lines naming each command\n" +
		"calls = []\n" +
		"def child(cmd, stdout, stderr):\n" +
		"    calls.append(cmd)\n" +
		"    stdout.write('second session\\n')\n" +
		"    return 0\n" +
		"c.run_child = child\n" +
		"args = types.SimpleNamespace(report_only=False, config='base.toml', anchor=500.0, space='ppo', confirm_margin=1.0)\n" +
		"for name, reason in (('stopped', 'interrupted'), ('never', None), ('done', 'budget')):\n" +
		"    sdir = os.path.join(sys.argv[1], name)\n" +
		"    os.makedirs(sdir)\n" +
		"    with open(os.path.join(sdir, 'curve.csv'), 'w') as f:\n" +
		"        f.write('cumulative_global_steps,best_confirmed_so_far\\n100,12.5\\n')\n" +
		"    if reason:\n" +
		"        with open(os.path.join(sdir, 'summary.json'), 'w') as f:\n" +
		"            json.dump({'stop_reason': reason}, f)\n" +
		"    with open(sdir + '.log', 'w') as f:\n" +
		"        f.write('first session\\n')\n" +
		"    if name == 'never':\n" +
		"        os.remove(os.path.join(sdir, 'curve.csv'))\n" +
		"        child = c.run_child\n" +
		"        def writes(cmd, stdout, stderr, sdir=sdir):\n" +
		"            os.makedirs(sdir, exist_ok=True)\n" +
		"            with open(os.path.join(sdir, 'curve.csv'), 'w') as f:\n" +
		"                f.write('cumulative_global_steps,best_confirmed_so_far\\n100,12.5\\n')\n" +
		"            with open(os.path.join(sdir, 'summary.json'), 'w') as f:\n" +
		"                json.dump({'stop_reason': 'budget'}, f)\n" +
		"            return child(cmd, stdout, stderr)\n" +
		"        c.run_child = writes\n" +
		"    n = len(calls)\n" +
		"    c.run_study(args, '/bin/evolve', sdir, 'tpe', 1, 1000, 0)\n" +
		"    c.run_child = child\n" +
		"    ran = calls[n:]\n" +
		"    print(name, len(ran), ran and '-resume' in ran[0], open(sdir + '.log').read().split('\\n')[:2])\n"
	got := runScriptsPython(t, prog, dir)
	want := "stopped 1 True ['first session', 'second session']\n" +
		"never 1 False ['second session', '']\n" +
		"done 0 [] ['first session', '']"
	if got != want {
		t.Errorf("run_study:\n got %s\nwant %s", got, want)
	}
}

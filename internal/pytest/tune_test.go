package pytest

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evolverl/evolve/internal/runtest"
)

// The tests of python/evolve_tune.py, the Optuna driver that tunes a single
// PPO agent as rl-baselines3-zoo's tuner does: tiny CartPole studies of a
// few seconds against an evolve built for the test.

// tuneBase is the base config of the studies: its [env] and [ppo], and a
// budget of 16384 / 4 = 4096 steps per agent (the trials' default).
const tuneBase = `
seed = 1
out_dir = "unused"

[env]
id = "CartPole-v1"
num_envs = 4
eval_episodes = 10

[population]
size = 4
max_steps = 16_384
evo_steps = 4096

[ppo]
lr = 1e-3
batch_size = 128
learn_step = 512

[net]
encoder = "mlp"
[net.mlp]
hidden = [64]

[mutation]
rl_hp = 0.5

[hp.lr]
min = 1e-4
max = 3e-3

[checkpoint]
keep = 1
`

// optunaPython returns an interpreter that imports optuna (python3, then
// /usr/bin/python3, where Debian's python3-optuna is), or skips the test.
func optunaPython(t *testing.T) string {
	t.Helper()
	var tried []string
	for _, python := range []string{"python3", "/usr/bin/python3"} {
		path, err := exec.LookPath(python)
		if err != nil {
			continue
		}
		if exec.Command(path, "-c", "import optuna").Run() == nil {
			return path
		}
		tried = append(tried, path)
	}
	if len(tried) == 0 {
		tried = []string{"no python3 found"}
	}
	t.Skipf("no Python that imports optuna (tried %s): apt-get install python3-optuna to test python/evolve_tune.py",
		strings.Join(tried, ", "))
	return ""
}

// tuneEnv is what every study of the test shares: the interpreter, the
// script, the evolve binary and the base config.
type tuneEnv struct {
	python, script, evolve, base string
}

func newTuneEnv(t *testing.T) tuneEnv {
	t.Helper()
	python := optunaPython(t)
	script, err := filepath.Abs(filepath.Join("..", "..", "python", "evolve_tune.py"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not on PATH: cannot build evolve for the driver")
	}
	dir := t.TempDir()
	evolve := filepath.Join(dir, "evolve")
	if out, err := exec.Command("go", "build", "-o", evolve, "github.com/evolverl/evolve/cmd/evolve").CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/evolve: %v\n%s", err, out)
	}
	base := filepath.Join(dir, "base.toml")
	if err := os.WriteFile(base, []byte(tuneBase), 0o644); err != nil {
		t.Fatal(err)
	}
	return tuneEnv{python, script, evolve, base}
}

// run runs the driver with args under python and returns its stdout,
// stderr and exit status; env is added to the environment.
func (e tuneEnv) run(t *testing.T, python string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(python, append([]string{e.script}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return stdout.String(), stderr.String(), 0
	case errors.As(err, &exit):
		return stdout.String(), stderr.String(), exit.ExitCode()
	}
	t.Fatalf("%s %s: %v", python, e.script, err)
	return "", "", 0
}

// study runs a study that must succeed and returns its stdout.
func (e tuneEnv) study(t *testing.T, out string, args ...string) string {
	t.Helper()
	all := append([]string{"-config", e.base, "-out", out, "-confirm-episodes", "5"}, args...)
	stdout, stderr, code := e.run(t, e.python, nil, all...)
	if code != 0 {
		t.Fatalf("evolve_tune.py %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(all, " "), code, stdout, stderr)
	}
	return stdout
}

// readCSV returns the rows of a CSV file as maps by column name, and the
// header.
func readCSV(t *testing.T, path string) ([]map[string]string, []string) { return runtest.CSV(t, path) }

// trialDir is the directory of the trial numbered n (as trials.csv writes
// it) in the study out.
func trialDir(out, n string) string {
	return filepath.Join(out, "trial-"+strings.Repeat("0", max(0, 4-len(n)))+n)
}

func atoi(t *testing.T, what, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%s = %q: not an integer", what, s)
	}
	return n
}

func atof(t *testing.T, what, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%s = %q: not a number", what, s)
	}
	return f
}

// checkStudy checks the files of the study in out, of n trials (0: any
// number), against each other and against the trials' metrics.csv, and
// returns trials.csv's rows and summary.json.
func checkStudy(t *testing.T, out string, n int, anchor float64) ([]map[string]string, map[string]any) {
	t.Helper()
	rows, header := readCSV(t, filepath.Join(out, "trials.csv"))
	if n > 0 && len(rows) != n {
		t.Fatalf("trials.csv: %d rows, want %d", len(rows), n)
	}
	for _, col := range []string{"learning_rate", "n_steps_pow", "batch_size_pow", "net_arch", "activation_fn",
		"learn_step", "training_steps", "eval_steps", "confirm_steps", "trial_global_steps", "cumulative_global_steps",
		"last_fitness", "confirmed_score"} {
		if !strings.Contains(","+strings.Join(header, ",")+",", ","+col+",") {
			t.Errorf("trials.csv: no column %s in %v", col, header)
		}
	}
	var curve [][2]float64
	cumulative, best, anchorSteps := 0, math.Inf(-1), -1
	bar := math.Inf(-1) // -confirm best: the last fitness of the best confirmed trial
	margin := 0.0       // -confirm-margin (summary.json records it)
	if b, err := os.ReadFile(filepath.Join(out, "summary.json")); err == nil {
		var head struct {
			ConfirmMargin float64 `json:"confirm_margin"`
		}
		if json.Unmarshal(b, &head) == nil {
			margin = head.ConfirmMargin
		}
	}
	for i, r := range rows {
		name := "trials.csv row " + strconv.Itoa(i+1)
		if got := atoi(t, name+" trial", r["trial"]); got != i {
			t.Errorf("%s: trial %d, want %d", name, got, i)
		}
		tdir := trialDir(out, r["trial"])
		cfg, err := os.ReadFile(filepath.Join(tdir, "config.toml"))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"independent = true", "size = 1", "target = inf", "elite_episodes = 0"} {
			if !bytes.Contains(cfg, []byte(want)) {
				t.Errorf("%s/config.toml: no %q:\n%s", tdir, want, cfg)
			}
		}
		if bytes.Contains(cfg, []byte("[hp.")) || bytes.Contains(cfg, []byte("[mutation]")) {
			t.Errorf("%s/config.toml: [hp.*] or [mutation] kept:\n%s", tdir, cfg)
		}
		global := atoi(t, name+" trial_global_steps", r["trial_global_steps"])
		confirmSteps := atoi(t, name+" confirm_steps", r["confirm_steps"])
		gens := atoi(t, name+" generations", r["generations"])
		cumulative += global
		if got := atoi(t, name+" cumulative_global_steps", r["cumulative_global_steps"]); got != cumulative {
			t.Errorf("%s: cumulative_global_steps %d, want the running sum %d", name, got, cumulative)
		}
		if global <= 0 {
			t.Errorf("%s: trial_global_steps %d, want > 0 (cumulative steps must increase)", name, global)
		}
		// The run's row of the last generation counted: its steps plus
		// the confirmation's are the trial's.
		metrics, mh := readCSV(t, filepath.Join(tdir, "run", "metrics.csv"))
		if gens < 1 || gens > len(metrics) {
			t.Fatalf("%s: generations %d, but %s/run/metrics.csv has %d rows", name, gens, tdir, len(metrics))
		}
		last := metrics[gens-1]
		runSteps, basis := atoi(t, "total_steps", last["total_steps"]), "training+confirm"
		if strings.Contains(strings.Join(mh, ","), "global_steps") {
			runSteps, basis = atoi(t, "global_steps", last["global_steps"]), "global_steps"
		}
		if global != runSteps+confirmSteps || r["steps_basis"] != basis {
			t.Errorf("%s: trial_global_steps %d (%s), want the run's %d + confirmation's %d (%s)",
				name, global, r["steps_basis"], runSteps, confirmSteps, basis)
		}
		if r["training_steps"] != last["total_steps"] || r["last_fitness"] == "" ||
			atof(t, "last_fitness", r["last_fitness"]) != atof(t, "fitness", last["fitness"]) {
			t.Errorf("%s: training_steps %s, last_fitness %s; want generation %d's %s, %s",
				name, r["training_steps"], r["last_fitness"], gens, last["total_steps"], last["fitness"])
		}
		switch r["state"] {
		case "pruned":
			if r["confirmed_score"] != "" || confirmSteps != 0 || r["note"] == "" {
				t.Errorf("%s: pruned, with confirmed_score %q, confirm_steps %d, note %q; want none, 0 and why",
					name, r["confirmed_score"], confirmSteps, r["note"])
			}
			if _, err := os.Stat(filepath.Join(tdir, "play.log")); err == nil {
				t.Errorf("%s: a pruned trial was confirmed", name)
			}
		case "complete":
			if gens != len(metrics) {
				t.Errorf("%s: complete after generation %d of %d", name, gens, len(metrics))
			}
			fitness := atof(t, "last_fitness", r["last_fitness"])
			se := 0.0
			if margin > 0 {
				se = lastStdErr(t, tdir)
			}
			if fitness+margin*se < bar {
				// Not confirmed: it cannot beat the best confirmed trial.
				if r["confirmed_score"] != "" || confirmSteps != 0 || !strings.HasPrefix(r["note"], "not confirmed") {
					t.Errorf("%s: fitness %v below the bar %v, but confirmed_score %q, confirm_steps %d, note %q",
						name, fitness, bar, r["confirmed_score"], confirmSteps, r["note"])
				}
				break
			}
			score := atof(t, name+" confirmed_score", r["confirmed_score"])
			if confirmSteps < 5*8 { // 5 CartPole episodes last 8 steps or more
				t.Errorf("%s: confirm_steps %d for 5 episodes", name, confirmSteps)
			}
			if score > best {
				best, bar = score, fitness
			}
			if anchorSteps < 0 && score >= anchor {
				anchorSteps = cumulative
			}
		default:
			t.Errorf("%s: state %q", name, r["state"])
		}
		curve = append(curve, [2]float64{float64(cumulative), best})
	}
	crows, _ := readCSV(t, filepath.Join(out, "curve.csv"))
	if len(crows) != len(curve) {
		t.Errorf("curve.csv: %d rows, want one per trial, %d", len(crows), len(curve))
	} else {
		for i, c := range crows {
			b := math.Inf(-1) // no trial confirmed yet
			if c["best_confirmed_so_far"] != "" {
				b = atof(t, "best_confirmed_so_far", c["best_confirmed_so_far"])
			}
			got := [2]float64{atof(t, "cumulative_global_steps", c["cumulative_global_steps"]), b}
			if got != curve[i] {
				t.Errorf("curve.csv row %d: %v, want %v", i+1, got, curve[i])
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum map[string]any
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatalf("summary.json: %v", err)
	}
	if got := sum["total_global_steps"]; got != float64(cumulative) {
		t.Errorf("summary.json: total_global_steps %v, want %d", got, cumulative)
	}
	if got := sum["trials"]; got != float64(len(rows)) {
		t.Errorf("summary.json: trials %v, want %d", got, len(rows))
	}
	if got := sum["anchor"]; got != anchor {
		t.Errorf("summary.json: anchor %v, want %v", got, anchor)
	}
	wantAnchor := any(nil)
	if anchorSteps >= 0 {
		wantAnchor = float64(anchorSteps)
	}
	if got := sum["steps_to_anchor"]; got != wantAnchor {
		t.Errorf("summary.json: steps_to_anchor %v, want %v", got, wantAnchor)
	}
	if !math.IsInf(best, -1) {
		params, _ := sum["best_params"].(map[string]any)
		if got := sum["best_confirmed_score"]; got != best || params["learning_rate"] == nil {
			t.Errorf("summary.json: best_confirmed_score %v with params %v, want %v and its trial's params", got, params, best)
		}
	}
	return rows, sum
}

// TestTune runs three tiny studies against one evolve built for the test:
// TPE with pruning (twice: the same study), random stopped by its budget
// (with the evolve the driver builds), and the ppo_lstm space.
func TestTune(t *testing.T) {
	e := newTuneEnv(t)
	t.Run("study", func(t *testing.T) { tuneStudy(t, e) })
	t.Run("budget", func(t *testing.T) { tuneBudget(t, e) })
	t.Run("lstm", func(t *testing.T) { tuneLSTM(t, e) })
	t.Run("cnn", func(t *testing.T) { tuneCNN(t, e) })
	t.Run("margin", func(t *testing.T) { tuneMargin(t, e) })
	t.Run("resume", func(t *testing.T) { tuneResume(t, e) })
}

// tuneResume stops studies and goes on with -resume: a study's trials.csv,
// curve.csv and summary.json then end byte for byte as those of the same
// study run without a stop (the trials before the stop are replayed into
// the new sampler and pruner; the trial it stopped in goes on from its
// run's checkpoint). Stopped by SIGTERM in its fifth trial with the median
// pruner, in its third with successive halving (which keeps state on a
// trial only when asked whether to prune it), and killed (SIGKILL, with its
// evolve) in its first trial. A -resume with other settings, of a directory
// without a study, or of a trials.csv its trials' files do not bear out, is
// refused.
func tuneResume(t *testing.T, e tuneEnv) {
	dir := t.TempDir()
	args := []string{"-sampler", "tpe", "-seed", "2", "-budget", "1_000_000", "-anchor", "200", "-trials", "6",
		"-trial-steps", "4096", "-evaluations", "4", "-startup-trials", "1", "-evolve", e.evolve, "-confirm-episodes", "5"}
	for _, tc := range []struct {
		name  string
		extra []string
		trial string
		sig   syscall.Signal
	}{
		{"median", nil, "4", syscall.SIGTERM},
		{"halving", []string{"-pruner", "halving"}, "2", syscall.SIGTERM},
		{"killed", nil, "0", syscall.SIGKILL},
	} {
		a := append(slices.Clone(args), tc.extra...)
		whole := filepath.Join(dir, tc.name+"-whole")
		e.study(t, whole, a...)
		out := filepath.Join(dir, tc.name)
		stopInTrial(t, e, out, a, tc.trial, tc.sig)
		e.study(t, out, append(a, "-resume")...)
		for _, f := range []string{"trials.csv", "curve.csv", "summary.json"} {
			x, _ := os.ReadFile(filepath.Join(whole, f))
			y, _ := os.ReadFile(filepath.Join(out, f))
			if !bytes.Equal(x, y) {
				t.Errorf("%s: %s of the resumed study differs from the study run whole:\n%s\n---\n%s", tc.name, f, y, x)
			}
		}
	}

	out := filepath.Join(dir, "median")
	refused := func(what, want string, args ...string) {
		t.Helper()
		if _, stderr, code := e.run(t, e.python, nil, append([]string{"-config", e.base}, args...)...); code != 2 ||
			!strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", what, code, stderr, want)
		}
	}
	other := append(slicesWithout(args, "-seed", "2"), "-seed", "3", "-resume", "-out", out)
	refused("-resume with another seed", "ran with other settings (seed 2 then, 3 now)", other...)
	refused("-resume without a study", "holds no study", append(args, "-resume", "-out", filepath.Join(dir, "empty"))...)
	trials := filepath.Join(out, "trials.csv")
	b, err := os.ReadFile(trials)
	if err != nil {
		t.Fatal(err)
	}
	rows, header := readCSV(t, trials)
	col := slices.Index(header, "confirmed_score")
	lines := strings.Split(string(b), "\n")
	fields := strings.Split(lines[1], ",")
	if rows[0]["confirmed_score"] == "" || len(fields) != len(header) {
		t.Fatalf("trial 0 was not confirmed, or its row has commas in a field: %q", lines[1])
	}
	fields[col] = "499.0"
	lines[1] = strings.Join(fields, ",")
	if err := os.WriteFile(trials, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	refused("-resume of an edited confirmed_score", "line 2: confirmed_score 499.0, where "+trialDir(out, "0")+"/play.log has",
		append(args, "-resume", "-out", out)...)

	// Without -evolve a resumed study runs the evolve in its directory, the
	// one its trials ran with (the driver builds it there when it starts a
	// study without -evolve), instead of building another.
	own := filepath.Join(dir, "own")
	stopInTrial(t, e, own, args, "2", syscall.SIGTERM)
	mark := filepath.Join(dir, "own-ran")
	wrapper := "#!/bin/sh\necho ran >> " + mark + "\nexec " + e.evolve + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(own, "evolve"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	e.study(t, own, append(slicesWithout(args, "-evolve", e.evolve), "-resume")...)
	if _, err := os.Stat(mark); err != nil {
		t.Errorf("-resume without -evolve did not run the study's own evolve: %v", err)
	}
	x, _ := os.ReadFile(filepath.Join(dir, "median-whole", "trials.csv"))
	if y, _ := os.ReadFile(filepath.Join(own, "trials.csv")); !bytes.Equal(x, y) {
		t.Errorf("trials.csv of the study resumed with its own evolve differs from the study run whole")
	}
}

// stopInTrial starts a study in out and stops it with sig once the run of
// its trial numbered trial has written a checkpoint: SIGTERM to the driver
// alone (which stops its evolve), SIGKILL to both.
func stopInTrial(t *testing.T, e tuneEnv, out string, args []string, trial string, sig syscall.Signal) {
	t.Helper()
	cmd := exec.Command(e.python, append([]string{e.script, "-config", e.base, "-out", out}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	latest := filepath.Join(trialDir(out, trial), "run", "checkpoints", "latest")
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if _, err := os.Stat(latest); err == nil {
			break
		}
		if time.Now().After(deadline) {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
			t.Fatalf("trial %s wrote no checkpoint in 2 minutes", trial)
		}
		time.Sleep(2 * time.Millisecond)
	}
	pid := cmd.Process.Pid
	if sig == syscall.SIGKILL {
		pid = -pid // the process group: the driver and its evolve
	}
	if err := syscall.Kill(pid, sig); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || (sig == syscall.SIGTERM && exit.ExitCode() != 130) {
		t.Fatalf("stopped study: %v, want exit 130 or a kill", err)
	}
	n, _ := strconv.Atoi(trial)
	if rows, _ := readCSV(t, filepath.Join(out, "trials.csv")); len(rows) != n {
		t.Fatalf("the study stopped with %d trials written, want %d (stopped in trial %s)", len(rows), n, trial)
	}
}

// slicesWithout returns args without the flag and value pair given.
func slicesWithout(args []string, flag, value string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if args[i] == flag && i+1 < len(args) && args[i+1] == value {
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// tuneMargin runs a study with -confirm-margin 1 (checkStudy holds each
// completed trial to the rule: confirmed exactly when its last fitness plus
// one standard error of its last evaluation's episodes reaches the last
// fitness of the best confirmed trial before it); seed 1 has a trial that
// only the margin lets through.
func tuneMargin(t *testing.T, e tuneEnv) {
	out := filepath.Join(t.TempDir(), "study")
	e.study(t, out, "-sampler", "random", "-seed", "1", "-budget", "1_000_000", "-anchor", "500", "-trials", "8",
		"-trial-steps", "2048", "-evaluations", "2", "-confirm-margin", "1", "-evolve", e.evolve)
	rows, sum := checkStudy(t, out, 8, 500)
	if sum["confirm_margin"] != 1.0 {
		t.Errorf("summary.json: confirm_margin %v, want 1", sum["confirm_margin"])
	}
	bar, best, widened := math.Inf(-1), math.Inf(-1), 0
	for _, r := range rows {
		if r["state"] != "complete" || r["confirmed_score"] == "" {
			continue
		}
		fit := atof(t, "last_fitness", r["last_fitness"])
		if fit < bar {
			widened++
		}
		if score := atof(t, "confirmed_score", r["confirmed_score"]); score > best {
			best, bar = score, fit
		}
	}
	if widened == 0 {
		t.Error("no trial was confirmed by the margin alone: the study no longer covers the rule (pick another -seed)")
	}
}

// lastStdErr is the standard error of the mean of the returns in the newest
// checkpoint of the trial's run.
func lastStdErr(t *testing.T, dir string) float64 {
	ckpt := filepath.Join(dir, "run", "checkpoints")
	name, err := os.ReadFile(filepath.Join(ckpt, "latest"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(ckpt, strings.TrimSpace(string(name)), "population.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pop struct {
		Members []struct {
			Returns []float64 `json:"returns"`
		} `json:"members"`
	}
	if err := json.Unmarshal(b, &pop); err != nil || len(pop.Members) != 1 {
		t.Fatalf("population.json: %v, %d members", err, len(pop.Members))
	}
	x := pop.Members[0].Returns
	if len(x) < 2 {
		return 0
	}
	m := 0.0
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	v := 0.0
	for _, e := range x {
		v += (e - m) * (e - m)
	}
	return math.Sqrt(v / float64(len(x)-1) / float64(len(x)))
}

// tuneStudy runs a TPE study that prunes trials, and checks that it is
// reproducible.
func tuneStudy(t *testing.T, e tuneEnv) {
	dir := t.TempDir()
	args := []string{"-sampler", "tpe", "-seed", "2", "-budget", "1_000_000", "-anchor", "200", "-trials", "6",
		"-trial-steps", "4096", "-evaluations", "4", "-startup-trials", "1", "-evolve", e.evolve}
	out := filepath.Join(dir, "a")
	stdout := e.study(t, out, args...)
	rows, sum := checkStudy(t, out, 6, 200)
	states := map[string]int{}
	for _, r := range rows {
		states[r["state"]]++
	}
	// Seed 2 prunes some trials and completes others; MedianPruner
	// compares with the completed ones from the second trial on
	// (-startup-trials 1) at each of the 4 evaluations.
	if states["pruned"] == 0 || states["complete"] == 0 {
		t.Errorf("states %v: want pruned and completed trials (if evolve's numbers changed, pick another -seed)", states)
	}
	for k, want := range map[string]any{"sampler": "tpe", "seed": 2.0, "budget": 1e6, "stop_reason": "trials",
		"evaluations": 4.0, "n_warmup_steps": 1.0, "startup_trials": 1.0} {
		if sum[k] != want {
			t.Errorf("summary.json: %s = %v, want %v", k, sum[k], want)
		}
	}
	n := 0
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(line, "trial ") {
			n++
		}
	}
	if n != 6 {
		t.Errorf("stdout: %d trial lines, want 6:\n%s", n, stdout)
	}

	// The same arguments give the same study.
	again := filepath.Join(dir, "b")
	e.study(t, again, args...)
	for _, f := range []string{"trials.csv", "curve.csv", "summary.json"} {
		x, _ := os.ReadFile(filepath.Join(out, f))
		y, _ := os.ReadFile(filepath.Join(again, f))
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs of the same study:\n%s\n---\n%s", f, x, y)
		}
	}

	// A study's directory is not reused.
	if _, stderr, code := e.run(t, e.python, nil, append([]string{"-config", e.base, "-out", out}, args...)...); code != 2 ||
		!strings.Contains(stderr, "already holds a study") {
		t.Errorf("reusing -out: exit %d, stderr %q; want 2 and why", code, stderr)
	}
}

// tuneBudget stops a random-sampler study on its budget, with evolve built
// by the driver itself.
func tuneBudget(t *testing.T, e tuneEnv) {
	out := filepath.Join(t.TempDir(), "study")
	const budget = 10_000
	e.study(t, out, "-sampler", "random", "-seed", "2", "-budget", strconv.Itoa(budget), "-anchor", "475",
		"-trials", "50", "-evaluations", "2")
	rows, sum := checkStudy(t, out, 0, 475)
	if sum["stop_reason"] != "budget" || sum["sampler"] != "random" {
		t.Errorf("summary.json: stop_reason %v, sampler %v; want budget, random", sum["stop_reason"], sum["sampler"])
	}
	before := 0
	for i, r := range rows {
		if before >= budget {
			t.Errorf("trial %d began with %d steps spent of a budget of %d", i, before, budget)
		}
		if got, want := atoi(t, "max_steps", r["max_steps"]), min(4096, budget-before); got != want {
			t.Errorf("trial %d: max_steps %d, want min(trial steps, budget left) = %d", i, got, want)
		}
		before = atoi(t, "cumulative_global_steps", r["cumulative_global_steps"])
	}
	if before < budget {
		t.Errorf("stopped by the budget at %d steps of %d", before, budget)
	}
	if _, err := os.Stat(filepath.Join(out, "evolve")); err != nil {
		t.Errorf("the driver's own evolve: %v", err)
	}
}

// tuneLSTM runs the ppo_lstm space: the LSTM's size is sampled and takes
// the MLP encoder's place.
func tuneLSTM(t *testing.T, e tuneEnv) {
	dir := t.TempDir()
	base := strings.NewReplacer(`"CartPole-v1"`, `"CartPoleNoVel-v1"`, "num_envs = 4", "num_envs = 1").Replace(tuneBase)
	e.base = filepath.Join(dir, "lstm.toml")
	if err := os.WriteFile(e.base, []byte(base), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "study")
	e.study(t, out, "-sampler", "random", "-seed", "2", "-budget", "1_000_000", "-anchor", "200", "-trials", "2",
		"-trial-steps", "1024", "-evaluations", "2", "-space", "ppo_lstm", "-evolve", e.evolve)
	rows, _ := checkStudy(t, out, 2, 200)
	for _, r := range rows {
		h := r["lstm_hidden_size"]
		cfg, err := os.ReadFile(filepath.Join(trialDir(out, r["trial"]), "config.toml"))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{`encoder = "lstm"`, "[net.lstm]\nhidden = " + h + "\n"} {
			if h == "" || !bytes.Contains(cfg, []byte(want)) || bytes.Contains(cfg, []byte("[net.mlp]")) {
				t.Errorf("trial %s (lstm_hidden_size %q): want %q and no [net.mlp] in\n%s", r["trial"], h, want, cfg)
			}
		}
	}
}

// tuneCNN runs a base with a CNN encoder (MinAtar's images): the trials
// keep its [net.cnn] and the zoo's net_arch becomes the latent and the
// head, as its net_arch follows its CNN features extractor.
func tuneCNN(t *testing.T, e tuneEnv) {
	dir := t.TempDir()
	base := strings.NewReplacer(`"CartPole-v1"`, `"MinAtar/Breakout-v1"`, "num_envs = 4", "num_envs = 1",
		"encoder = \"mlp\"\n[net.mlp]\nhidden = [64]\n",
		"encoder = \"cnn\"\n[net.cnn]\nchannels = [16]\nkernels = [3]\nstrides = [1]\n").Replace(tuneBase)
	e.base = filepath.Join(dir, "cnn.toml")
	if err := os.WriteFile(e.base, []byte(base), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "study")
	e.study(t, out, "-sampler", "random", "-seed", "3", "-budget", "1_000_000", "-anchor", "50", "-trials", "3",
		"-trial-steps", "512", "-evaluations", "1", "-evolve", e.evolve)
	rows, _ := checkStudy(t, out, 3, 50)
	for _, r := range rows {
		cfg, err := os.ReadFile(filepath.Join(trialDir(out, r["trial"]), "config.toml"))
		if err != nil {
			t.Fatal(err)
		}
		width := map[string]string{"tiny": "64", "small": "64", "medium": "256"}[r["net_arch"]]
		for _, want := range []string{`encoder = "cnn"`, "channels = [16]", "[net.latent]\nsize = " + width + "\n"} {
			if width == "" || !bytes.Contains(cfg, []byte(want)) || bytes.Contains(cfg, []byte("[net.mlp]")) {
				t.Errorf("trial %s (net_arch %q): want %q and no [net.mlp] in\n%s", r["trial"], r["net_arch"], want, cfg)
			}
		}
	}
}

// TestTuneBadInput checks that bad flags and a Python without optuna exit
// with status 2 and say why.
func TestTuneBadInput(t *testing.T) {
	python := optunaPython(t)
	script, err := filepath.Abs(filepath.Join("..", "..", "python", "evolve_tune.py"))
	if err != nil {
		t.Fatal(err)
	}
	e := tuneEnv{python: python, script: script}
	dir := t.TempDir()
	base := filepath.Join(dir, "base.toml")
	if err := os.WriteFile(base, []byte(tuneBase), 0o644); err != nil {
		t.Fatal(err)
	}
	good := []string{"-config", base, "-sampler", "tpe", "-seed", "1", "-out", filepath.Join(dir, "out"),
		"-budget", "1000", "-anchor", "1", "-evolve", "/nonexistent"}
	with := func(flag, value string) []string {
		args := append([]string(nil), good...)
		for i := 0; i < len(args); i += 2 {
			if args[i] == flag {
				if value == "" {
					return append(args[:i:i], args[i+2:]...)
				}
				args[i+1] = value
				return args
			}
		}
		return append(args, flag, value)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{with("-sampler", "cmaes"), "-sampler"},
		{with("-budget", ""), "-budget"},
		{with("-budget", "1.5"), "-budget"},
		{with("-trials", "0"), "-trials"},
		{with("-space", "sac"), "-space"},
		{with("-config", filepath.Join(dir, "missing.toml")), "missing.toml"},
		{append(with("-seed", "1"), "-bogus"), "-bogus"},
	} {
		_, stderr, code := e.run(t, python, nil, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a message naming %s", c.args, code, stderr, c.want)
		}
	}

	// Without optuna: an optuna package that fails to import, ahead of the
	// real one on PYTHONPATH, and python3 if it has none.
	fake := filepath.Join(dir, "fake")
	if err := os.MkdirAll(filepath.Join(fake, "optuna"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fake, "optuna", "__init__.py"), []byte("raise ImportError('hidden by the test')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runs := []struct {
		python string
		env    []string
	}{{python, []string{"PYTHONPATH=" + fake}}}
	if p, err := exec.LookPath("python3"); err == nil && exec.Command(p, "-c", "import optuna").Run() != nil {
		runs = append(runs, struct {
			python string
			env    []string
		}{p, nil})
	}
	for _, r := range runs {
		_, stderr, code := e.run(t, r.python, r.env, good...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || strings.Contains(msg, "\n") || !strings.Contains(msg, "apt-get install python3-optuna") ||
			!strings.Contains(msg, "/usr/bin/python3") {
			t.Errorf("%s %v without optuna: exit %d, stderr %q; want 2 and one line saying to apt-get install python3-optuna",
				r.python, r.env, code, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
		t.Error("a refused study made its -out directory")
	}
}

// TestBuildNotesAChangedBinary: the drivers build evolve into their output
// directory on every invocation; when that replaces another build (the
// code changed), runs resumed from then on go on with other code, and the
// build says so. (go build stands in: it writes what the test gives.)
func TestBuildNotesAChangedBinary(t *testing.T) {
	dir := t.TempDir()
	prog := "import evolve_tune as t, types\n" +
		"def go(cmd, **kw):\n" +
		"    open(cmd[cmd.index('-o') + 1], 'wb').write(sys.argv[2].encode())\n" +
		"    return types.SimpleNamespace(returncode=0, stderr='')\n" +
		"t.subprocess.run = go\n" +
		"t.build_evolve(sys.argv[1])\n"
	note := "is not the build that was there"
	for _, tc := range []struct {
		build string
		note  bool
	}{{"build 1", false}, {"build 1", false}, {"build 2", true}} {
		if got := runScriptsPython(t, prog, dir, tc.build); strings.Contains(got, note) != tc.note {
			t.Errorf("%s: %q; want the note %v", tc.build, got, tc.note)
		}
	}
}

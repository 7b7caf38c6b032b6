package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evolverl/evolve/evo"
	"github.com/evolverl/evolve/internal/runtest"
)

// TestMain lets a test run this very binary as the evolve command (for the
// real-signal test) instead of building it.
func TestMain(m *testing.M) {
	if os.Getenv("EVOLVE_TEST_MAIN") == "1" {
		os.Args = append([]string{"evolve"}, strings.Fields(os.Getenv("EVOLVE_TEST_ARGS"))...)
		os.Exit(Main())
	}
	os.Exit(m.Run())
}

// tinyConfig is a run of 2 small CartPole agents training 256 steps per
// generation, with out_dir and max_steps to fill in.
const tinyConfig = `
seed = 3
out_dir = %q

[env]
id = "CartPole-v1"
num_envs = 2
eval_episodes = 2

[population]
size = 2
max_steps = %d
evo_steps = 256
workers = 1

[ppo]
learn_step = 128
batch_size = 64
update_epochs = 1

[net]
[net.mlp]
hidden = [16]
[net.latent]
size = 8
[net.head]
hidden = [16]
`

// writeTiny writes the tiny config with the given budget and returns its
// path and the run's directory.
func writeTiny(t *testing.T, maxSteps int) (config, out string) {
	t.Helper()
	dir := t.TempDir()
	out = filepath.Join(dir, "run")
	config = filepath.Join(dir, "tiny.toml")
	if err := os.WriteFile(config, []byte(fmt.Sprintf(tinyConfig, out, maxSteps)), 0o644); err != nil {
		t.Fatal(err)
	}
	return config, out
}

// trainTiny trains the tiny config for maxSteps through the command and
// returns its config file and run directory.
func trainTiny(t *testing.T, maxSteps int) (config, out string) {
	t.Helper()
	config, out = writeTiny(t, maxSteps)
	if code, _, stderr := evolve(context.Background(), "-config", config, "-quiet"); code != exitOK {
		t.Fatalf("training: exit %d; stderr:\n%s", code, stderr)
	}
	return config, out
}

// exitsTwoSaying checks that a command exited 2 with stderr mentioning
// each of want.
func exitsTwoSaying(t *testing.T, code int, stderr string, want ...string) {
	t.Helper()
	if code != 2 {
		t.Errorf("exit %d, want 2; stderr:\n%s", code, stderr)
	}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr does not mention %q:\n%s", w, stderr)
		}
	}
}

// evolve runs the command and returns its exit status, stdout and stderr.
func evolve(ctx context.Context, args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := Run(ctx, args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestBadInputExitsTwo(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string { return runtest.WriteFile(t, dir, name, text) }
	runDir := filepath.Join(dir, "run")
	if err := os.Mkdir(runDir, 0o755); err != nil {
		t.Fatal(err)
	}
	runtest.WriteFile(t, runDir, "config.toml", "")
	runElite := runtest.WriteFile(t, runDir, "elite.safetensors", "x")
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"unknown key", []string{"-config", write("unknown.toml", "[population]\nsizes = 4\n")}, []string{"unknown keys", "population.sizes", "unknown.toml"}},
		{"syntax error", []string{"-config", write("syntax.toml", "seed = = 1\n")}, []string{"syntax.toml", "line 1"}},
		{"missing file", []string{"-config", filepath.Join(dir, "missing.toml")}, []string{"missing.toml", "no such file"}},
		{"negative lr", []string{"-config", write("lr.toml", "[ppo]\nlr = -1e-3\n")}, []string{"ppo.lr = -0.001", "lr.toml"}},
		{"size four", []string{"-config", write("four.toml", "[population]\nsize = \"four\"\n")}, []string{"population.size", "four.toml"}},
		{"no flags", nil, []string{"exactly one of -config"}},
		{"both", []string{"-config", "a.toml", "-resume", "b"}, []string{"exactly one of -config"}},
		{"unknown flag", []string{"-confg", "a.toml"}, []string{"-confg"}},
		{"stray argument", []string{"-config", "a.toml", "extra"}, []string{`unexpected argument "extra"`}},
		{"mistyped subcommand", []string{"plto"}, []string{`unexpected argument "plto": not a subcommand (bench, configs,`}},
		{"config without -config", []string{"my.toml"}, []string{`unexpected argument "my.toml": give a config with -config my.toml`}},
		{"seed on resume", []string{"-resume", dir, "-seed", "3"}, []string{"-seed, -out and -set do not apply"}},
		{"negative workers", []string{"-config", "a.toml", "-workers", "-2"}, []string{"-workers -2"}},
		{"resume of no run", []string{"-resume", filepath.Join(dir, "nothing")}, []string{"nothing", "no such run directory"}},
		{"resume of a run's file", []string{"-resume", runElite}, []string{"is a file of the run in " + runDir + ": -resume takes the run's directory (-resume " + runDir + ")"}},
		{"nats unreachable", []string{"-config", "a.toml", "-nats", "nats://127.0.0.1:1"}, []string{"cannot connect to the NATS server at nats://127.0.0.1:1"}},
		{"nats password hidden", []string{"-config", "a.toml", "-nats", "nats://me:secret@127.0.0.1:1"}, []string{"nats://me:xxxxx@127.0.0.1:1"}},
		{"workers with nats", []string{"-config", "a.toml", "-nats", "nats://127.0.0.1:1", "-workers", "2"}, []string{"-workers does not apply with -nats"}},
		{"ack wait without nats", []string{"-config", "a.toml", "-nats-ack-wait", "5s"}, []string{"-nats-ack-wait and -nats-max-deliver need -nats URL"}},
		{"zero ack wait", []string{"-config", "a.toml", "-nats", "nats://127.0.0.1:1", "-nats-ack-wait", "0s"}, []string{"-nats-ack-wait 0s: want > 0"}},
		{"negative ack wait", []string{"-config", "a.toml", "-nats", "nats://127.0.0.1:1", "-nats-ack-wait", "-1s"}, []string{"-nats-ack-wait -1s: want > 0"}},
		{"nats over http", []string{"-config", "a.toml", "-nats", "nats://127.0.0.1:1,http://127.0.0.1:1"}, []string{"URL 2 of the list is http://…: want nats://HOST:PORT"}},
		{"worker over http", []string{"worker", "-nats", "http://127.0.0.1:1"}, []string{"URL 1 of the list is http://…"}},
		// Said before the server is reached: this one is unreachable.
		{"resume of no run with nats", []string{"-resume", filepath.Join(dir, "nothing"), "-nats", "nats://127.0.0.1:1"}, []string{"nothing: no such run directory"}},
		{"nats token hidden", []string{"-config", "a.toml", "-nats", "nats://TOPSECRET@127.0.0.1:1"}, []string{"nats://xxxxx@127.0.0.1:1"}},
		{"nats list hidden", []string{"-config", "a.toml", "-nats", "nats://me:secret@127.0.0.1:1, nats://me:secret@127.0.0.1:2"}, []string{"nats://me:xxxxx@127.0.0.1:1, nats://me:xxxxx@127.0.0.1:2"}},
		{"empty nats", []string{"-config", "a.toml", "-nats", ""}, []string{"-nats need a non-empty value"}},
		{"creds and nkey", []string{"-config", "a.toml", "-nats", "nats://127.0.0.1:1", "-nats-creds", "a.creds", "-nats-nkey", "b.nk"}, []string{"exclude each other"}},
		{"zero max deliver", []string{"-config", "a.toml", "-nats", "nats://127.0.0.1:1", "-nats-max-deliver", "0"}, []string{"want > 0"}},
		{"creds without nats", []string{"-config", "a.toml", "-nats-creds", "x.creds"}, []string{"need -nats URL"}},
		{"worker without nats", []string{"worker"}, []string{"-nats URL is required"}},
		{"worker unreachable", []string{"worker", "-nats", "nats://127.0.0.1:1"}, []string{"cannot connect to the NATS server"}},
		{"worker zero slots", []string{"worker", "-nats", "nats://127.0.0.1:1", "-workers", "0"}, []string{"-workers 0"}},
		{"worker without its python", []string{"worker", "-nats", "nats://127.0.0.1:1", "-gym-python", "/nonexistent/python3"},
			[]string{"-gym-python /nonexistent/python3: no such file or directory"}},
		{"worker cert without key", []string{"worker", "-nats", "tls://127.0.0.1:1", "-nats-tls-cert", "c.pem"}, []string{"go together"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := evolve(context.Background(), tc.args...)
			exitsTwoSaying(t, code, stderr, tc.want...)
			if strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine ") {
				t.Errorf("stderr shows a panic:\n%s", stderr)
			}
			if strings.Contains(stderr, "secret") || strings.Contains(stderr, "SECRET") {
				t.Errorf("stderr shows a password:\n%s", stderr)
			}
		})
	}
}

// TestFlagConflictsAreOneLine checks that flags that do not go together
// get a one-line error and a pointer to -h, not the whole usage text,
// which only a bare evolve shows.
func TestFlagConflictsAreOneLine(t *testing.T) {
	for _, args := range [][]string{
		{"-resume", t.TempDir(), "-seed", "5"},
		{"-config", "a.toml", "-resume", "b"},
		{"-config", "a.toml", "-workers", "-2"},
		{"-config", "a.toml", "extra"},
		{"-config", "a.toml", "-max-steps", "1.5e3x"},
		{"-config", "a.toml", "-seed", "x"},
		{"-resume", filepath.Join("..", "configs", "cartpole.toml")},
		{"-config", "a.toml", "-bogus"},
		{"play", "-agent", "x", "-gfi", "a.gif"},
		{"play", "-episodes", "0", "-agent", "x"},
		{"worker", "-workers", "many"},
		{"inspect"},
		{"plot"}, // several directories are a comparison (plot_test.go), none a misuse
		{"bench", "-seeds", "0"},
	} {
		name := "evolve"
		if _, sub := subcommands[args[0]]; sub {
			name += " " + args[0]
		}
		code, stdout, stderr := evolve(context.Background(), args...)
		lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
		if code != exitBadInput || stdout != "" || len(lines) != 2 || !strings.HasPrefix(lines[0], name+": ") ||
			lines[1] != name+": run "+name+" -h for the flags" {
			t.Errorf("%q: exit %d, stdout %q, stderr:\n%s\nwant exit 2, a one-line error and the pointer to -h", args, code, stdout, stderr)
		}
	}
	for _, args := range [][]string{{"-h"}, {"play", "-h"}, {"plot", "-h"}, {"inspect", "-h"}, {"worker", "-h"}, {"bench", "-h"}} {
		if code, _, stderr := evolve(context.Background(), args...); code != exitOK || !strings.Contains(stderr, "usage: evolve") {
			t.Errorf("%q: exit %d, stderr:\n%s\nwant 0 and the usage", args, code, stderr)
		}
	}
	if code, _, stderr := evolve(context.Background()); code != exitBadInput || !strings.Contains(stderr, "usage: evolve -config FILE") {
		t.Errorf("bare evolve: exit %d, stderr:\n%s\nwant exit 2 and the usage", code, stderr)
	}
}

// latestGeneration returns the generation checkpoints/latest names, or -1.
func latestGeneration(dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, "checkpoints", "latest"))
	if err != nil {
		return -1
	}
	var g int
	if _, err := fmt.Sscanf(strings.TrimSpace(string(b)), "gen-%d", &g); err != nil {
		return -1
	}
	return g
}

// cancelAfter cancels when the run in dir has checkpointed generation g.
func cancelAfter(dir string, g int, cancel context.CancelFunc) {
	for latestGeneration(dir) < g {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
}

func TestInterruptCheckpointsAndResumeFinishes(t *testing.T) {
	// A budget of about 40 generations: the cancellation lands well before
	// the end, however fast the agents train.
	config, out := writeTiny(t, 2*40*256)
	ctx, cancel := context.WithCancel(context.Background())
	go cancelAfter(out, 1, cancel)
	code, _, stderr := evolve(ctx, "-config", config)
	if code != 130 {
		t.Fatalf("interrupted run exits %d, want 130; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "evolve -resume "+out) {
		t.Errorf("stderr does not say how to resume:\n%s", stderr)
	}
	if g := latestGeneration(out); g < 1 {
		t.Fatalf("latest checkpoint is generation %d, want >= 1", g)
	}
	var sum struct {
		StopReason string `json:"stop_reason"`
	}
	if err := json.Unmarshal(mustRead(t, filepath.Join(out, "summary.json")), &sum); err != nil || sum.StopReason != "interrupted" {
		t.Errorf("summary.json after the stop: %+v, %v", sum, err)
	}

	code, stdout, stderr := evolve(context.Background(), "-resume", out, "-quiet")
	if code != 0 {
		t.Fatalf("resume exits %d; stderr:\n%s", code, stderr)
	}
	// rl_hp mutations of learn_step change the steps per generation, so
	// the number of generations is read from the summary.
	var done int
	if _, err := fmt.Sscanf(stdout, "generations   %d (step budget spent)", &done); err != nil || done < 2 ||
		!strings.Contains(stdout, filepath.Join(out, "elite.safetensors")) {
		t.Errorf("summary of the resumed run (%v):\n%s", err, stdout)
	}
	for _, f := range []string{"config.toml", "metrics.csv", "summary.json", "elite.safetensors", "checkpoints/latest"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	if rows := strings.Count(string(mustRead(t, filepath.Join(out, "metrics.csv"))), "\n"); rows != 1+done*2 {
		t.Errorf("metrics.csv has %d lines, want a header and %d rows", rows, done*2)
	}

	code, stdout, _ = evolve(context.Background(), "-resume", out)
	// Its budget is spent: a larger one is the way on (a target alone would
	// be refused).
	if code != 0 || !strings.Contains(stdout, "already finished") || !strings.Contains(stdout, "-max-steps N (more than its ") ||
		strings.Contains(stdout, "-no-target") {
		t.Errorf("resuming a finished run: exit %d, stdout:\n%s", code, stdout)
	}
	// The same config again: the run goes beside the first, numbered as
	// the zoo numbers its logs; -out into a run's directory is refused.
	before := snapshot(t, out)
	code, _, stderr = evolve(context.Background(), "-config", config)
	second := out + "_2"
	if code != 0 || !strings.Contains(stderr, out+" holds a run") || !strings.Contains(stderr, "goes to "+second) {
		t.Errorf("the config run again: exit %d, stderr:\n%s\nwant 0 and a run in %s", code, stderr, second)
	}
	if _, err := os.Stat(filepath.Join(second, "elite.safetensors")); err != nil {
		t.Errorf("the second run: %v", err)
	}
	sameSnapshot(t, "the first run's directory", before, snapshot(t, out))
	code, _, stderr = evolve(context.Background(), "-config", config, "-out", out)
	if code != 2 || !strings.Contains(stderr, "already holds a run") {
		t.Errorf("a new run with -out into a run's directory: exit %d, stderr:\n%s", code, stderr)
	}
}

// TestStopFlagsTrainAFinishedRunFurther trains the tiny run to its budget,
// then resumes it with twice the budget and no target, and checks what a
// flag that would not reopen it says.
func TestStopFlagsTrainAFinishedRunFurther(t *testing.T) {
	_, out := trainTiny(t, 3*2*256)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-max-steps", "1000"}, "already taken"},
		{[]string{"-max-steps", "0"}, "-max-steps 0: want >= 1"},
		{[]string{"-target", "1", "-no-target"}, "at most one of -target X and -no-target"},
	} {
		code, _, stderr := evolve(context.Background(), append([]string{"-resume", out}, tc.args...)...)
		if code != exitBadInput || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr:\n%s\nwant exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	code, stdout, stderr := evolve(context.Background(), "-resume", out, "-max-steps", "3072", "-no-target", "-quiet")
	var gens int
	if _, err := fmt.Sscanf(stdout, "generations   %d (step budget spent)", &gens); code != exitOK || err != nil {
		t.Fatalf("extending: exit %d, %v; stdout:\n%s\nstderr:\n%s", code, err, stdout, stderr)
	}
	if !strings.Contains(string(mustRead(t, filepath.Join(out, "config.toml"))), "max_steps = 3072") {
		t.Error("config.toml does not hold the new budget")
	}
	if rows := strings.Count(string(mustRead(t, filepath.Join(out, "metrics.csv"))), "\n"); rows != 1+gens*2 || gens < 4 {
		t.Errorf("metrics.csv has %d lines after %d generations, want a header, 2 rows per generation and at least 4 generations", rows, gens)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCorruptCheckpointExitsTwo(t *testing.T) {
	_, out := trainTiny(t, 2*256)
	latest := filepath.Join(out, "checkpoints", strings.TrimSpace(string(mustRead(t, filepath.Join(out, "checkpoints", "latest")))))
	files, _ := filepath.Glob(filepath.Join(latest, "agent-*.safetensors"))
	if len(files) != 2 {
		t.Fatalf("%d agent files in %s", len(files), latest)
	}
	good := mustRead(t, files[0])
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"truncated", good[:len(good)/2]},
		{"bit flipped", func() []byte { b := bytes.Clone(good); b[len(b)-7] ^= 0x10; return b }()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(files[0], tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			code, _, stderr := evolve(context.Background(), "-resume", out)
			if code != 2 || !strings.Contains(stderr, files[0]) {
				t.Errorf("exit %d, want 2 naming %s; stderr:\n%s", code, files[0], stderr)
			}
		})
	}
}

// TestSIGINT sends a real SIGINT to the command (this test binary running
// Main) during its second generation.
func TestSIGINT(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the command in a subprocess")
	}
	// Once, and twice at once as `timeout -s INT` sends it (to the process
	// and its group): both are one stop, checkpointed.
	for _, n := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d signals", n), func(t *testing.T) { sigint(t, n) })
	}
}

// sigint sends n SIGINTs a millisecond apart to the command training a run
// in its second generation and checks it stops as after one.
func sigint(t *testing.T, n int) {
	config, out := writeTiny(t, 2*1000*256)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "EVOLVE_TEST_MAIN=1", "EVOLVE_TEST_ARGS=-config "+config)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for latestGeneration(out) < 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	for i := range n {
		if i > 0 {
			time.Sleep(time.Millisecond)
		}
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
	}
	err := cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Fatalf("exit %d (%v), want 130; stderr:\n%s", code, err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "stopped by SIGINT") || !strings.Contains(stderr.String(), "-resume") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	if latestGeneration(out) < 1 {
		t.Error("no checkpoint after SIGINT")
	}
}

// snapshot describes every file and directory under dir: its mode, and for
// files the size and SHA-256, by path relative to dir.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		files[rel] = fi.Mode().String()
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			files[rel] += fmt.Sprintf(" %d %x", len(b), sha256.Sum256(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// sameSnapshot fails the test if before and after differ, naming what did.
func sameSnapshot(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for p, b := range before {
		if a, ok := after[p]; !ok {
			t.Errorf("%s: %s was removed", what, p)
		} else if a != b {
			t.Errorf("%s: %s changed: %s -> %s", what, p, b, a)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s: %s was created", what, p)
		}
	}
}

// copyTree copies the files and directories under src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// stoppedRun trains a tiny run of 3 generations, with mutations that keep
// the networks' shapes and the agents' steps alike, stopped after its
// first generation, and returns its directory.
func stoppedRun(t *testing.T, seed int64) string {
	t.Helper()
	config, out := writeTiny(t, 3*2*256)
	cfg, err := evo.LoadConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Seed = seed
	cfg.Mutation.Architecture, cfg.Mutation.Activation, cfg.Mutation.RLHP = 0, 0, 0
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tr, err := evo.New(cfg, evo.Options{OnGeneration: func(r evo.GenerationReport) {
		if r.Generation == 1 {
			cancel()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Run(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped run: %v, want context.Canceled", err)
	}
	return out
}

// TestImpossibleConfigExitsTwo: a config that is valid numbers but more
// than the machine holds is refused before anything is allocated or
// written: exit 2, the keys and the estimate named, no out_dir created.
func TestImpossibleConfigExitsTwo(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "run")
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"population", "[population]\nsize = 1_000_000_000\n", []string{"population.size = 1000000000", "<= 10000"}},
		{"learn_step", "[ppo]\nlearn_step = 4_000_000_000\n", []string{"ppo.learn_step = 4000000000"}},
		{"hidden", "[net.mlp]\nhidden = [1_000_000, 1_000_000]\nmax_nodes = 1_000_000\n", []string{"net.mlp.hidden", "1 GiB", "GB of memory"}},
		{"population of big networks", "[population]\nsize = 10_000\n[net.mlp]\nhidden = [4096, 4096]\nmax_nodes = 4096\n",
			[]string{"population.size = 10000", "net.mlp.hidden", "GB of memory", "more than the budget"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			config := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".toml")
			text := fmt.Sprintf("out_dir = %q\n", out) + tc.text
			if err := os.WriteFile(config, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := evolve(context.Background(), "-config", config, "-quiet")
			if code != 2 {
				t.Errorf("exit %d, want 2; stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			for _, w := range append(tc.want, config) {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not mention %q:\n%s", w, stderr)
				}
			}
			if strings.Contains(stderr, "panic") || strings.Contains(stderr, "out of memory") {
				t.Errorf("stderr:\n%s", stderr)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("out_dir %s exists after a refused config (%v)", out, err)
			}
		})
	}
}

// TestStoppedExtensionSaysItsBudgetAgain: an extension stopped before its
// first checkpoint has not written its new budget to config.toml yet, so
// the command that continues it gives the budget again.
func TestStoppedExtensionSaysItsBudgetAgain(t *testing.T) {
	config, out := writeTiny(t, 2*256)
	if code, _, stderr := evolve(context.Background(), "-config", config, "-quiet"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	code, _, stderr := evolve(ctx, "-resume", out, "-max-steps", "4096", "-no-target", "-quiet")
	if want := "continue with: evolve -resume " + out + " -max-steps 4096 -no-target"; code != 130 || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr:\n%s\nwant 130 and %q", code, stderr, want)
	}
}

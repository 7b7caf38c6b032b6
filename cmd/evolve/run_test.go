package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain lets a test run this very binary as the evolve command (for the
// real-signal test) instead of building it.
func TestMain(m *testing.M) {
	if os.Getenv("EVOLVE_TEST_MAIN") == "1" {
		os.Args = append([]string{"evolve"}, strings.Fields(os.Getenv("EVOLVE_TEST_ARGS"))...)
		main()
		return
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

// evolve runs the command and returns its exit status, stdout and stderr.
func evolve(ctx context.Context, args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(ctx, args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestBadInputExitsTwo(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
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
		{"seed on resume", []string{"-resume", dir, "-seed", "3"}, []string{"-seed and -out do not apply"}},
		{"negative workers", []string{"-config", "a.toml", "-workers", "-2"}, []string{"-workers -2"}},
		{"resume of no run", []string{"-resume", filepath.Join(dir, "nothing")}, []string{"nothing", "config.toml"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := evolve(context.Background(), tc.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2; stderr:\n%s", code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not mention %q:\n%s", w, stderr)
				}
			}
			if strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine ") {
				t.Errorf("stderr shows a panic:\n%s", stderr)
			}
		})
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
	if code != 0 || !strings.Contains(stdout, "already finished") {
		t.Errorf("resuming a finished run: exit %d, stdout:\n%s", code, stdout)
	}
	code, _, stderr = evolve(context.Background(), "-config", config)
	if code != 2 || !strings.Contains(stderr, "already holds a run") {
		t.Errorf("a new run into a run's directory: exit %d, stderr:\n%s", code, stderr)
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
	config, out := writeTiny(t, 2*256)
	if code, _, stderr := evolve(context.Background(), "-config", config, "-quiet"); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
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
// main) during its second generation.
func TestSIGINT(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the command in a subprocess")
	}
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
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
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

package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evolverl/evolve/internal/pytest"
)

// gymTiny writes the tiny config on the standard-library test env class
// of envs/testdata/gymtest, or skips without python3.
func gymTiny(t *testing.T, class string) (config, out string) {
	t.Helper()
	pytest.StdlibEnvs(t, filepath.Join("..", "envs", "testdata", "gymtest"))
	config, out = writeTiny(t, 4096)
	text := strings.NewReplacer(`id = "CartPole-v1"`, `id = "gym:test"`, "eval_episodes = 2\n",
		"eval_episodes = 2\n[env.options]\nmodule_env = \"gymtest:"+class+"\"\ntimeout = 30\n").Replace(string(mustRead(t, config)))
	if err := os.WriteFile(config, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return config, out
}

// TestStopWhileAGymEnvHangs: a run whose Python env hangs in step stops
// at once when its context ends (a signal), exit 130 with the resume line,
// not after the env's 30 s timeout; so does play.
func TestStopWhileAGymEnvHangs(t *testing.T) {
	config, _ := gymTiny(t, "Hangs")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(1500*time.Millisecond, cancel)
	start := time.Now()
	code, _, stderr := evolve(ctx, "-config", config)
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the run ended %v after it started, %v after the stop", d, d-1500*time.Millisecond)
	}
	if code != 130 || !strings.Contains(stderr, "continue with") {
		t.Errorf("exit %d, stderr:\n%s\nwant 130 and how to continue", code, stderr)
	}
}

// TestGymEnvFailingInTrainingExitsTwo: a Python env that raises in a
// training step is bad env output (exit 2), as in evaluation and play.
func TestGymEnvFailingInTrainingExitsTwo(t *testing.T) {
	config, _ := gymTiny(t, "Raises")
	code, _, stderr := evolve(context.Background(), "-config", config, "-quiet")
	exitsTwoSaying(t, code, stderr, "boom from gymtest", "gym:test")
}

// TestPlayEnvOption: a run whose recorded interpreter is gone plays with
// -env-option python=..., and says so when it is not given; a stop while
// play's env starts ends it at once.
func TestPlayEnvOption(t *testing.T) {
	config, run := gymTiny(t, "Masked")
	if code, _, stderr := evolve(context.Background(), "-config", config, "-quiet"); code != exitOK {
		t.Fatalf("training: exit %d: %s", code, stderr)
	}
	path := filepath.Join(run, "config.toml")
	text := strings.Replace(string(mustRead(t, path)), "[env.options]\n", "[env.options]\npython = \"/nonexistent/python3\"\n", 1)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := evolve(context.Background(), "play", "-agent", run, "-episodes", "1")
	exitsTwoSaying(t, code, stderr, `option "python" = "/nonexistent/python3"`, "-env-option python=")
	if code, stdout, stderr := evolve(context.Background(), "play", "-agent", run, "-episodes", "1", "-env-option", "python=python3"); code != exitOK || !strings.Contains(stdout, "episode 1") {
		t.Errorf("play with -env-option python=python3: exit %d\n%s%s", code, stdout, stderr)
	}
	code, _, stderr = evolve(context.Background(), "play", "-agent", run, "-env-option", "nokey")
	exitsTwoSaying(t, code, stderr, "-env-option", "KEY=VALUE")

	// A stop while the env starts (it takes 30 s) ends play at once.
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(time.Second, cancel)
	start := time.Now()
	code, _, stderr = evolve(ctx, "play", "-agent", run, "-env-option", "python=python3", "-env-option", `module_env="gymtest:SlowInit"`)
	if d := time.Since(start); code != 130 || d > 10*time.Second || !strings.Contains(stderr, "interrupted") {
		t.Errorf("play stopped while its env started: exit %d after %v: %s; want 130 at once", code, d, stderr)
	}
}

// TestStopWhileTheRunIsSetUp: before the first generation a run makes its
// env to check the config (a new run) or the run's config.toml (-resume);
// a stop then kills a Python child still starting, exit 130 at once, not
// after the child's start (30 s here), and nothing of the run is written.
// So does evolve bench while it checks its configs.
func TestStopWhileTheRunIsSetUp(t *testing.T) {
	stopAfter := func(d time.Duration) context.Context {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		time.AfterFunc(d, cancel)
		return ctx
	}
	atOnce := func(what string, start time.Time, code int, stderr string) {
		t.Helper()
		if d := time.Since(start); code != 130 || d > 10*time.Second || !strings.Contains(stderr, "stopped while") {
			t.Errorf("%s: exit %d after %v: %s; want 130 at once", what, code, d, stderr)
		}
	}
	config, out := gymTiny(t, "SlowInit")
	start := time.Now()
	code, _, stderr := evolve(stopAfter(time.Second), "-config", config)
	atOnce("new run", start, code, stderr)
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the stopped new run left %s (%v)", out, err)
	}
	start = time.Now()
	code, _, stderr = evolve(stopAfter(time.Second), "bench", "-out", filepath.Join(t.TempDir(), "bench"), "-seeds", "1", config)
	atOnce("bench", start, code, stderr)

	// A finished run whose interpreter now takes 30 s to start.
	config, run := gymTiny(t, "Masked")
	if code, _, stderr := evolve(context.Background(), "-config", config, "-quiet"); code != exitOK {
		t.Fatalf("training: exit %d: %s", code, stderr)
	}
	slow := filepath.Join(t.TempDir(), "slowpython")
	if err := os.WriteFile(slow, []byte("#!/bin/sh\nsleep 30\nexec python3 \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(run, "config.toml")
	before := mustRead(t, path)
	text := strings.Replace(string(before), "[env.options]\n", "[env.options]\npython = \""+slow+"\"\n", 1)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	code, _, stderr = evolve(stopAfter(time.Second), "-resume", run, "-max-steps", "1e6")
	atOnce("resume", start, code, stderr)
	if got := string(mustRead(t, path)); got != text {
		t.Errorf("the stopped resume changed config.toml:\n%s", got)
	}
}

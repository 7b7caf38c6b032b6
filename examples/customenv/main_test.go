package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/evolverl/evolve/cli"
	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/examples/customenv/reach"
)

func TestMain(m *testing.M) {
	// What main does before cli.Main.
	if err := envs.Register(reach.Spec); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}

func TestReachPassesCheck(t *testing.T) {
	env, err := envs.Make("Reach1D-v0", envs.Options{"size": 5})
	if err != nil {
		t.Fatal(err)
	}
	if err := envs.Check(env, envs.CheckOptions{Seed: 7}); err != nil {
		t.Fatal(err)
	}
	if _, err := envs.Make("Reach1D-v0", envs.Options{"sise": 5}); err == nil {
		t.Error("a misspelt option was accepted")
	}
}

// TestRun trains on config.toml, with a budget of two short generations,
// through the command as the example's main runs it.
func TestRun(t *testing.T) {
	b, err := os.ReadFile("config.toml")
	if err != nil {
		t.Fatal(err)
	}
	short := regexp.MustCompile(`(?m)^max_steps = .*$`).ReplaceAll(b, []byte("max_steps = 8_192"))
	if bytes.Equal(short, b) {
		t.Fatal("config.toml has no max_steps line")
	}
	dir := t.TempDir()
	config := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(config, short, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	var stdout, stderr bytes.Buffer
	code := cli.Run(context.Background(), []string{"-config", config, "-out", out, "-quiet", "-workers", "2"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(out, "summary.json")); err != nil {
		t.Errorf("no summary: %v; stdout:\n%s", err, stdout.String())
	}
	t.Logf("stdout:\n%s", stdout.String())
}

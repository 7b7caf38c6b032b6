package evo

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestConfigChangesNamesEveryKey(t *testing.T) {
	was := `seed = 1
[ppo]
lr = 0.0003
gamma = 0.99
[net]
hidden = [64, 64]
activation = "tanh"
[hp.lr]
min = 1e-5
[env.options]
max_episode_steps = 200
target = nan
stages = [{steps = 1, lr = 0.5}]
`
	now := `seed = 1
[ppo]
lr = 0.0003
gamma = 0.98
ent_coef = 0.01
[net]
hidden = [64, 64, 64]
activation = "relu"
[env.options]
max_episode_steps = 200.0
target = nan
stages = [{steps = 1, lr = 0.25}]
`
	got, err := tomlChanges([]byte(was), []byte(now))
	if err != nil {
		t.Fatal(err)
	}
	want := []ConfigChange{
		{"env.options.max_episode_steps", "200", "200.0"},
		{"env.options.stages[0].lr", "0.5", "0.25"},
		{"hp.lr.min", "1e-05", "unset"},
		{"net.activation", `"tanh"`, `"relu"`},
		{"net.hidden", "[64, 64]", "[64, 64, 64]"},
		{"ppo.ent_coef", "unset", "0.01"},
		{"ppo.gamma", "0.99", "0.98"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("changes:\n%v\nwant:\n%v", got, want)
	}
	if got, err := tomlChanges([]byte(was), []byte(was)); got != nil || err != nil {
		t.Errorf("a config against itself: %v, %v", got, err)
	}
	if _, err := tomlChanges([]byte("x = ["), []byte(now)); err == nil {
		t.Error("an undecodable config compared")
	}
	show := func(c ConfigChange) string { return c.Key }
	if got := listChanges(append(want, want...), show); got != "env.options.max_episode_steps; env.options.stages[0].lr; hp.lr.min; net.activation; net.hidden; and 9 more" {
		t.Errorf("ten changes listed as %q", got)
	}
}

// TestConfigChangesOfConfigs compares two Configs: out_dir and workers do
// not count, a changed hyperparameter and a range do.
func TestConfigChangesOfConfigs(t *testing.T) {
	a := tiny(t)
	b := a
	b.OutDir, b.Population.Workers = "elsewhere", 7
	if got, err := ConfigChanges(a, b); got != nil || err != nil {
		t.Errorf("out_dir and workers changed: %v, %v", got, err)
	}
	b.PPO.UpdateEpochs = a.PPO.UpdateEpochs + 1
	got, err := ConfigChanges(a, b)
	want := []ConfigChange{{"ppo.update_epochs", fmt.Sprint(a.PPO.UpdateEpochs), fmt.Sprint(b.PPO.UpdateEpochs)}}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("update_epochs changed: %v, %v; want %v", got, err, want)
	}
}

// TestResumeOfACheckpointWithoutItsConfig: a checkpoint of a build that
// kept no config is refused for a changed config by its digest, and one
// whose config does not hash to its digest is refused as damaged.
func TestResumeOfACheckpointWithoutItsConfig(t *testing.T) {
	cfg := tiny(t)
	cfg.Population.MaxSteps = 1
	if _, err := run(t, cfg, Options{}, nil); err != nil {
		t.Fatal(err)
	}
	ckpt := filepath.Join(cfg.OutDir, "checkpoints", "gen-000001")
	var p population
	if err := json.Unmarshal(readFile(t, filepath.Join(ckpt, populationFile)), &p); err != nil {
		t.Fatal(err)
	}
	if tomlDigest([]byte(p.Config)) != p.ConfigDigest {
		t.Fatalf("the checkpoint's config does not hash to its digest %s", p.ConfigDigest)
	}
	editPopulation(t, ckpt, func(pop map[string]json.RawMessage) {
		pop["config"], _ = json.Marshal(strings.Replace(p.Config, "lr = 0.0003", "lr = 0.0004", 1))
	})
	if _, err := Resume(cfg.OutDir, Options{}); !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "config: does not hash to config_digest") {
		t.Errorf("Resume of a checkpoint whose config does not hash to its digest: %v", err)
	}
	editPopulation(t, ckpt, func(pop map[string]json.RawMessage) { delete(pop, "config") })
	tr, err := Resume(cfg.OutDir, Options{})
	if err != nil {
		t.Fatalf("Resume of a checkpoint without its config: %v", err)
	}
	tr.Close()
	path := filepath.Join(cfg.OutDir, "config.toml")
	b := strings.Replace(string(readFile(t, path)), "lr = 0.0003", "lr = 0.0004", 1)
	if err := os.WriteFile(path, []byte(b), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Resume(cfg.OutDir, Options{}); !errors.Is(err, errConfigChanged) || !strings.Contains(err.Error(), "config digest "+p.ConfigDigest) {
		t.Errorf("Resume of a checkpoint without its config, with a changed config: %v", err)
	}
}

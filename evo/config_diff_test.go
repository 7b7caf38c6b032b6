package evo

import (
	"encoding/json"
	"errors"
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
`
	now := `seed = 1
[ppo]
lr = 0.0003
gamma = 0.98
ent_coef = 0.01
[net]
hidden = [64, 64, 64]
activation = "relu"
`
	got := configChanges([]byte(was), []byte(now))
	want := []string{
		`hp.lr.min = unset (the checkpoint's: 1e-05)`,
		`net.activation = "relu" (the checkpoint's: "tanh")`,
		`net.hidden = [64, 64, 64] (the checkpoint's: [64, 64])`,
		`ppo.ent_coef = 0.01 (the checkpoint's: unset)`,
		`ppo.gamma = 0.98 (the checkpoint's: 0.99)`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := configChanges([]byte(was), []byte(was)); got != nil {
		t.Errorf("a config against itself: %q", got)
	}
	if got := configChanges([]byte("x = ["), []byte(now)); got != nil {
		t.Errorf("an undecodable config: %q", got)
	}
	if got := listChanges(append(want, want...)); !strings.HasSuffix(got, "; and 4 more") || strings.Count(got, ";") != maxListedChanges {
		t.Errorf("ten changes listed as %q", got)
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

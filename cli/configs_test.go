package cli

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/evolverl/evolve/configs"
	"github.com/evolverl/evolve/evo"
)

// TestConfigsListsAndPrintsTheShippedOnes: every .toml under configs/ is
// embedded, listed with its env, and printed as the file is.
func TestConfigsListsAndPrintsTheShippedOnes(t *testing.T) {
	var files []string
	filepath.WalkDir(filepath.Join("..", "configs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && filepath.Ext(p) == ".toml" {
			rel, _ := filepath.Rel(filepath.Join("..", "configs"), p)
			files = append(files, strings.TrimSuffix(filepath.ToSlash(rel), ".toml"))
		}
		return err
	})
	var names []string
	for _, c := range configs.List() {
		names = append(names, c.Name)
	}
	slices.Sort(files)
	slices.Sort(names)
	if !slices.Equal(files, names) {
		t.Errorf("embedded configs %v, files %v", names, files)
	}
	code, out, stderr := evolve(context.Background(), "configs")
	if code != exitOK || !strings.Contains(out, "cartpole ") || !strings.Contains(out, "LunarLander-v3") {
		t.Errorf("evolve configs: exit %d, stdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	code, out, _ = evolve(context.Background(), "configs", "lunarlander")
	if want := mustRead(t, filepath.Join("..", "configs", "lunarlander.toml")); code != exitOK || out != string(want) {
		t.Errorf("evolve configs lunarlander: exit %d, not the file", code)
	}
	if code, _, stderr := evolve(context.Background(), "configs", "lunarlandr"); code != exitBadInput || !strings.Contains(stderr, "lunarlandr") {
		t.Errorf("an unknown config: exit %d, stderr %s", code, stderr)
	}
}

// TestTrainByNameWithOverrides: -env ID trains the env's shipped config and
// -config NAME a shipped config by name, each with -set overrides applied
// and recorded in the run's config.toml.
func TestTrainByNameWithOverrides(t *testing.T) {
	for _, c := range []struct {
		env  string
		args []string
	}{
		{"CartPole-v1", []string{"-env", "CartPole-v1"}},
		{"CartPole-v1", []string{"-config", "cartpole", "-set", "pbt.quantile=0.5"}},       // a key another rules (selection = "pbt")
		{"CartPole-v1", []string{"-config", "zoo/cartpole", "-set", "mutation.rl_hp=0.5"}}, // a nested name
		{"Catch-v0", []string{"-config", "catch-cnn", "-set", "net.cnn.channels=[8, 8]"}},
		{"Probe1-v0", []string{"-env", "Probe1-v0"}},                     // no shipped config: the defaults
		{"MinAtar/Breakout-v1", []string{"-env", "MinAtar/Breakout-v1"}}, // the defaults, with a CNN for images
	} {
		args := c.args
		out := filepath.Join(t.TempDir(), "run")
		full := append(slices.Clone(args), "-set", "population.max_steps=4e3", "-set", "population.size=2",
			"-set", "env.num_envs=4", "-out", out, "-quiet")
		code, _, stderr := evolve(context.Background(), full...)
		if code != exitOK {
			t.Fatalf("%v: exit %d, stderr:\n%s", full, code, stderr)
		}
		cfg, err := evo.ReadRunConfig(out)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Env.ID != c.env || cfg.Population.Size != 2 || cfg.Population.MaxSteps != 4000 || cfg.Env.NumEnvs != 4 {
			t.Errorf("%v: config.toml has env %s, size %d, max_steps %d, num_envs %d", full, cfg.Env.ID,
				cfg.Population.Size, cfg.Population.MaxSteps, cfg.Env.NumEnvs)
		}
	}
}

// TestSetBadInput: a bad override is one line naming it, exit 2, and
// nothing is written.
func TestSetBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-env", "CartPole-v1", "-set", "ppo.lrr=1e-3"}, "-set ppo.lrr=1e-3: unknown keys: ppo.lrr (did you mean lr?)"},
		{[]string{"-env", "CartPole-v1", "-set", "net.head.gain=2"}, "-set net.head.gain=2: unknown keys: net.head.gain\n"}, // no line of the snippet
		{[]string{"-env", "CartPole-v1", "-set", "population.size=abc"}, "population.size: want integer (got string)"},
		// Each bad -set is named, as each bad key of a file is.
		{[]string{"-config", "cartpole", "-set", "ppo.lrr=1", "-set", "ppo.lr=0.001", "-set", "population.sise=0"},
			"-set ppo.lrr=1: unknown keys: ppo.lrr (did you mean lr?)\n  -set population.sise=0: unknown keys: population.sise (did you mean size?)"},
		{[]string{"-env", "CartPole-v1", "-set", "population.size=0"}, "population.size = 0: want >= 1"},
		// A bad value beside an unknown key is named in the same run.
		{[]string{"-config", "cartpole", "-set", "ppo.lrr=1", "-set", "population.size=0"},
			"-set ppo.lrr=1: unknown keys: ppo.lrr (did you mean lr?)\n  shipped config cartpole with -set population.size=0: population.size = 0: want >= 1"},
		// The lines of the text -set writes are not the file's: none is named.
		{[]string{"-config", "cartpole", "-set", "population.size=0"}, "population.size = 0: want >= 1\n"},
		{[]string{"-env", "CartPole-v1", "-set", "hp.lr=1e-3"}, "-set hp.lr=1e-3: hp.lr is a table, not a value: set its keys (-set hp.lr.KEY=VALUE)"},
		{[]string{"-env", "CartPole-v1", "-set", "ppo.lr"}, "want KEY=VALUE"},
		{[]string{"-config", "zoo/cartpole", "-set", "pbt.quantile=0.3"}, `[pbt] given, but population.selection = "tournament"`},
		{[]string{"-config", "cartpole", "-set", "population.selection=tournament"}, "(-set cannot remove a table: evolve configs cartpole > my.toml"},
		{[]string{"-env", "Cartpole-v1"}, `did you mean "CartPole-v1"?` + "\n"}, // not the line of the config -env writes
		{[]string{"-config", "cartpol"}, "did you mean the shipped config cartpole?"},
		{[]string{"-config", "no/such.toml"}, "evolve configs lists the shipped ones"},
		{[]string{"-config", "../configs/cartpol.toml"}, "did you mean ../configs/cartpole.toml?"},
		{[]string{"-resume", dir, "-set", "ppo.lr=1e-3"}, "do not apply to -resume"},
		{[]string{"-env", "CartPole-v1", "-config", "cartpole"}, "exactly one of"},
	} {
		out := filepath.Join(dir, "run")
		code, _, stderr := evolve(context.Background(), append(c.args, "-out", out)...)
		if code != exitBadInput || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant 2 and %q", c.args, code, stderr, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: wrote %s", c.args, out)
		}
	}
}

// TestEnvSourceNamesTheTwinsConfig: -env gym:ID of an env that is a
// built-in's Gymnasium twin trains the defaults, and says how to train it
// with the built-in's shipped config instead.
func TestEnvSourceNamesTheTwinsConfig(t *testing.T) {
	src, err := envSource("gym:CartPole-v1")
	if err != nil {
		t.Fatal(err)
	}
	want := `the built-in CartPole-v1's shipped config trains it too: -config cartpole -set env.id='"gym:CartPole-v1"'`
	if !src.generated || !strings.Contains(src.note, want) {
		t.Errorf("note %q (generated %v), want the defaults and %q", src.note, src.generated, want)
	}
	if src, _ := envSource("gym:SomethingElse-v0"); strings.Contains(src.note, "shipped config trains it too") {
		t.Errorf("an env with no twin: note %q", src.note)
	}
}

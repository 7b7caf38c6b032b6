// Package configs holds the ready-to-run run configs shipped with evolve,
// embedded so that an installed evolve binary runs them anywhere: `evolve
// configs` lists them, `evolve -config NAME` and `evolve -env ID` train them.
// Each file's leading comment says what it trains and what it reaches.
//
// The top-level configs of CartPole, Acrobot, LunarLander and Pendulum start
// every agent from Stable-Baselines3's untuned PPO defaults and let
// Population Based Training find the hyperparameters; zoo/ keeps the tuned
// hyperparameters they are measured against.
package configs

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

//go:embed *.toml zoo/*.toml peers/*.toml
var files embed.FS

// Config is one shipped config.
type Config struct {
	// Name is its path under configs/ without ".toml": "cartpole",
	// "zoo/acrobot".
	Name string
	// Env is its [env] id.
	Env string
	// Summary is the first sentence of its leading comment.
	Summary string
}

// List returns every shipped config, those at the top level first, each
// group by name.
func List() []Config {
	var out []Config
	fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(p) != ".toml" {
			return err
		}
		b, _ := files.ReadFile(p)
		out = append(out, Config{Name: strings.TrimSuffix(p, ".toml"), Env: envID(b), Summary: summary(b)})
		return nil
	})
	slices.SortStableFunc(out, func(a, b Config) int {
		da, db := strings.Count(a.Name, "/"), strings.Count(b.Name, "/")
		if da != db {
			return da - db
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// Read returns the text of the shipped config name ("cartpole",
// "zoo/acrobot"; a trailing ".toml" is accepted, and so is the path in a
// checkout, "configs/cartpole.toml", which the README's commands use).
func Read(name string) ([]byte, error) {
	file := strings.TrimPrefix(path.Clean(name), "configs/")
	b, err := files.ReadFile(strings.TrimSuffix(file, ".toml") + ".toml")
	if err != nil {
		return nil, fmt.Errorf("no shipped config %q (evolve configs lists them)", name)
	}
	return b, nil
}

// ForEnv returns the top-level shipped config that trains env id — not
// those of zoo/ (already tuned hyperparameters, kept as anchors) or peers/
// (twins of other programs' runs); ok is false when none does.
func ForEnv(id string) (Config, bool) {
	for _, c := range List() {
		if c.Env == id && !strings.Contains(c.Name, "/") {
			return c, true
		}
	}
	return Config{}, false
}

// envID reads a config's [env] id, "" when it has none.
func envID(b []byte) string {
	var c struct {
		Env struct {
			ID string `toml:"id"`
		} `toml:"env"`
	}
	if _, err := toml.NewDecoder(bytes.NewReader(b)).Decode(&c); err != nil {
		return ""
	}
	return c.Env.ID
}

// summary is the first sentence of the leading comment.
func summary(b []byte) string {
	var para []string
	for _, line := range strings.Split(string(b), "\n") {
		s, ok := strings.CutPrefix(line, "#")
		s = strings.TrimSpace(s)
		if !ok || s == "" {
			break
		}
		para = append(para, s)
	}
	text := strings.Join(para, " ")
	if i := strings.Index(text, ". "); i >= 0 {
		text = text[:i+1]
	}
	return text
}

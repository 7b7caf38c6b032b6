package evo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/evolverl/evolve/envs"
)

// FuzzParseConfig: no config file makes the parser panic; every error
// matches ErrBadInput; and a config it accepts writes (TOML) a file
// that parses back to an equal config. The seeds are the shipped configs and
// edge cases. The fast path checks everything but building the agent; an
// accepted config with a small network is also parsed in full, which must
// agree (a huge network would make one input take seconds).
func FuzzParseConfig(f *testing.F) {
	paths, err := filepath.Glob("../configs/*.toml")
	if err != nil || len(paths) == 0 {
		f.Fatalf("no configs found: %v", err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		"",
		"# comments only\n\n",
		tinyConfig,
		"[net.head]\nhidden = []\nmin_layers = 0\n",
		"[net]\nencoder = \"lstm\"\n[env]\nid = \"CartPoleNoVel-v1\"\nnum_envs = 1\n[ppo]\nlearn_step = 64\nmax_seq_len = 64\nbatch_size = 64\n",
		"[env]\nid = \"Catch-v0\"\n[net]\nencoder = \"cnn\"\n[net.cnn]\nchannels = [8]\nkernels = [3]\nstrides = [1]\n",
		"[population]\nsize = 10_000\n[net.mlp]\nhidden = [4096, 4096]\nmax_nodes = 4096\n",
		"[net.mlp]\nhidden = [1_000_000]\nmax_nodes = 1_000_000\n",
		"[ppo]\nlearn_step = 4_000_000_000\n",
		"[hp.ent_coef]\nmin = 0.0\nmax = 0.1\n[hp.update_epochs]\nmax = 1e300\n",
		"[population]\ntarget = -inf\nmin_generations = 0\n[checkpoint]\nkeep = 0\n",
		"[env.options]\nmax_episode_steps = 50\n",
		"seed = -9223372036854775808\nout_dir = \"a\\u0000b\"\n",
		"[net.Cnn]", // once decoded as a [net.cnn] that was not defined
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 16<<10 {
			return
		}
		cfg, err := parseConfig(context.Background(), data, false)
		if err != nil {
			if !errors.Is(err, ErrBadInput) {
				t.Fatalf("error does not match ErrBadInput: %v", err)
			}
			return
		}
		b, err := cfg.TOML()
		if err != nil {
			t.Fatalf("an accepted config does not encode: %v", err)
		}
		back, err := parseConfig(context.Background(), b, false)
		if err != nil {
			t.Fatalf("the resolved config does not parse: %v\n%s", err, b)
		}
		if !reflect.DeepEqual(cfg, back) {
			t.Fatalf("the resolved config parses back different:\n%+v\n%+v\n%s", cfg, back, b)
		}
		if _, err := cfg.Digest(); err != nil {
			t.Fatal(err)
		}
		env, err := envs.Make(cfg.Env.ID, cfg.Env.Options)
		if err != nil {
			t.Fatalf("an accepted config's env: %v", err)
		}
		if est, err := cfg.estimate(env.ObservationSpace(), env.ActionSpace()); err != nil || est.weights > 200_000 {
			return
		}
		full, err := ParseConfig(data)
		if err != nil {
			if !errors.Is(err, ErrBadInput) {
				t.Fatalf("error does not match ErrBadInput: %v", err)
			}
			return
		}
		if !reflect.DeepEqual(cfg, full) {
			t.Fatalf("the fast path and ParseConfig disagree:\n%+v\n%+v", cfg, full)
		}
	})
}

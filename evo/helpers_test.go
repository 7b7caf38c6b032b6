package evo

import (
	"os"
	"path/filepath"
	"testing"
)

// tinyConfig is a run of a few seconds: 3 CartPole agents of a small
// network training 256 steps per generation.
const tinyConfig = `
seed = 7
out_dir = "unused"

[env]
id = "CartPole-v1"
num_envs = 2
eval_episodes = 2

[population]
size = 3
max_steps = 3072
evo_steps = 256
workers = 1

[ppo]
learn_step = 128
batch_size = 64
update_epochs = 2

[net]
encoder = "mlp"
[net.mlp]
hidden = [16]
[net.latent]
size = 8
[net.head]
hidden = [16]

[mutation]
no_mutation = 0.2
architecture = 0.2
parameters = 0.2
activation = 0.2
rl_hp = 0.2
`

// writeConfig writes text to dir/name and returns its path.
func writeConfig(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// tiny returns the tiny config with out_dir in a new temporary directory.
func tiny(t *testing.T) Config {
	t.Helper()
	cfg, err := ParseConfig([]byte(tinyConfig))
	if err != nil {
		t.Fatal(err)
	}
	cfg.OutDir = filepath.Join(t.TempDir(), "run")
	return cfg
}

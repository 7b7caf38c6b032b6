package evo

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/evolverl/evolve/internal/runtest"
)

// sdeConfig is the tiny run on Pendulum with gSDE, SB3's value loss and
// sde_sample_freq evolving, with architecture mutations (which resize
// gSDE's log-std matrix when the head's last layer changes).
func sdeConfig(t *testing.T, extra string) Config {
	t.Helper()
	text := strings.Replace(runtest.TinyConfig, `id = "CartPole-v1"`, `id = "Pendulum-v1"`, 1)
	text = strings.Replace(text, "[ppo]\n", "[ppo]\nuse_sde = true\nsde_sample_freq = 4\nvalue_loss = \"mse\"\n", 1)
	text += "[hp.sde_sample_freq]\nmin = 1\nmax = 16\n" + extra
	return parseTiny(t, text)
}

// TestSDERunIsReproducibleAndResumes: a gSDE population gives the same files
// with 1 and 2 workers and after a stop and resume, and evolution moves
// sde_sample_freq (a metrics column).
func TestSDERunIsReproducibleAndResumes(t *testing.T) {
	dir := sameRunWhateverWorkers(t, func(t *testing.T) Config { return sdeConfig(t, "") })
	wantColumnMoves(t, dir, "sde_sample_freq")
}

// TestSDEConfigErrorsNameTheKey: an [hp.sde_sample_freq] range without
// gSDE, and gSDE on a Discrete action space, are config errors naming the
// key.
func TestSDEConfigErrorsNameTheKey(t *testing.T) {
	text := runtest.TinyConfig + "[hp.sde_sample_freq]\nmin = 1\nmax = 16\n"
	if _, err := ParseConfig([]byte(text)); err == nil || !strings.Contains(err.Error(), "hp.sde_sample_freq") {
		t.Errorf("[hp.sde_sample_freq] without use_sde: %v", err)
	}
	text = strings.Replace(runtest.TinyConfig, "[ppo]\n", "[ppo]\nuse_sde = true\nsde_sample_freq = 4\n", 1) + "[hp.sde_sample_freq]\nmin = 0\nmax = 8\n"
	if _, err := ParseConfig([]byte(text)); err == nil || !strings.Contains(err.Error(), "hp.sde_sample_freq]: min = 0") {
		t.Errorf("[hp.sde_sample_freq] min = 0: %v", err)
	}
	text = strings.Replace(runtest.TinyConfig, "[ppo]\n", "[ppo]\nuse_sde = true\n", 1)
	cfg, err := ParseConfig([]byte(text))
	if err == nil {
		cfg.OutDir = filepath.Join(t.TempDir(), "run")
		_, err = run(t, cfg, Options{}, nil)
	}
	if err == nil || !strings.Contains(err.Error(), "use_sde") {
		t.Errorf("use_sde on CartPole: %v, want an error naming use_sde", err)
	}
}

package evo

import (
	"strings"
	"testing"

	"github.com/evolverl/evolve/internal/runtest"
)

// vtraceConfig is the tiny CartPole run with V-trace learning from a
// one-update-stale actor, its ρ̄ evolving.
func vtraceConfig(t *testing.T) Config {
	t.Helper()
	text := strings.Replace(runtest.TinyConfig, "[ppo]\n", "[ppo]\nadvantage = \"vtrace\"\nactor_lag = 1\n", 1)
	text = strings.Replace(text, "rl_hp = 0.2", "rl_hp = 0.8", 1) // ρ̄ is one of four mutable hyperparameters
	text += "[hp.vtrace_rho_clip]\nmin = 0.5\nmax = 2\n"
	return parseTiny(t, text)
}

// TestVTraceRunIsReproducibleAndResumes: a V-trace population with a lagged
// actor gives the same files with 1 and 2 workers and after a stop and
// resume, the absent clips are IMPALA's 1, and evolution moves ρ̄.
func TestVTraceRunIsReproducibleAndResumes(t *testing.T) {
	cfg := vtraceConfig(t)
	if cfg.PPO.VTraceRhoClip != 1 || cfg.PPO.VTraceCClip != 1 {
		t.Fatalf("absent clips: ρ̄ %v, c̄ %v, want 1 and 1", cfg.PPO.VTraceRhoClip, cfg.PPO.VTraceCClip)
	}
	dir := sameRunWhateverWorkers(t, vtraceConfig)
	wantColumnMoves(t, dir, "vtrace_rho_clip")
}

// TestVTraceConfigErrorsNameTheKey: explicit zero clips, clips or a range
// without V-trace, V-trace with an LSTM and a negative lag are config
// errors naming the key.
func TestVTraceConfigErrorsNameTheKey(t *testing.T) {
	for _, c := range []struct{ ppo, extra, want string }{
		{"advantage = \"vtrace\"\nvtrace_rho_clip = 0\n", "", "ppo.vtrace_rho_clip = 0"},
		{"advantage = \"vtrace\"\nvtrace_c_clip = -0.5\n", "", "ppo.vtrace_c_clip = -0.5"},
		{"vtrace_c_clip = 0.5\n", "", `set only with advantage = "vtrace"`},
		{"", "[hp.vtrace_rho_clip]\nmin = 0.5\nmax = 2\n", "hp.vtrace_rho_clip"},
		{"advantage = \"vtrace\"\n", "[hp.vtrace_rho_clip]\nmin = 0\nmax = 2\n", "hp.vtrace_rho_clip.min = 0"},
		{"advantage = \"v-trace\"\n", "", `ppo.advantage = "v-trace"`},
		{"actor_lag = -1\n", "", "ppo.actor_lag = -1"},
		{"advantage = \"vtrace\"\n", "lstm", `not with net.encoder = "lstm"`},
	} {
		text := strings.Replace(runtest.TinyConfig, "[ppo]\n", "[ppo]\n"+c.ppo, 1)
		if c.extra == "lstm" {
			text = strings.Replace(text, "encoder = \"mlp\"\n[net.mlp]\nhidden = [16]\n", "encoder = \"lstm\"\n", 1)
		} else {
			text += c.extra
		}
		if _, err := ParseConfig([]byte(text)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q %q: %v, want an error containing %q", c.ppo, c.extra, err, c.want)
		}
	}
}

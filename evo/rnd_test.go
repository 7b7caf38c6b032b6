package evo

import (
	"strings"
	"testing"

	"github.com/evolverl/evolve/internal/runtest"
)

// rndConfig is the tiny CartPole run with RND, its coefficient evolving.
func rndConfig(t *testing.T) Config {
	t.Helper()
	text := strings.Replace(runtest.TinyConfig, "[ppo]\n", "[ppo]\nrnd_coef = 0.5\nrnd_hidden = 16\nrnd_embed = 8\n", 1)
	text = strings.Replace(text, "rl_hp = 0.2", "rl_hp = 0.8", 1)
	text += "[hp.rnd_coef]\nmin = 0.1\nmax = 2\n"
	return parseTiny(t, text)
}

// TestRNDRunIsReproducibleAndResumes: a population with RND gives the same
// files with 1 and 2 workers and after a stop and resume (RND's networks,
// optimizer and statistics travel in the agent files), and evolution
// moves rnd_coef.
func TestRNDRunIsReproducibleAndResumes(t *testing.T) {
	dir := sameRunWhateverWorkers(t, rndConfig)
	wantColumnMoves(t, dir, "rnd_coef")
	wantColumnMoves(t, dir, "intrinsic_reward")
	wantColumnMoves(t, dir, "rnd_loss")
}

// TestRNDConfigErrorsNameTheKey: a range that reaches 0 (a mutation would
// turn RND off), a range without RND and RND keys without rnd_coef are
// config errors naming the key.
func TestRNDConfigErrorsNameTheKey(t *testing.T) {
	for _, c := range []struct{ ppo, extra, want string }{
		{"rnd_coef = 0.5\n", "[hp.rnd_coef]\nmin = 0\nmax = 2\n", "hp.rnd_coef.min = 0"},
		{"", "[hp.rnd_coef]\nmin = 0.1\nmax = 2\n", "hp.rnd_coef"},
		{"rnd_gamma = 0.9\n", "", "rnd_gamma is set, but RND is off"},
		{"rnd_coef = -0.5\n", "", "rnd_coef = -0.5"},
	} {
		text := strings.Replace(runtest.TinyConfig, "[ppo]\n", "[ppo]\n"+c.ppo, 1) + c.extra
		if _, err := ParseConfig([]byte(text)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q %q: %v, want an error containing %q", c.ppo, c.extra, err, c.want)
		}
	}
}

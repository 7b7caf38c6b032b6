package evo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/internal/runtest"
	"github.com/evolverl/evolve/record"
)

// writeDemo records episodes of CartPole pushed by a fixed pattern of
// actions (or, with badSpace, of a 5-value observation) to dir/name.
func writeDemo(t *testing.T, dir, name string, badSpace bool) {
	t.Helper()
	env, err := envs.Make("CartPole-v1", nil)
	if err != nil {
		t.Fatal(err)
	}
	obsSpace := env.ObservationSpace()
	if badSpace {
		obsSpace = envs.NewBox(-1, 1, 5)
	}
	w, err := record.Create(filepath.Join(dir, name), obsSpace, env.ActionSpace())
	if err != nil {
		t.Fatal(err)
	}
	for ep := range 2 {
		obs, _ := env.Reset(int64(ep))
		for k := 0; ; k++ {
			here := append([]float32(nil), obs...)
			if badSpace {
				here = append(here, 0)
			}
			act := []float32{float32(k / 3 % 2)}
			next, r, term, trunc, _ := env.Step(act)
			if err := w.Add(record.Step{Obs: here, Action: act, Reward: r, Terminated: term, Truncated: trunc, EpisodeStart: k == 0}); err != nil {
				t.Fatal(err)
			}
			if term || trunc {
				break
			}
			obs = next
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// demosConfig is the tiny CartPole run with PPO+D replaying the demos of
// dir.
func demosConfig(t *testing.T, dir string) Config {
	t.Helper()
	text := strings.Replace(runtest.TinyConfig, "[ppo]\n", "[ppo]\ndemo_rho = 0.3\ndemo_phi = 0.3\n", 1)
	text += "[demos]\ndir = " + `"` + filepath.ToSlash(dir) + `"` + "\n"
	return parseTiny(t, text)
}

// TestDemosRunIsReproducibleAndResumes: a PPO+D population gives the same
// files with 1 and 2 workers and after a stop and resume, and its config
// keeps [demos].
func TestDemosRunIsReproducibleAndResumes(t *testing.T) {
	dir := t.TempDir()
	writeDemo(t, dir, "a.npz", false)
	with := sameRunWhateverWorkers(t, func(t *testing.T) Config { return demosConfig(t, dir) })
	if b := readFile(t, filepath.Join(with, "config.toml")); !strings.Contains(string(b), "[demos]") {
		t.Errorf("config.toml lacks [demos]:\n%s", b)
	}
	// The demos are replayed: without them (an empty directory) the run differs.
	none := demosConfig(t, t.TempDir())
	if _, err := run(t, none, Options{}, nil); err != nil {
		t.Fatal(err)
	}
	if a, b := runtest.Metrics(t, with), runtest.Metrics(t, none.OutDir); strings.Join(a[len(a)-1], ",") == strings.Join(b[len(b)-1], ",") {
		t.Error("the run with demos trained as the run without")
	}
}

// TestDemosBadInput: a demo file of other spaces is bad input naming the
// file and the field, before anything is written; so is a remote pool;
// the config keys are checked.
func TestDemosBadInput(t *testing.T) {
	dir := t.TempDir()
	writeDemo(t, dir, "bad.npz", true)
	cfg := demosConfig(t, dir)
	_, err := New(cfg, Options{})
	if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), filepath.Join(dir, "bad.npz")) ||
		!strings.Contains(err.Error(), "observation space") {
		t.Errorf("New with a demo of another observation space: %v", err)
	}
	if _, err := os.Stat(cfg.OutDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused run left %s", cfg.OutDir)
	}
	good := t.TempDir()
	writeDemo(t, good, "a.npz", false)
	if _, err := New(demosConfig(t, good), Options{Pool: remotePool{}}); !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "local workers") {
		t.Errorf("New with [demos] and a remote pool: %v", err)
	}
	for _, c := range []struct{ ppo, extra, want string }{
		{"", "[demos]\ndir = \"" + filepath.ToSlash(good) + "\"\n", "demos.dir is set, but PPO+D is off"},
		{"demo_rho = 0.5\n", "[demos]\ndir = \"/no/such/dir\"\n", "demos.dir"},
		{"demo_rho = 1.5\n", "", "demo_rho = 1.5"},
		{"demo_rho = 0.6\ndemo_phi = 0.6\n", "", "demo_rho + demo_phi = 1.2"},
		{"demo_rho = 0.5\ntarget_kl = 0.02\n", "", "target_kl"},
		{"demo_alpha = 3\n", "", "demo_alpha or demo_capacity is set, but PPO+D is off"},
	} {
		text := strings.Replace(runtest.TinyConfig, "[ppo]\n", "[ppo]\n"+c.ppo, 1) + c.extra
		if _, err := ParseConfig([]byte(text)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q %q: %v, want an error containing %q", c.ppo, c.extra, err, c.want)
		}
	}
}

// remotePool stands for a pool of remote workers.
type remotePool struct{}

func (remotePool) Train(context.Context, Config, []Task, func(int)) ([]Result, error) {
	return nil, errors.New("not used")
}

// TestDemosAddedWhileTrainingJoin: files added to the directory join at
// the next read, in name order; a bad one is skipped with a warning naming
// it, and the demos read before stay.
func TestDemosAddedWhileTrainingJoin(t *testing.T) {
	dir := t.TempDir()
	writeDemo(t, dir, "b.npz", false)
	env, _ := envs.Make("CartPole-v1", nil)
	obs, act := env.ObservationSpace(), env.ActionSpace()
	l := &demoLoader{dir: dir, seen: map[string]bool{}}
	first, err := l.load(obs, act, true, nil)
	if err != nil || len(first) != 2 {
		t.Fatalf("first read: %d demos, %v; want the 2 episodes of b.npz", len(first), err)
	}
	writeDemo(t, dir, "a.npz", false)
	writeDemo(t, dir, "c.npz", true)
	var warned []string
	all, err := l.load(obs, act, false, func(msg string, args ...any) {
		warned = append(warned, msg+" "+strings.TrimSpace(strings.Repeat(" ", 0)+args[1].(string)))
	})
	if err != nil || len(all) != 4 || l.files != 2 {
		t.Fatalf("second read: %d demos from %d files, %v; want 4 from 2", len(all), l.files, err)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "c.npz") {
		t.Errorf("warnings %q, want one naming c.npz", warned)
	}
	if again, _ := l.load(obs, act, false, func(string, ...any) { t.Error("a file warned about twice") }); len(again) != 4 {
		t.Errorf("a third read has %d demos, want the same 4", len(again))
	}
}

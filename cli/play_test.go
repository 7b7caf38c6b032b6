package cli

import (
	"context"
	"errors"
	"fmt"
	"image/gif"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/internal/pytest"
	"github.com/evolverl/evolve/netconf"
	"github.com/evolverl/evolve/record"
)

// tinyRun trains the tiny CartPole run and returns its directory.
func tinyRun(t *testing.T) string {
	t.Helper()
	_, dir := trainTiny(t, 1024)
	return dir
}

var episodeLine = regexp.MustCompile(`^episode (\d+)  return (-?[0-9.]+)  length (\d+)$`)

// episodes checks play's stdout: one line per episode, numbered from 1,
// then the mean line. It returns the lengths.
func episodes(t *testing.T, stdout string, n int) []int {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != n+1 {
		t.Fatalf("stdout has %d lines, want %d episodes and a mean:\n%s", len(lines), n, stdout)
	}
	var lengths []int
	for i, l := range lines[:n] {
		m := episodeLine.FindStringSubmatch(l)
		if m == nil || m[1] != strconv.Itoa(i+1) {
			t.Fatalf("line %d is %q, want episode %d's return and length", i+1, l, i+1)
		}
		ret, _ := strconv.ParseFloat(m[2], 64)
		length, _ := strconv.Atoi(m[3])
		// CartPole pays 1 per step.
		if ret != float64(length) || length < 1 {
			t.Errorf("line %q: CartPole's return is its length", l)
		}
		lengths = append(lengths, length)
	}
	want := fmt.Sprintf(" over %d episodes (length ", n)
	if !strings.HasPrefix(lines[n], "mean return ") || !strings.Contains(lines[n], " ± ") || !strings.Contains(lines[n], want) {
		t.Errorf("last line %q, want the mean ± std over %d episodes", lines[n], n)
	}
	if n > 1 {
		// The standard error from the returns (CartPole's are the lengths),
		// with the sample std.
		mean, ss := 0.0, 0.0
		for _, l := range lengths {
			mean += float64(l) / float64(n)
		}
		for _, l := range lengths {
			ss += (float64(l) - mean) * (float64(l) - mean)
		}
		se := fmt.Sprintf("; standard error %.2f", math.Sqrt(ss/float64(n-1)/float64(n)))
		if !strings.HasSuffix(lines[n], se) {
			t.Errorf("last line %q, want it to end in %q", lines[n], se)
		}
	}
	return lengths
}

func TestPlay(t *testing.T) {
	dir := tinyRun(t)
	out := t.TempDir()
	gifPath, npzPath := filepath.Join(out, "play.gif"), filepath.Join(out, "play.npz")

	// A run directory: its elite on the env of its config.toml.
	code, stdout, stderr := evolve(context.Background(), "play", "-agent", dir, "-episodes", "2",
		"-gif", gifPath, "-record", npzPath)
	if code != 0 {
		t.Fatalf("play exits %d; stderr:\n%s", code, stderr)
	}
	lengths := episodes(t, stdout, 2)
	steps := lengths[0] + lengths[1]

	f, err := os.Open(gifPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g, err := gif.DecodeAll(f)
	if err != nil {
		t.Fatalf("%s: %v", gifPath, err)
	}
	// A frame after each reset and each step, up to the cap.
	if want := min(steps+2, gifMaxFrames); len(g.Image) != want {
		t.Errorf("GIF has %d frames, want %d", len(g.Image), want)
	}
	if len(g.Image) < 2 || g.Delay[0] != gifDelay {
		t.Errorf("GIF: %d frames, delay %v", len(g.Image), g.Delay[:min(len(g.Delay), 1)])
	}

	tr, err := record.Read(npzPath)
	if err != nil {
		t.Fatalf("%s: %v", npzPath, err)
	}
	if n := tr.Len(); n != steps {
		t.Errorf("%s holds %d steps, want %d", npzPath, n, steps)
	}

	// The same elite file with -env, -max-steps and -stochastic: every
	// episode is cut at 3 steps.
	code, stdout, stderr = evolve(context.Background(), "play", "-agent", filepath.Join(dir, "elite.safetensors"),
		"-env", "CartPole-v1", "-episodes", "3", "-max-steps", "3", "-stochastic", "-seed", "7")
	if code != 0 {
		t.Fatalf("play -env exits %d; stderr:\n%s", code, stderr)
	}
	for i, l := range episodes(t, stdout, 3) {
		if l != 3 {
			t.Errorf("episode %d has length %d under -max-steps 3", i+1, l)
		}
	}

	// Deterministic play from the same seed repeats itself.
	_, first, _ := evolve(context.Background(), "play", "-agent", dir, "-episodes", "2", "-seed", "5")
	_, second, _ := evolve(context.Background(), "play", "-agent", dir, "-episodes", "2", "-seed", "5")
	if first != second || first == "" {
		t.Errorf("two deterministic plays differ:\n%s\n%s", first, second)
	}

	// The elite file alone, away from its run, plays on the env it records,
	// as the run directory does.
	alone := filepath.Join(out, "alone.safetensors")
	if err := os.WriteFile(alone, mustRead(t, filepath.Join(dir, "elite.safetensors")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, third, stderr := evolve(context.Background(), "play", "-agent", alone, "-episodes", "2", "-seed", "5")
	if code != 0 || third != first {
		t.Errorf("play of the elite file without -env: exit %d, stdout\n%s\nwant\n%s\nstderr:\n%s", code, third, first, stderr)
	}
}

func TestPlayBadInput(t *testing.T) {
	dir := tinyRun(t)
	// An agent file from before files recorded their env (a CartPole agent).
	elite := filepath.Join("..", "agent", "testdata", "compat", "mlp-cartpole.safetensors")
	tmp := t.TempDir()
	noConfig := filepath.Join(tmp, "copy")
	if err := os.Mkdir(noConfig, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(noConfig, "elite.safetensors"), mustRead(t, elite), 0o644); err != nil {
		t.Fatal(err)
	}
	// A run that has not finished a generation: its config and the
	// header of metrics.csv, no elite yet.
	fresh := filepath.Join(tmp, "fresh")
	if err := os.Mkdir(fresh, 0o755); err != nil {
		t.Fatal(err)
	}
	header, _, _ := strings.Cut(string(mustRead(t, filepath.Join(dir, "metrics.csv"))), "\n")
	for name, b := range map[string][]byte{"config.toml": mustRead(t, filepath.Join(dir, "config.toml")), "metrics.csv": []byte(header + "\n")} {
		if err := os.WriteFile(filepath.Join(fresh, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	junk := filepath.Join(tmp, "junk.safetensors")
	if err := os.WriteFile(junk, []byte("not an agent"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"no agent", nil, []string{"-agent"}},
		{"missing agent", []string{"-agent", filepath.Join(tmp, "none.safetensors")}, []string{"-agent", "none.safetensors"}},
		{"junk agent", []string{"-agent", junk}, []string{"junk.safetensors"}},
		{"no elite", []string{"-agent", tmp}, []string{"elite.safetensors", "not a run directory"}},
		{"run without a generation", []string{"-agent", fresh}, []string{"-agent: run " + fresh + " has not finished a generation yet"}},
		{"bare file without env", []string{"-agent", elite}, []string{"-env is needed", elite}},
		{"dir without config", []string{"-agent", noConfig}, []string{"config.toml", "-env"}},
		{"unknown env", []string{"-agent", elite, "-env", "Nope-v0"}, []string{"-env Nope-v0", "unknown env id"}},
		{"other spaces", []string{"-agent", dir, "-env", "Acrobot-v1"}, []string{"-env Acrobot-v1", "observation space"}},
		{"zero episodes", []string{"-agent", dir, "-episodes", "0"}, []string{"-episodes 0"}},
		{"negative seed", []string{"-agent", dir, "-seed", "-1"}, []string{"-seed -1"}},
		{"zero max steps", []string{"-agent", dir, "-max-steps", "0"}, []string{"-max-steps 0"}},
		{"stray argument", []string{"-agent", dir, "extra"}, []string{`unexpected argument "extra"`}},
		{"unknown flag", []string{"-agent", dir, "-gfi", "a.gif"}, []string{"-gfi"}},
		{"gif in missing dir", []string{"-agent", dir, "-gif", filepath.Join(tmp, "no", "a.gif")}, []string{"-gif", "a.gif"}},
		{"record in missing dir", []string{"-agent", dir, "-record", filepath.Join(tmp, "no", "a.npz")}, []string{"-record", "a.npz"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := evolve(context.Background(), append([]string{"play"}, tc.args...)...)
			if code != exitBadInput {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitBadInput, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout not empty:\n%s", stdout)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not name %q:\n%s", w, stderr)
				}
			}
		})
	}
}

// TestPlayMasksAndRecurrent plays untrained agents: sampled moves on
// Connect Four, where a move into a full column is illegal and only the
// masks keep the agent from it, and an LSTM agent on CartPole.
func TestPlayMasksAndRecurrent(t *testing.T) {
	for _, tc := range []struct {
		env     string
		encoder netconf.EncoderKind
		extra   []string
	}{
		{"ConnectFour-v0", netconf.EncoderCNN, []string{"-stochastic", "-episodes", "20"}},
		{"CartPole-v1", netconf.EncoderLSTM, []string{"-episodes", "2"}},
	} {
		t.Run(tc.env, func(t *testing.T) {
			env, err := envs.Make(tc.env, nil)
			if err != nil {
				t.Fatal(err)
			}
			cfg := agent.DefaultConfig()
			cfg.Net = netconf.DefaultSpec(tc.encoder)
			if tc.encoder == netconf.EncoderCNN {
				cfg.Net.CNN.Strides = []int{1, 1} // 6×7 boards
			}
			a, err := agent.New(env.ObservationSpace(), env.ActionSpace(), cfg, 1)
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(t.TempDir(), "agent.safetensors")
			if err := a.Save(file); err != nil {
				t.Fatal(err)
			}
			gifPath, npzPath := filepath.Join(t.TempDir(), "a.gif"), filepath.Join(t.TempDir(), "a.npz")
			args := append([]string{"play", "-agent", file, "-env", tc.env, "-gif", gifPath, "-record", npzPath}, tc.extra...)
			code, stdout, stderr := evolve(context.Background(), args...)
			if code != 0 {
				t.Fatalf("play exits %d; stderr:\n%s", code, stderr)
			}
			tr, err := record.Read(npzPath)
			if err != nil {
				t.Fatal(err)
			}
			starts := 0
			for _, s := range tr.EpisodeStarts {
				if s {
					starts++
				}
			}
			if n := strings.Count(stdout, "\n") - 1; starts != n || !tr.EpisodeStarts[0] {
				t.Errorf("%d episode starts in %s, want %d:\n%s", starts, npzPath, n, stdout)
			}
		})
	}
}

// A run written when MinAtar/Breakout-v1 named the full action set (see
// testdata/minatar-v1-full-run/README.md): its agents of 6 actions play and
// train on MinAtar/Breakout-v0, with a note saying so.
func TestPlayAndResumeARunFromBeforeMinAtarV0(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.CopyFS(dir, os.DirFS("testdata/minatar-v1-full-run")); err != nil {
		t.Fatal(err)
	}
	const note = "MinAtar/Breakout-v1 now names MinAtar's minimal action set"
	for _, args := range [][]string{
		{"play", "-agent", dir, "-episodes", "2"},
		{"play", "-agent", filepath.Join(dir, "elite.safetensors"), "-env", "MinAtar/Breakout-v1", "-episodes", "2"},
	} {
		code, stdout, stderr := evolve(context.Background(), args...)
		if code != exitOK || !strings.Contains(stderr, note) || !strings.Contains(stderr, "plays MinAtar/Breakout-v0") {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant 0 and a note that it plays MinAtar/Breakout-v0", args, code, stderr)
		}
		if !strings.Contains(stdout, "mean return") {
			t.Errorf("%v: stdout:\n%s", args, stdout)
		}
	}
	code, _, stderr := evolve(context.Background(), "-resume", dir, "-max-steps", "1024")
	if code != exitOK || !strings.Contains(stderr, "they train and play on MinAtar/Breakout-v0") {
		t.Fatalf("resume: exit %d, stderr:\n%s\nwant 0 and a note that it trains on MinAtar/Breakout-v0", code, stderr)
	}
	if s := string(mustRead(t, filepath.Join(dir, "checkpoints", "latest"))); s != "gen-000002\n" {
		t.Errorf("after resuming: latest checkpoint %q, want gen-000002", s)
	}
	// The agent files the resumed run writes record the env they play on,
	// so a bare file plays there without -env or a note.
	files, _ := filepath.Glob(filepath.Join(dir, "checkpoints", "gen-000002", "agent-*.safetensors"))
	if len(files) == 0 {
		t.Fatal("no agent files in gen-000002")
	}
	a, err := agent.Load(files[0])
	if err != nil || a.Env.ID != "MinAtar/Breakout-v0" {
		t.Fatalf("%s records env %q (%v), want MinAtar/Breakout-v0", files[0], a.Env.ID, err)
	}
	code, stdout, stderr := evolve(context.Background(), "play", "-agent", files[0], "-episodes", "1")
	if code != exitOK || strings.Contains(stderr, "note") || !strings.Contains(stdout, "mean return") {
		t.Errorf("bare agent file: exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// TestPlayGIFSaysWhyAGymEnvCannotRender: a Gymnasium env whose render
// raises (pygame missing) fails -gif with the child's own reason, not only
// "cannot render itself"; an env without rendering says that.
func TestPlayGIFSaysWhyAGymEnvCannotRender(t *testing.T) {
	pytest.StdlibEnvs(t, filepath.Join("..", "envs", "testdata", "gymtest"))
	dir := t.TempDir()
	config := "[env]\nid = \"gym:test\"\n[env.options]\nmodule_env = \"gymtest:RenderRaises\"\n"
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(envs.NewBox(0, 10, 1), envs.Discrete{N: 4}, agent.DefaultConfig(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Save(filepath.Join(dir, "elite.safetensors")); err != nil {
		t.Fatal(err)
	}
	gifPath := filepath.Join(t.TempDir(), "a.gif")
	code, _, stderr := evolve(context.Background(), "play", "-agent", dir, "-gif", gifPath)
	if code != exitBadInput || !strings.Contains(stderr, "pygame is not installed") || !strings.Contains(stderr, "-gif "+gifPath) {
		t.Errorf("exit %d, stderr:\n%s\nwant 2 with the child's reason", code, stderr)
	}
	if _, err := os.Stat(gifPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed -gif left %s: %v", gifPath, err)
	}
}

package cli

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/gif"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/netconf"
	"github.com/evolverl/evolve/record"
)

// tinyRun trains the tiny CartPole run and returns its directory.
func tinyRun(t *testing.T) string {
	t.Helper()
	_, dir := trainTiny(t, 1024)
	return dir
}

var episodeLine = regexp.MustCompile(`^episode (\d+)  return (-?[0-9.]+)  length (\d+)( \(cut by -max-steps\))?$`)

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
	if n := strings.Count(stdout, "(cut by -max-steps)"); n != 3 {
		t.Errorf("%d episodes said to be cut by -max-steps, want 3:\n%s", n, stdout)
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
	// An agent file named .npz, which -record must not overwrite, and a
	// directory named .npz.
	junkNPZ := filepath.Join(tmp, "agent.npz")
	if err := os.WriteFile(junkNPZ, mustRead(t, filepath.Join(dir, "elite.safetensors")), 0o644); err != nil {
		t.Fatal(err)
	}
	dirNPZ := filepath.Join(tmp, "d.npz")
	if err := os.Mkdir(dirNPZ, 0o755); err != nil {
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
		{"negative max frames", []string{"-agent", dir, "-gif", filepath.Join(tmp, "a.gif"), "-max-frames", "-1"}, []string{"-max-frames -1: want >= 1, or 0"}},
		{"max frames not a number", []string{"-agent", dir, "-gif", filepath.Join(tmp, "a.gif"), "-max-frames", "all"}, []string{"-max-frames"}},
		{"max frames without gif", []string{"-agent", dir, "-max-frames", "100"}, []string{"-max-frames applies to -gif only"}},
		{"stray argument", []string{"-agent", dir, "extra"}, []string{`unexpected argument "extra"`}},
		{"run directory without -agent", []string{dir}, []string{`unexpected argument`, "give the agent file or run directory with -agent " + dir}},
		{"unknown flag", []string{"-agent", dir, "-gfi", "a.gif"}, []string{"-gfi"}},
		{"gif in missing dir", []string{"-agent", dir, "-gif", filepath.Join(tmp, "no", "a.gif")}, []string{"-gif", "a.gif"}},
		{"gif not named .gif", []string{"-agent", dir, "-gif", filepath.Join(tmp, "a.png")}, []string{"-gif", "a.png", "ending in .gif"}},
		{"record in missing dir", []string{"-agent", dir, "-record", filepath.Join(tmp, "no", "a.npz")}, []string{"-record", "a.npz"}},
		{"record not named .npz", []string{"-agent", dir, "-record", filepath.Join(dir, "metrics.csv")}, []string{"-record", "metrics.csv", "ending in .npz"}},
		{"record onto the agent", []string{"-agent", junkNPZ, "-record", junkNPZ}, []string{"-record " + junkNPZ, "the agent played"}},
		{"record a directory", []string{"-agent", dir, "-record", dirNPZ}, []string{"-record", "is a directory"}},
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

// untrainedAgent saves a new agent of network spec for env id and returns
// its file.
func untrainedAgent(t *testing.T, id string, spec netconf.Spec) string {
	t.Helper()
	env, err := envs.Make(id, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer envs.Close(env)
	cfg := agent.DefaultConfig()
	cfg.Net = spec
	a, err := agent.New(env.ObservationSpace(), env.ActionSpace(), cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "agent.safetensors")
	if err := a.Save(file); err != nil {
		t.Fatal(err)
	}
	return file
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
			spec := netconf.DefaultSpec(tc.encoder)
			if tc.encoder == netconf.EncoderCNN {
				spec.CNN.Strides = []int{1, 1} // 6×7 boards
			}
			file := untrainedAgent(t, tc.env, spec)
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
			// The recording keeps a masked env's masks, and every action
			// taken was legal under its step's.
			if masked := tc.env == "ConnectFour-v0"; masked != (tr.ActionMasks != nil) {
				t.Fatalf("masks recorded: %v, want %v", tr.ActionMasks != nil, masked)
			}
			full := 0
			for i, m := range tr.ActionMasks {
				if !m[int(tr.Actions[i][0])] {
					t.Fatalf("step %d: action %v, illegal under its recorded mask %v", i, tr.Actions[i], m)
				}
				if !slices.Contains(m, false) {
					full++
				}
			}
			if len(tr.ActionMasks) > 0 && full == len(tr.ActionMasks) {
				t.Errorf("every recorded mask allows every column: not the env's")
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

// decodeGIF reads the GIF at path.
func decodeGIF(t *testing.T, path string) *gif.GIF {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g, err := gif.DecodeAll(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return g
}

// composeGIF returns the pictures a viewer shows for g, frame by frame:
// each frame drawn over what the frame before left on the canvas, as that
// frame's disposal method says.
func composeGIF(g *gif.GIF) []*image.RGBA {
	canvas := image.NewRGBA(image.Rect(0, 0, g.Config.Width, g.Config.Height))
	var shown []*image.RGBA
	for i, m := range g.Image {
		before := clone(canvas)
		draw.Draw(canvas, m.Bounds(), m, m.Bounds().Min, draw.Over)
		shown = append(shown, clone(canvas))
		switch g.Disposal[i] {
		case gif.DisposalBackground:
			draw.Draw(canvas, m.Bounds(), image.Transparent, image.Point{}, draw.Src)
		case gif.DisposalPrevious:
			canvas = before
		}
	}
	return shown
}

func clone(img *image.RGBA) *image.RGBA {
	c := image.NewRGBA(img.Rect)
	copy(c.Pix, img.Pix)
	return c
}

// rendered is a picture of an env with the episode (from 1) and the
// return so far that play's overlay writes on it.
type rendered struct {
	img     *image.RGBA
	episode int
	ret     float64
}

// replay plays the actions of trajectory tr again on a new env id,
// resetting as play does (the first episode from seed, the others
// continuing the env's stream), and returns the env's picture after each
// reset and each step.
func replay(t *testing.T, id string, seed int64, tr *record.Trajectory) []rendered {
	t.Helper()
	env, err := envs.Make(id, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer envs.Close(env)
	var out []rendered
	shot := func(ep int, ret float64) {
		img, err := envs.RenderErr(env)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rendered{img.(*image.RGBA), ep, ret})
	}
	ep, ret := 0, 0.0
	for i := range tr.Len() {
		if tr.EpisodeStarts[i] {
			if ep++; ep == 1 {
				env.Reset(seed)
			} else {
				env.Reset(envs.NoSeed)
			}
			ret = 0
			shot(ep, ret)
		}
		_, r, _, _, _ := env.Step(tr.Actions[i])
		if r != tr.Rewards[i] {
			t.Fatalf("replay of %s: step %d pays %v, play recorded %v", id, i, r, tr.Rewards[i])
		}
		ret += r
		shot(ep, ret)
	}
	return out
}

// checkOverlay checks that img is plain with the overlay in box: the same
// outside the box, darker inside it but for white text in it, in the
// top-left corner.
func checkOverlay(t *testing.T, frame int, plain, img *image.RGBA, box image.Rectangle) {
	t.Helper()
	if box.Min != (image.Point{}) || box.Dx() < 40 || box.Dy() != 19 {
		t.Fatalf("frame %d: overlay box %v, want a line of text in the top-left corner", frame, box)
	}
	text := 0
	for y := range img.Rect.Dy() {
		for x := range img.Rect.Dx() {
			p, q := img.RGBAAt(x, y), plain.RGBAAt(x, y)
			in := image.Pt(x, y).In(box)
			switch {
			case !in && p != q:
				t.Fatalf("frame %d: the overlay changed pixel (%d, %d) outside its box %v", frame, x, y, box)
			case in && p == (color.RGBA{255, 255, 255, 255}):
				text++
			case in && (p.R > q.R/2+1 || p.G > q.G/2+1 || p.B > q.B/2+1):
				t.Fatalf("frame %d: pixel (%d, %d) in the overlay box is %v over %v, want it shaded", frame, x, y, p, q)
			}
		}
	}
	if text < 30 {
		t.Errorf("frame %d: %d white pixels in the overlay box, want its text", frame, text)
	}
}

// firstDiff returns the first pixel where a and b differ.
func firstDiff(a, b *image.RGBA) (image.Point, bool) {
	if a.Rect != b.Rect {
		return a.Rect.Min, true
	}
	for y := a.Rect.Min.Y; y < a.Rect.Max.Y; y++ {
		for x := a.Rect.Min.X; x < a.Rect.Max.X; x++ {
			if a.RGBAAt(x, y) != b.RGBAAt(x, y) {
				return image.Pt(x, y), true
			}
		}
	}
	return image.Point{}, false
}

// TestPlayMaxFrames: -max-frames N ends the GIF after N frames over all
// episodes and says so; 0 and the default (far above these episodes) keep
// every frame.
func TestPlayMaxFrames(t *testing.T) {
	file := untrainedAgent(t, "CartPole-v1", netconf.DefaultSpec(netconf.EncoderMLP))
	play := func(t *testing.T, extra ...string) (frames int, lengths []int, stderr, gifPath string) {
		gifPath = filepath.Join(t.TempDir(), "a.gif")
		args := append([]string{"play", "-agent", file, "-env", "CartPole-v1", "-episodes", "2", "-max-steps", "10", "-gif", gifPath}, extra...)
		code, stdout, stderr := evolve(context.Background(), args...)
		if code != exitOK {
			t.Fatalf("play exits %d; stderr:\n%s", code, stderr)
		}
		return len(decodeGIF(t, gifPath).Image), episodes(t, stdout, 2), stderr, gifPath
	}
	frames, lengths, _, _ := play(t)
	// A frame after each reset and each step.
	all := lengths[0] + lengths[1] + 2
	if frames != all || lengths[0] < 5 {
		t.Fatalf("GIF has %d frames for episodes of %v steps, want %d", frames, lengths, all)
	}
	for _, tc := range []struct {
		name        string
		limit, want int
		cut         bool
	}{
		{"no limit", 0, all, false},
		{"within the first episode", 4, 4, true},
		{"into the second episode", lengths[0] + 3, lengths[0] + 3, true},
		{"exactly all", all, all, false},
		{"above all", all + 1, all, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			frames, _, stderr, gifPath := play(t, "-max-frames", strconv.Itoa(tc.limit))
			if frames != tc.want {
				t.Errorf("GIF has %d frames, want %d", frames, tc.want)
			}
			wrote := fmt.Sprintf("wrote %s (%d frames)", gifPath, tc.want)
			if tc.cut {
				wrote = fmt.Sprintf("wrote %s (%d frames, cut at -max-frames %d)", gifPath, tc.want, tc.limit)
			}
			if !strings.Contains(stderr, wrote) {
				t.Errorf("stderr:\n%s\nwant %q", stderr, wrote)
			}
		})
	}
}

// TestPlayAndSampleStopOnASignal: a signal (the context's cancellation by
// SIGTERM) stops play and sample with 143, writing nothing: a GIF and a
// recording already at the paths given stay as they were.
func TestPlayAndSampleStopOnASignal(t *testing.T) {
	dir := tinyRun(t)
	tmp := t.TempDir()
	gifPath, npzPath := filepath.Join(tmp, "old.gif"), filepath.Join(tmp, "old.npz")
	for _, p := range []string{gifPath, npzPath} {
		if err := os.WriteFile(p, []byte("the user's file"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(signalError{syscall.SIGTERM})
	for _, args := range [][]string{
		{"play", "-agent", dir, "-episodes", "3", "-gif", gifPath, "-record", npzPath},
		{"sample", "-o", npzPath, "-episodes", "3", dir},
	} {
		code, stdout, stderr := evolve(ctx, args...)
		if code != 143 || !strings.Contains(stderr, "nothing written") {
			t.Errorf("%s: exit %d, stderr %q; want 143 and nothing written", args[0], code, stderr)
		}
		if strings.Contains(stdout, "episode") || strings.Contains(stderr, "wrote") {
			t.Errorf("%s: played on after the signal:\n%s%s", args[0], stdout, stderr)
		}
		for _, p := range []string{gifPath, npzPath} {
			if b := mustRead(t, p); string(b) != "the user's file" {
				t.Errorf("%s: %s was changed (%d bytes)", args[0], p, len(b))
			}
		}
	}
	entries, err := os.ReadDir(tmp)
	if err != nil || len(entries) != 2 {
		t.Errorf("%d files left in the output directory (%v), want the 2 there before", len(entries), err)
	}
}

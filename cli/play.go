package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/evo"
	"github.com/evolverl/evolve/internal/atomicfile"
	"github.com/evolverl/evolve/internal/panicsite"
	"github.com/evolverl/evolve/record"
)

// gifMaxFrames is the default of `evolve play -max-frames`, the most
// frames -gif writes over all episodes: 5,005 frames hold play's default 5
// episodes at LunarLander's time limit of 1,000 steps (a frame after each
// reset and each step), 3 min 20 s at 25 frames per second and a few
// megabytes. There is a default limit because an agent that does not fail
// an env without a time limit plays -max-steps (100,000) steps an episode;
// -max-frames 0 lifts it.
const gifMaxFrames = 5005

// playFlags are the options of `evolve play`.
type playFlags struct {
	agent, env  string
	episodes    int
	seed        int64
	stochastic  bool
	gif, record string
	maxSteps    int
	maxFrames   int
	envSet      bool
	envOptions  envOptionFlags
}

// playCmd is `evolve play -agent FILE|DIR [...]`: it plays episodes with a
// saved agent, prints each episode's return and length and their mean ±
// std, and optionally writes an animated GIF and a trajectory file.
func playCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCommand("evolve play", "usage: evolve play -agent FILE|DIR [-env ID] [-env-option KEY=VALUE ...] [-episodes N] [-seed S] [-stochastic]\n"+
		"                   [-gif OUT.gif [-max-frames N]] [-record OUT.npz] [-max-steps N]\n\n"+
		"Plays episodes with a saved agent (a run directory means its elite.safetensors and the\n"+
		"env of its config.toml; an agent file, the env it records) and prints each episode's\n"+
		"return and length.\n\n", stderr)
	fs := c.fs
	var p playFlags
	fs.StringVar(&p.agent, "agent", "", "play the agent file `FILE`, or the elite of the run directory FILE")
	fs.StringVar(&p.env, "env", "", "play on env `ID` (default: the env the agent file records, or the run directory's [env] id)")
	fs.IntVar(&p.episodes, "episodes", 5, "play `N` episodes")
	fs.Int64Var(&p.seed, "seed", 0, "seed the first reset with `S` (later resets continue unseeded)")
	fs.BoolVar(&p.stochastic, "stochastic", false, "sample actions instead of taking the most likely one")
	fs.StringVar(&p.gif, "gif", "", "write an animated GIF of the episodes to `OUT.gif`, each frame with its episode and the return so far")
	fs.IntVar(&p.maxFrames, "max-frames", gifMaxFrames, "end the GIF after `N` frames over all episodes (0: no limit)")
	fs.StringVar(&p.record, "record", "", "write the trajectories to `OUT.npz` (NumPy arrays in a zip)")
	fs.IntVar(&p.maxSteps, "max-steps", 100000, "cut episodes at `N` steps")
	fs.Var(&p.envOptions, "env-option", "set the env's option `KEY=VALUE` over the recorded ones (python=/usr/bin/python3; TOML values, repeatable)")
	if status, ok := c.parse(args); !ok {
		return status
	}
	set := c.set()
	p.envSet = set["env"]
	usage := c.misuse
	switch {
	case fs.NArg() > 0 && p.agent == "":
		return usage("unexpected argument %q: give the agent file or run directory with -agent %s", fs.Arg(0), shellQuote(fs.Arg(0)))
	case fs.NArg() > 0:
		return usage("unexpected argument %q", fs.Arg(0))
	case p.agent == "":
		return usage("-agent: give an agent file or a run directory")
	case p.episodes < 1:
		return usage("-episodes %d: want >= 1", p.episodes)
	case p.seed < 0:
		return usage("-seed %d: want >= 0", p.seed)
	case p.maxSteps < 1:
		return usage("-max-steps %d: want >= 1", p.maxSteps)
	case p.maxFrames < 0:
		return usage("-max-frames %d: want >= 1, or 0 for no limit", p.maxFrames)
	case set["max-frames"] && !set["gif"]:
		return usage("-max-frames applies to -gif only")
	case set["env"] && p.env == "" || set["gif"] && p.gif == "" || set["record"] && p.record == "":
		return usage("-env, -gif and -record need a non-empty value")
	case p.gif != "" && !strings.EqualFold(filepath.Ext(p.gif), ".gif"):
		return usage("-gif %s: want a file name ending in .gif (the file is an animated GIF)", p.gif)
	case p.record != "" && !strings.EqualFold(filepath.Ext(p.record), ".npz"):
		return usage("-record %s: want a file name ending in .npz (the trajectories are NumPy arrays in a zip)", p.record)
	case p.gif != "" && outsideCheckpoints("-gif", p.gif) != "":
		return usage("%s", outsideCheckpoints("-gif", p.gif))
	case p.record != "" && outsideCheckpoints("-record", p.record) != "":
		return usage("%s", outsideCheckpoints("-record", p.record))
	}
	return play(ctx, p, stdout, stderr)
}

// loadPlay loads the agent and makes its env as p asks. Every error names
// the file or flag at fault. An agent trained on MinAtar's full action set
// under a "-v1" id, which named that set before it named the minimal one,
// plays the "-v0" id (envs.LegacyMinAtarID); note then says so.
func loadPlay(ctx context.Context, p playFlags) (a *agent.PPO, env envs.Env, id, note string, err error) {
	file, dir := p.agent, ""
	if st, err := os.Stat(p.agent); err == nil && st.IsDir() {
		dir = p.agent
		if file, err = runElite(dir); err != nil {
			return nil, nil, "", "", fmt.Errorf("-agent: %w", err)
		}
	}
	if a, err = agent.Load(file); err != nil {
		return nil, nil, "", "", fmt.Errorf("-agent: %w", err)
	}
	id, opts, where, err := playEnv(p, dir, file, a)
	if err != nil {
		return nil, nil, "", "", err
	}
	opts, with := p.envOptions.apply(opts)
	where += with
	if legacy := envs.LegacyMinAtarID(id, opts, a.ActionSpace()); legacy != id {
		note = fmt.Sprintf("%s: %s now names MinAtar's minimal action set; agent %s has the full set of 6, which %s named when it was trained, so it plays %s",
			where, id, file, id, legacy)
		id = legacy
	}
	if env, err = envs.MakeContext(ctx, id, opts); err != nil {
		if strings.HasPrefix(id, envs.GymPrefix) && !p.envSet {
			// The options recorded where the agent was trained may not
			// hold here (an interpreter path above all).
			err = fmt.Errorf("%w (-env-option KEY=VALUE replaces a recorded option, as -env-option python=python3)", err)
		}
		return nil, nil, "", "", fmt.Errorf("%s: %w", where, err)
	}
	if err := sameSpaces(env, a, where, id, file); err != nil {
		envs.Close(env)
		return nil, nil, "", "", err
	}
	return a, env, id, note, nil
}

// playEnv says which env to play agent a (loaded from file, inside the run
// directory dir unless dir is "") on, and where that came from: -env, else
// the run's config.toml, else the env the agent file records.
func playEnv(p playFlags, dir, file string, a *agent.PPO) (id string, opts envs.Options, where string, err error) {
	if p.envSet {
		return p.env, nil, "-env " + p.env, nil
	}
	if dir != "" {
		cpath := filepath.Join(dir, "config.toml")
		cfg, err := evo.ReadRunConfig(dir)
		switch {
		case errors.Is(err, os.ErrNotExist) && a.Env.Known():
		case errors.Is(err, os.ErrNotExist):
			return "", nil, "", fmt.Errorf("%s: no config to read the env from, and %s does not record it (give -env ID)", cpath, file)
		case err != nil:
			return "", nil, "", err
		default:
			return cfg.Env.ID, cfg.Env.Options, cpath + ": [env]", nil
		}
	}
	if !a.Env.Known() {
		return "", nil, "", fmt.Errorf("-env is needed: agent file %s does not record its env (saved without one, or by a build before agent files held it): give -env ID, or the run directory", file)
	}
	return a.Env.ID, a.Env.Options, file + ": env", nil
}

// sameSpaces checks that env has the spaces agent a was trained on.
func sameSpaces(env envs.Env, a *agent.PPO, where, id, file string) error {
	for _, s := range []struct {
		what      string
		env, want envs.Space
	}{{"observation", env.ObservationSpace(), a.ObservationSpace()}, {"action", env.ActionSpace(), a.ActionSpace()}} {
		if !envs.SameSpace(s.env, s.want) {
			return fmt.Errorf("%s: env %s has %s space %v, but agent %s was trained on %v",
				where, id, s.what, s.env, file, s.want)
		}
	}
	return nil
}

// play runs `evolve play` with checked flags. Cancelling ctx (a signal)
// stops it between steps, writing nothing.
func play(ctx context.Context, p playFlags, stdout, stderr io.Writer) int {
	fail := func(status int, format string, a ...any) int {
		fmt.Fprintf(stderr, "evolve play: "+format+"\n", a...)
		return status
	}
	a, env, id, note, err := loadPlay(ctx, p)
	if err != nil && stopped(ctx, err) { // a Ctrl-C while a gym: env started
		return fail(stopStatus(ctx), "interrupted; nothing written")
	}
	if err != nil {
		return fail(exitBadInput, "%v", err)
	}
	if note != "" {
		fmt.Fprintf(stderr, "evolve play: note: %s\n", note)
	}
	defer envs.Close(env)
	// Outputs are checked before anything is played.
	s := &playSession{p: p, a: a, env: env}
	if status, err := s.open(id); err != nil {
		if stopped(ctx, err) {
			return fail(stopStatus(ctx), "interrupted; nothing written")
		}
		return fail(status, "%v", err)
	}
	defer envs.InterruptWhenDone(ctx, env)() // a gym: env's step must not hold a stop back
	returns := make([]float64, 0, p.episodes)
	lengths := make([]float64, 0, p.episodes)
	for ep := range p.episodes {
		total, steps, err := s.episode(ctx, ep)
		if err != nil {
			if stopped(ctx, err) {
				return fail(stopStatus(ctx), "interrupted in episode %d; nothing written", ep+1)
			}
			if errors.Is(err, envs.ErrBadOutput) {
				return fail(exitBadInput, "%v", err)
			}
			return fail(exitFailure, "%v", err)
		}
		returns = append(returns, total)
		lengths = append(lengths, float64(steps))
		cut := ""
		if !s.ended {
			cut = " (cut by -max-steps)"
		}
		fmt.Fprintf(stdout, "episode %d  return %.2f  length %d%s\n", ep+1, total, steps, cut)
	}
	printReturns(stdout, returns, lengths)
	if err := s.close(stderr, int(sum(lengths))); err != nil {
		return fail(exitFailure, "%v", err)
	}
	return exitOK
}

// counted is n and the noun, plural unless n is 1: "1 episode", "5 episodes".
func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return commas(n) + " " + noun + "s"
}

// printReturns prints the mean ± std of the episodes' returns and lengths
// and the standard error of the mean return.
func printReturns(w io.Writer, returns, lengths []float64) {
	mr, sr := meanStd(returns)
	ml, sl := meanStd(lengths)
	fmt.Fprintf(w, "mean return %.2f ± %.2f over %s (length %.1f ± %.1f)", mr, sr, counted(len(returns), "episode"), ml, sl)
	if n := float64(len(returns)); n > 1 {
		// The standard error of the mean uses the sample std (n−1); it says how
		// far the mean of these episodes may be from the policy's true mean.
		fmt.Fprintf(w, "; standard error %.2f", sr*math.Sqrt(n/(n-1))/math.Sqrt(n))
	}
	fmt.Fprintln(w)
}

// playSession is one `evolve play`: the agent, its env and the outputs
// (-gif, -record) the episodes go to.
type playSession struct {
	p      playFlags
	a      *agent.PPO
	env    envs.Env
	gif    *gifWriter     // nil without -gif
	capped bool           // the GIF reached -max-frames
	rec    *record.Writer // nil without -record
	ended  bool           // the last episode ended (terminated or truncated) before -max-steps
}

// open prepares the outputs, after checking that the env can render itself
// for -gif and that neither output would replace the agent played or the
// other output. Both are written only at the end, each whole through a
// temporary file or not at all, so a failure or a stop leaves any file
// of that name as it was. On failure open returns the exit status.
func (s *playSession) open(id string) (int, error) {
	p := s.p
	if err := distinctOutputs(p); err != nil {
		return exitBadInput, err
	}
	if p.gif != "" {
		if err := writableFile(p.gif); err != nil {
			return exitBadInput, fmt.Errorf("-gif: %w", err)
		}
		s.env.Reset(p.seed)
		if _, err := envs.RenderErr(s.env); err != nil {
			if strings.HasPrefix(err.Error(), id+":") { // a gym env's error names it
				return exitBadInput, fmt.Errorf("-gif %s: env %w", p.gif, err)
			}
			return exitBadInput, fmt.Errorf("-gif %s: env %s: %w", p.gif, id, err)
		}
		s.gif = &gifWriter{}
	}
	if p.record != "" {
		if err := writableFile(p.record); err != nil {
			return exitBadInput, fmt.Errorf("-record: %w", err)
		}
		rec, err := record.Create(p.record, s.a.ObservationSpace(), s.a.ActionSpace())
		if err != nil {
			return exitBadInput, fmt.Errorf("-record: %w", err)
		}
		s.rec = rec
	}
	return exitOK, nil
}

// distinctOutputs refuses a -gif or -record naming the agent file played
// (or the run directory's elite). (They cannot name each other: their
// extensions differ.)
func distinctOutputs(p playFlags) error {
	agentFile := p.agent
	if st, err := os.Stat(p.agent); err == nil && st.IsDir() {
		agentFile = filepath.Join(p.agent, "elite.safetensors")
	}
	for _, o := range []struct{ flag, path string }{{"-gif", p.gif}, {"-record", p.record}} {
		if o.path != "" && sameFile(o.path, agentFile) {
			return fmt.Errorf("%s %s: that is the agent played (-agent %s): choose another file", o.flag, o.path, p.agent)
		}
	}
	return nil
}

// sameFile reports whether paths a and b name the same file: the same
// existing file, or the same cleaned absolute path.
func sameFile(a, b string) bool {
	sa, ea := os.Stat(a)
	sb, eb := os.Stat(b)
	if ea == nil && eb == nil {
		return os.SameFile(sa, sb)
	}
	aa, errA := filepath.Abs(a)
	ab, errB := filepath.Abs(b)
	return errA == nil && errB == nil && aa == ab
}

// writableFile checks, before anything is played, that path can be
// written whole at the end: it is not a directory, and its directory takes
// a new file (the temporary file it will be written through).
func writableFile(path string) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".check-*")
	if err != nil {
		// The probe's own name would only confuse: say what it found.
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("%s: cannot write in %s (%w)", path, filepath.Dir(path), err)
	}
	tmp.Close()
	return os.Remove(tmp.Name())
}

// frame adds the env's picture to the GIF, with the number of episode ep
// (from 0) and its return so far drawn in the corner, up to -max-frames.
func (s *playSession) frame(ep int, total float64) {
	if s.gif == nil || s.capped {
		return
	}
	if s.p.maxFrames > 0 && s.gif.frames >= s.p.maxFrames {
		s.capped = true
		return
	}
	if img, ok := envs.Render(s.env); ok {
		pic := s.gif.screen(img)
		drawOverlay(pic, ep+1, total)
		s.gif.add(pic)
	}
}

// checkOutput checks what the env returned from call (envs.CheckOutput):
// a bad observation or reward ends the play rather than reaching the
// recording or the return.
func (s *playSession) checkOutput(call string, obs []float32, reward float64, info envs.Info) error {
	return envs.CheckOutput(s.env, s.a.ObservationSpace(), s.a.ActionSpace(), call, obs, reward, info)
}

// episode plays episode ep (the first from -seed, the others continuing
// the env's stream), recording and drawing each step, and returns its
// return and length; it stops with ctx's error once ctx is cancelled.
func (s *playSession) episode(ctx context.Context, ep int) (total float64, steps int, err error) {
	defer func() {
		if p := recover(); p != nil { // the env's, most likely: say where, as training does
			err = fmt.Errorf("episode %d step %d: panic: %v, in %s", ep+1, steps+1, p, panicsite.Of())
		}
	}()
	seed := envs.NoSeed
	if ep == 0 {
		seed = s.p.seed
	}
	obs, info := s.env.Reset(seed)
	if err := s.checkOutput("reset", obs, 0, info); err != nil {
		return total, steps, fmt.Errorf("episode %d: %w", ep+1, err)
	}
	s.a.ResetState(-1)
	s.ended = false
	s.frame(ep, 0)
	for start := true; steps < s.p.maxSteps; start = false {
		if err := ctx.Err(); err != nil {
			return total, steps, err
		}
		act, logp, value, err := s.a.ActInfo(obs, [][]bool{info.ActionMask}, !s.p.stochastic)
		if err != nil {
			return total, steps, fmt.Errorf("episode %d step %d: %w", ep+1, steps+1, err)
		}
		prev, mask := slices.Clone(obs), slices.Clone(info.ActionMask) // the env may reuse both
		var r float64
		var term, trunc bool
		obs, r, term, trunc, info = s.env.Step(act)
		if err := s.checkOutput("step", obs, r, info); err != nil {
			return total, steps, fmt.Errorf("episode %d step %d: %w", ep+1, steps+1, err)
		}
		steps++
		total += r
		if s.rec != nil {
			// An episode cut by -max-steps ends truncated, as a time
			// limit would end it.
			cut := !term && steps == s.p.maxSteps
			err := s.rec.Add(record.Step{Obs: prev, Action: act, Reward: r,
				Terminated: term, Truncated: trunc || cut, EpisodeStart: start,
				Value: value[0], LogProb: logp[0], ActionMask: mask})
			if err != nil {
				return total, steps, fmt.Errorf("-record: %w", err)
			}
		}
		s.frame(ep, total)
		if s.ended = term || trunc; s.ended {
			break
		}
	}
	return total, steps, nil
}

// close writes the outputs and says so on stderr; steps is the number of
// steps recorded.
func (s *playSession) close(stderr io.Writer, steps int) error {
	if s.rec != nil {
		if err := s.rec.Close(); err != nil {
			return fmt.Errorf("-record: %w", err)
		}
		fmt.Fprintf(stderr, "wrote %s (%d steps)\n", s.p.record, steps)
	}
	if s.gif == nil {
		return nil
	}
	if err := atomicfile.Write(s.p.gif, s.gif.encode); err != nil {
		return fmt.Errorf("-gif %s: %w", s.p.gif, err)
	}
	note := ""
	if s.capped {
		note = fmt.Sprintf(", cut at -max-frames %d", s.p.maxFrames)
	}
	fmt.Fprintf(stderr, "wrote %s (%d frames%s)\n", s.p.gif, s.gif.frames, note)
	return nil
}

// meanStd returns the mean and the population standard deviation of xs.
func meanStd(xs []float64) (mean, std float64) {
	mean = sum(xs) / float64(len(xs))
	for _, x := range xs {
		std += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(std / float64(len(xs)))
}

func sum(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}

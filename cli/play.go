package cli

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/color/palette"
	"image/gif"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/BurntSushi/toml"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/record"
)

// GIF settings of `evolve play -gif`: frames are shown for gifDelay
// hundredths of a second (25 frames per second), and at most gifMaxFrames
// frames are written, counted over all episodes.
const (
	gifDelay     = 4
	gifMaxFrames = 1000
)

// playFlags are the options of `evolve play`.
type playFlags struct {
	agent, env  string
	episodes    int
	seed        int64
	stochastic  bool
	gif, record string
	maxSteps    int
	envSet      bool
}

// playCmd is `evolve play -agent FILE|DIR [...]`: it plays episodes with a
// saved agent, prints each episode's return and length and their mean ±
// std, and optionally writes an animated GIF and a trajectory file.
func playCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("evolve play", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: evolve play -agent FILE|DIR [-env ID] [-episodes N] [-seed S] [-stochastic]\n"+
			"                   [-gif OUT.gif] [-record OUT.npz] [-max-steps N]\n\n"+
			"Plays episodes with a saved agent (a run directory means its elite.safetensors and the\n"+
			"env of its config.toml) and prints each episode's return and length.\n\n")
		fs.PrintDefaults()
	}
	var p playFlags
	fs.StringVar(&p.agent, "agent", "", "play the agent file `FILE`, or the elite of the run directory FILE")
	fs.StringVar(&p.env, "env", "", "play on env `ID` (default: the run directory's [env] id)")
	fs.IntVar(&p.episodes, "episodes", 5, "play `N` episodes")
	fs.Int64Var(&p.seed, "seed", 0, "seed the first reset with `S` (later resets continue unseeded)")
	fs.BoolVar(&p.stochastic, "stochastic", false, "sample actions instead of taking the most likely one")
	fs.StringVar(&p.gif, "gif", "", fmt.Sprintf("write an animated GIF of the episodes to `OUT.gif` (at most %d frames)", gifMaxFrames))
	fs.StringVar(&p.record, "record", "", "write the trajectories to `OUT.npz` (NumPy arrays in a zip)")
	fs.IntVar(&p.maxSteps, "max-steps", 100000, "cut episodes at `N` steps")
	if err := fs.Parse(args); err != nil {
		return parseStatus(err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	p.envSet = set["env"]
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "evolve play: "+format+"\n", a...)
		fs.Usage()
		return exitBadInput
	}
	switch {
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
	case set["env"] && p.env == "" || set["gif"] && p.gif == "" || set["record"] && p.record == "":
		return usage("-env, -gif and -record need a non-empty value")
	}
	return play(p, stdout, stderr)
}

// playEnvConfig is the part of a run's config.toml that play reads.
type playEnvConfig struct {
	Env struct {
		ID      string       `toml:"id"`
		Options envs.Options `toml:"options"`
	} `toml:"env"`
}

// loadPlay loads the agent and makes its env as p asks. Every error names
// the file or flag at fault. An agent trained on MinAtar's full action set
// under a "-v1" id, which named that set before it named the minimal one,
// plays the "-v0" id (envs.LegacyMinAtarID); note then says so.
func loadPlay(p playFlags) (a *agent.PPO, env envs.Env, id, note string, err error) {
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
	id, opts, where := p.env, envs.Options(nil), "-env "+p.env
	if !p.envSet {
		if id, opts, where, err = runEnv(dir, file); err != nil {
			return nil, nil, "", "", err
		}
	}
	if legacy := envs.LegacyMinAtarID(id, opts, a.ActionSpace()); legacy != id {
		note = fmt.Sprintf("%s: %s now names MinAtar's minimal action set; agent %s has the full set of 6, which %s named when it was trained, so it plays %s",
			where, id, file, id, legacy)
		id = legacy
	}
	if env, err = envs.Make(id, opts); err != nil {
		return nil, nil, "", "", fmt.Errorf("%s: %w", where, err)
	}
	if err := sameSpaces(env, a, where, id, file); err != nil {
		envs.Close(env)
		return nil, nil, "", "", err
	}
	return a, env, id, note, nil
}

// runEnv reads the env of the run in dir from its config.toml, and where
// it was read for messages; file is the agent file, for the error when
// there is no dir.
func runEnv(dir, file string) (id string, opts envs.Options, where string, err error) {
	if dir == "" {
		return "", nil, "", fmt.Errorf("-env is needed: agent file %s does not store its env (give -env ID, or the run directory)", file)
	}
	cpath := filepath.Join(dir, "config.toml")
	var cfg playEnvConfig
	if _, err := toml.DecodeFile(cpath, &cfg); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", nil, "", fmt.Errorf("%s: no config to read the env from (give -env ID)", cpath)
		}
		return "", nil, "", fmt.Errorf("%s: %w", cpath, err)
	}
	if cfg.Env.ID == "" {
		return "", nil, "", fmt.Errorf("%s: no [env] id (give -env ID)", cpath)
	}
	return cfg.Env.ID, cfg.Env.Options, cpath + ": [env]", nil
}

// sameSpaces checks that env has the spaces agent a was trained on.
func sameSpaces(env envs.Env, a *agent.PPO, where, id, file string) error {
	for _, s := range []struct {
		what      string
		env, want envs.Space
	}{{"observation", env.ObservationSpace(), a.ObservationSpace()}, {"action", env.ActionSpace(), a.ActionSpace()}} {
		got, err1 := envs.MarshalSpace(s.env)
		want, err2 := envs.MarshalSpace(s.want)
		if err := errors.Join(err1, err2); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if !bytes.Equal(got, want) {
			return fmt.Errorf("%s: env %s has %s space %v, but agent %s was trained on %v",
				where, id, s.what, s.env, file, s.want)
		}
	}
	return nil
}

// play runs `evolve play` with checked flags.
func play(p playFlags, stdout, stderr io.Writer) int {
	fail := func(status int, format string, a ...any) int {
		fmt.Fprintf(stderr, "evolve play: "+format+"\n", a...)
		return status
	}
	a, env, id, note, err := loadPlay(p)
	if err != nil {
		return fail(exitBadInput, "%v", err)
	}
	if note != "" {
		fmt.Fprintf(stderr, "evolve play: note: %s\n", note)
	}
	defer envs.Close(env)

	// Outputs are checked before anything is played.
	var anim *gif.GIF
	var gifFile *os.File
	if p.gif != "" {
		env.Reset(p.seed)
		if _, ok := envs.Render(env); !ok {
			return fail(exitBadInput, "-gif %s: env %s cannot render itself", p.gif, id)
		}
		if gifFile, err = os.Create(p.gif); err != nil {
			return fail(exitBadInput, "-gif: %v", err)
		}
		defer gifFile.Close()
		anim = &gif.GIF{}
	}
	var rec *record.Writer
	if p.record != "" {
		if rec, err = record.Create(p.record, a.ObservationSpace(), a.ActionSpace()); err != nil {
			if gifFile != nil {
				os.Remove(p.gif)
			}
			return fail(exitBadInput, "-record: %v", err)
		}
	}
	// A record.Writer writes nothing before Close, so only the GIF needs
	// removing on failure.
	cleanup := func() {
		if gifFile != nil {
			gifFile.Close()
			os.Remove(p.gif)
		}
	}

	capped := false
	nearest := map[color.RGBA]uint8{}
	frame := func() {
		if anim == nil || capped {
			return
		}
		if len(anim.Image) >= gifMaxFrames {
			capped = true
			return
		}
		img, ok := envs.Render(env)
		if !ok {
			return
		}
		anim.Image = append(anim.Image, toPlan9(img, nearest))
		anim.Delay = append(anim.Delay, gifDelay)
	}

	returns := make([]float64, 0, p.episodes)
	lengths := make([]float64, 0, p.episodes)
	for ep := range p.episodes {
		seed := envs.NoSeed
		if ep == 0 {
			seed = p.seed
		}
		obs, info := env.Reset(seed)
		a.ResetState(-1)
		frame()
		total, steps, start := 0.0, 0, true
		for steps < p.maxSteps {
			masks := [][]bool{info.ActionMask}
			act, logp, value, err := a.ActInfo(obs, masks, !p.stochastic)
			if err != nil {
				cleanup()
				return fail(exitFailure, "episode %d step %d: %v", ep+1, steps+1, err)
			}
			prev := slices.Clone(obs)
			var r float64
			var term, trunc bool
			obs, r, term, trunc, info = env.Step(act)
			steps++
			total += r
			if rec != nil {
				// An episode cut by -max-steps ends truncated, as a time
				// limit would end it.
				cut := !term && steps == p.maxSteps
				err := rec.Add(record.Step{Obs: prev, Action: act, Reward: r,
					Terminated: term, Truncated: trunc || cut, EpisodeStart: start,
					Value: value[0], LogProb: logp[0]})
				if err != nil {
					cleanup()
					return fail(exitFailure, "-record: %v", err)
				}
			}
			start = false
			frame()
			if term || trunc {
				break
			}
		}
		returns = append(returns, total)
		lengths = append(lengths, float64(steps))
		fmt.Fprintf(stdout, "episode %d  return %.2f  length %d\n", ep+1, total, steps)
	}
	mr, sr := meanStd(returns)
	ml, sl := meanStd(lengths)
	eps := "episodes"
	if p.episodes == 1 {
		eps = "episode"
	}
	fmt.Fprintf(stdout, "mean return %.2f ± %.2f over %d %s (length %.1f ± %.1f)", mr, sr, p.episodes, eps, ml, sl)
	if n := float64(len(returns)); n > 1 {
		// The standard error of the mean uses the sample std (n−1); it says how
		// far the mean of these episodes may be from the policy's true mean.
		fmt.Fprintf(stdout, "; standard error %.2f", sr*math.Sqrt(n/(n-1))/math.Sqrt(n))
	}
	fmt.Fprintln(stdout)

	if rec != nil {
		if err := rec.Close(); err != nil {
			cleanup()
			return fail(exitFailure, "-record: %v", err)
		}
		fmt.Fprintf(stderr, "wrote %s (%d steps)\n", p.record, int(sum(lengths)))
	}
	if anim != nil {
		err := gif.EncodeAll(gifFile, anim)
		if err == nil {
			err = gifFile.Close()
		}
		if err != nil {
			os.Remove(p.gif)
			return fail(exitFailure, "-gif %s: %v", p.gif, err)
		}
		note := ""
		if capped {
			note = fmt.Sprintf(", capped at %d", gifMaxFrames)
		}
		fmt.Fprintf(stderr, "wrote %s (%d frames%s)\n", p.gif, len(anim.Image), note)
	}
	return exitOK
}

// toPlan9 converts img to the Plan 9 palette, each pixel to the nearest
// colour. nearest caches the palette index of every colour seen: frames
// hold few colours, and color.Palette.Index is a search of all 256.
func toPlan9(img image.Image, nearest map[color.RGBA]uint8) *image.Paletted {
	b := img.Bounds()
	pi := image.NewPaletted(image.Rect(0, 0, b.Dx(), b.Dy()), palette.Plan9)
	rgba, _ := img.(*image.RGBA)
	// Runs of one colour are the rule: last skips the map for them.
	var last color.RGBA
	k, ok := nearest[last]
	if !ok {
		k = uint8(pi.Palette.Index(last))
		nearest[last] = k
	}
	for y := range b.Dy() {
		for x := range b.Dx() {
			var c color.RGBA
			if rgba != nil {
				i := rgba.PixOffset(b.Min.X+x, b.Min.Y+y)
				c = color.RGBA{rgba.Pix[i], rgba.Pix[i+1], rgba.Pix[i+2], rgba.Pix[i+3]}
			} else {
				c = color.RGBAModel.Convert(img.At(b.Min.X+x, b.Min.Y+y)).(color.RGBA)
			}
			if c != last {
				if k, ok = nearest[c]; !ok {
					k = uint8(pi.Palette.Index(c))
					nearest[c] = k
				}
				last = c
			}
			pi.Pix[y*pi.Stride+x] = k
		}
	}
	return pi
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

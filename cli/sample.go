package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/evo"
	"github.com/evolverl/evolve/internal/panicsite"
	"github.com/evolverl/evolve/record"
)

// sampleFlags are the options of `evolve sample`.
type sampleFlags struct {
	run, out    string
	generations string
	elite       bool
	method      sampleMethod
	episodes    int
	seed        int64
	maxSteps    int
	workers     int
}

// sampleCmd is `evolve sample [flags] -o OUT.npz RUN_DIR`: it plays every
// agent of a run's kept checkpoints (or of chosen generations, or the
// elite) for N episodes and writes the steps as one dataset.
func sampleCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCommand("evolve sample", "usage: evolve sample -o OUT.npz [-generations all|last|G,G,...] [-elite]\n"+
		"                     [-method greedy|stochastic|temperature|epsilon] [-temperature T] [-epsilon E]\n"+
		"                     [-episodes N] [-seed S] [-max-steps N] [-workers N] RUN_DIR\n\n"+
		"Plays the agents of a run's kept checkpoints, N episodes each, and writes their steps as one\n"+
		"dataset (.npz: the arrays of evolve play -record, plus the agent, generation, fitness and\n"+
		"episode of every step; docs/datasets.md) — behaviour of mixed quality for offline RL.\n\n", stderr)
	fs := c.fs
	var f sampleFlags
	fs.StringVar(&f.out, "o", "", "write the dataset to `OUT.npz`")
	fs.StringVar(&f.generations, "generations", "all", "play the checkpoints of these generations: all kept, last, or a `LIST` such as 0,10,20")
	fs.BoolVar(&f.elite, "elite", false, "play the run's elite (elite.safetensors) instead of its checkpoints")
	fs.StringVar(&f.method.name, "method", "stochastic", "pick actions by `METHOD`: greedy, stochastic, temperature (with -temperature) or epsilon (with -epsilon)")
	fs.Float64Var(&f.method.temperature, "temperature", 1, "with -method temperature: sample from the policy tempered by `T` > 0")
	fs.Float64Var(&f.method.epsilon, "epsilon", 0, "with -method epsilon: act uniformly at random with probability `E`, else greedily")
	fs.IntVar(&f.episodes, "episodes", 10, "play `N` episodes with each agent")
	fs.Int64Var(&f.seed, "seed", 0, "episode k of every agent starts from reset seed S+k; actions are drawn from streams of `S`")
	fs.IntVar(&f.maxSteps, "max-steps", 100000, "cut episodes at `N` steps")
	fs.IntVar(&f.workers, "workers", runtime.GOMAXPROCS(0), "play `N` agents at once (never changes the dataset)")
	pos, status, ok := c.parseInterspersed(args)
	if !ok {
		return status
	}
	if status, ok := f.check(c, pos); !ok {
		return status
	}
	fail := func(status int, err error) int {
		fmt.Fprintf(stderr, "evolve sample: %v\n", err)
		return status
	}
	jobs, err := f.sources()
	if err != nil && stopped(ctx, err) { // a Ctrl-C while a run's config made its gym: env
		return fail(stopStatus(ctx), errors.New("interrupted; nothing written"))
	}
	if err != nil {
		return fail(exitBadInput, err)
	}
	steps, err := f.play(ctx, jobs, stderr)
	switch {
	case stopped(ctx, err):
		return fail(stopStatus(ctx), errors.New("interrupted; nothing written"))
	case errors.Is(err, errBadInput) || errors.Is(err, envs.ErrBadOutput):
		return fail(exitBadInput, err)
	case err != nil:
		return fail(exitFailure, err)
	}
	if err := f.write(jobs, steps); err != nil {
		return fail(exitFailure, err)
	}
	episodes := len(jobs) * f.episodes
	fmt.Fprintf(stdout, "wrote %s: %s of %s, %d steps\n", f.out, counted(episodes, "episode"), counted(len(jobs), "agent"), countSteps(steps))
	return exitOK
}

// check checks the flags and the one argument, the run directory.
func (f *sampleFlags) check(c *command, pos []string) (int, bool) {
	set := c.set()
	m := &f.method
	switch {
	case len(pos) != 1:
		return c.misuse("want one run directory, got %d arguments", len(pos)), false
	case !isRunDir(pos[0]):
		return c.misuse("%s: not a run directory (a run directory holds config.toml and checkpoints/)", pos[0]), false
	case f.out == "":
		return c.misuse("-o: give the dataset's file, OUT.npz"), false
	case !strings.EqualFold(filepath.Ext(f.out), ".npz"):
		return c.misuse("-o %s: want a file name ending in .npz (the dataset is NumPy arrays in a zip)", f.out), false
	case outsideCheckpoints("-o", f.out) != "":
		return c.misuse("%s", outsideCheckpoints("-o", f.out)), false
	case !slices.Contains(sampleMethods, m.name):
		return c.misuse("-method %q: want one of %s", m.name, strings.Join(sampleMethods, ", ")), false
	case m.name == "temperature" && !set["temperature"]:
		return c.misuse("-method temperature needs -temperature T"), false
	case m.name == "epsilon" && !set["epsilon"]:
		return c.misuse("-method epsilon needs -epsilon E"), false
	case set["temperature"] && m.name != "temperature":
		return c.misuse("-temperature applies to -method temperature only"), false
	case set["epsilon"] && m.name != "epsilon":
		return c.misuse("-epsilon applies to -method epsilon only"), false
	case !(m.temperature > 0) || math.IsInf(m.temperature, 0):
		return c.misuse("-temperature %g: want a finite T > 0 (-method greedy is the limit T → 0)", m.temperature), false
	case !(m.epsilon >= 0 && m.epsilon <= 1):
		return c.misuse("-epsilon %g: want a probability in [0, 1]", m.epsilon), false
	case f.episodes < 1:
		return c.misuse("-episodes %d: want >= 1", f.episodes), false
	case f.seed < 0:
		return c.misuse("-seed %d: want >= 0", f.seed), false
	case f.maxSteps < 1:
		return c.misuse("-max-steps %d: want >= 1", f.maxSteps), false
	case f.workers < 1:
		return c.misuse("-workers %d: want >= 1", f.workers), false
	case f.elite && set["generations"]:
		return c.misuse("-elite and -generations exclude each other: the elite is one agent, not a checkpoint"), false
	}
	// The output's directory is checked before anything is played.
	if st, err := os.Stat(filepath.Dir(f.out)); err != nil || !st.IsDir() {
		return c.misuse("-o %s: %s is not a directory", f.out, filepath.Dir(f.out)), false
	}
	f.run = pos[0]
	return exitOK, true
}

// sampleJob is one agent to play: its file and where it came from.
type sampleJob struct {
	file       string
	index, gen int
	fitness    float64
}

// sources lists the agents to play, in the dataset's order: the chosen
// checkpoints oldest first, each in population order; or the elite.
func (f *sampleFlags) sources() ([]sampleJob, error) {
	if f.elite {
		return f.eliteSource()
	}
	kept, err := evo.CheckpointGenerations(f.run)
	if err != nil {
		return nil, err
	}
	chosen, err := chooseGenerations(f.generations, kept)
	if err != nil {
		return nil, err
	}
	var jobs []sampleJob
	for _, gen := range chosen {
		// Only the chosen checkpoints are verified: a damaged one that
		// -generations leaves out does not stop the others being played.
		c, err := evo.ReadCheckpoint(f.run, gen)
		if err != nil {
			if len(kept) > 1 {
				err = fmt.Errorf("%w (-generations chooses the checkpoints played: the run keeps %s)", err, joinInts(kept))
			}
			return nil, err
		}
		for _, m := range c.Members {
			jobs = append(jobs, sampleJob{file: m.File, index: m.Index, gen: c.Generation, fitness: m.Fitness})
		}
	}
	return jobs, nil
}

// chooseGenerations returns the generations -generations names, of those
// the run keeps (kept, oldest first).
func chooseGenerations(spec string, kept []int) ([]int, error) {
	switch spec {
	case "all":
		return kept, nil
	case "last":
		return kept[len(kept)-1:], nil
	}
	var out []int
	for _, g := range strings.Split(spec, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(g))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("-generations %q: %q is not a generation (want all, last, or numbers such as 0,10,20)%w", spec, g, errBadInput)
		}
		if !slices.Contains(kept, n) {
			return nil, fmt.Errorf("-generations: the run keeps no checkpoint of generation %d (it keeps %s; [checkpoint] keep says how many)%w",
				n, joinInts(kept), errBadInput)
		}
		if slices.Contains(out, n) {
			return nil, fmt.Errorf("-generations %q: generation %d twice%w", spec, n, errBadInput)
		}
		out = append(out, n)
	}
	return out, nil
}

// joinInts writes xs as "1, 2, 3".
func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

// eliteSource is the run's elite, described by summary.json.
func (f *sampleFlags) eliteSource() ([]sampleJob, error) {
	if _, err := os.Stat(filepath.Join(f.run, "summary.json")); err == nil {
		if _, err := os.Stat(filepath.Join(f.run, "elite.safetensors")); errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("-elite: %s: no such file, though the run has a summary (removed?)%w",
				filepath.Join(f.run, "elite.safetensors"), errBadInput)
		}
	}
	file, err := runElite(f.run)
	if err != nil {
		return nil, fmt.Errorf("-elite: %w%w", err, errBadInput)
	}
	sum, err := evo.ReadSummary(f.run)
	if err != nil {
		return nil, fmt.Errorf("-elite: %w%w", err, errBadInput)
	}
	gen := 0 // runs that saved their elite before it was recorded
	if sum.Elite != nil {
		gen = sum.Elite.Generation
	}
	if sum.EliteIndex < 0 || gen < 0 {
		return nil, fmt.Errorf("-elite: %s: elite_index %d, generation %d%w", filepath.Join(f.run, "summary.json"), sum.EliteIndex, gen, errBadInput)
	}
	return []sampleJob{{file: file, index: sum.EliteIndex, gen: gen, fitness: sum.EliteFitness}}, nil
}

// play plays every job's episodes, -workers at a time, and returns each
// job's steps; the result does not depend on the number of workers.
func (f *sampleFlags) play(ctx context.Context, jobs []sampleJob, stderr io.Writer) ([][]record.Step, error) {
	cfg, err := evo.ReadRunConfig(f.run)
	if err != nil {
		return nil, fmt.Errorf("%w%w", err, errBadInput)
	}
	steps := make([][]record.Step, len(jobs))
	eg, ctx := errgroup.WithContext(ctx)
	eg.SetLimit(f.workers)
	for j := range jobs {
		eg.Go(func() error {
			var err error
			steps[j], err = f.playAgent(ctx, jobs[j], j, cfg.Env.ID, cfg.Env.Options)
			return err
		})
	}
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	for j, job := range jobs {
		returns := episodeReturns(steps[j])
		mean, std := meanStd(returns)
		fmt.Fprintf(stderr, "generation %d agent %d (fitness %.2f): return %.2f ± %.2f over %s\n",
			job.gen, job.index, job.fitness, mean, std, counted(len(returns), "episode"))
	}
	return steps, nil
}

// playAgent plays job j's episodes on a new env id: episode k from reset
// seed -seed + k, actions drawn from a stream of (-seed, j).
func (f *sampleFlags) playAgent(ctx context.Context, job sampleJob, j int, id string, opts envs.Options) (_ []record.Step, err error) {
	defer func() {
		if p := recover(); p != nil { // the env's, most likely: say where, as training does
			err = fmt.Errorf("%s on env %s: panic: %v, in %s", job.file, id, p, panicsite.Of())
		}
	}()
	a, err := agent.Load(job.file)
	if err != nil {
		return nil, fmt.Errorf("%w%w", err, errBadInput)
	}
	id = envs.LegacyMinAtarID(id, opts, a.ActionSpace())
	env, err := envs.MakeContext(ctx, id, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: [env]: %w%w", filepath.Join(f.run, "config.toml"), err, errBadInput)
	}
	defer envs.Close(env)
	if err := sameSpaces(env, a, filepath.Join(f.run, "config.toml"), id, job.file); err != nil {
		return nil, fmt.Errorf("%w%w", err, errBadInput)
	}
	defer envs.InterruptWhenDone(ctx, env)() // a gym: env's step must not hold a stop back
	rng := rand.New(rand.NewPCG(uint64(f.seed), uint64(j)))
	var steps []record.Step
	for k := range f.episodes {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		ep := j*f.episodes + k
		obs, info := env.Reset(f.seed + int64(k))
		if err := envs.CheckOutput(env, a.ObservationSpace(), a.ActionSpace(), "reset", obs, 0, info); err != nil {
			return nil, fmt.Errorf("%s: episode %d: %w", job.file, k+1, err)
		}
		a.ResetState(-1)
		for n := 0; n < f.maxSteps; n++ {
			select {
			case <-ctx.Done(): // within an episode too: they can be long
				return nil, ctx.Err()
			default:
			}
			p, err := a.Policy(obs, [][]bool{info.ActionMask})
			if err != nil {
				return nil, fmt.Errorf("%s: episode %d step %d: %w", job.file, k+1, n+1, err)
			}
			c := f.method.pick(p, a.ActionSpace(), info.ActionMask, rng)
			prev, mask := slices.Clone(obs), slices.Clone(info.ActionMask) // the env may reuse both
			var r float64
			var term, trunc bool
			obs, r, term, trunc, info = env.Step(c.action)
			if err := envs.CheckOutput(env, a.ObservationSpace(), a.ActionSpace(), "step", obs, r, info); err != nil {
				return nil, fmt.Errorf("%s: episode %d step %d: %w", job.file, k+1, n+1, err)
			}
			cut := !term && n+1 == f.maxSteps // cut by -max-steps: truncated, as by a time limit
			steps = append(steps, record.Step{Obs: prev, Action: c.action, Reward: r,
				Terminated: term, Truncated: trunc || cut, EpisodeStart: n == 0,
				Value: p.Values[0], LogProb: c.logProb, ActionMask: mask,
				Source: &record.Source{Agent: job.index, Generation: job.gen, Episode: ep,
					Fitness: job.fitness, BehaviorLogProb: c.behaviorProb}})
			if term || trunc {
				break
			}
		}
	}
	return steps, nil
}

// write writes the dataset, all of it or (on error) nothing.
func (f *sampleFlags) write(jobs []sampleJob, steps [][]record.Step) error {
	cfg, err := evo.ReadRunConfig(f.run)
	if err != nil {
		return err
	}
	a, err := agent.Load(jobs[0].file)
	if err != nil {
		return err
	}
	gens := []int{}
	for _, j := range jobs {
		if !slices.Contains(gens, j.gen) {
			gens = append(gens, j.gen)
		}
	}
	run, err := filepath.Abs(f.run)
	if err != nil {
		return err
	}
	info := datasetInfo{Format: "evolve-dataset", Version: 1, Run: run, Env: cfg.Env.ID, EnvOptions: cfg.Env.Options,
		Method: f.method.name, Temperature: f.method.temperature, Epsilon: f.method.epsilon,
		Generations: gens, Elite: f.elite, EpisodesPerAgent: f.episodes, Seed: f.seed, MaxSteps: f.maxSteps}
	w, err := record.CreateDataset(f.out, a.ObservationSpace(), a.ActionSpace(), info)
	if err != nil {
		return fmt.Errorf("-o: %w", err)
	}
	for _, s := range steps {
		for _, st := range s {
			if err := w.Add(st); err != nil {
				return fmt.Errorf("-o: %w", err)
			}
		}
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("-o: %w", err)
	}
	return nil
}

// datasetInfo is a dataset's dataset.npy: how it was made.
type datasetInfo struct {
	Format           string       `json:"format"`
	Version          int          `json:"version"`
	Run              string       `json:"run"`
	Env              string       `json:"env"`
	EnvOptions       envs.Options `json:"env_options,omitempty"`
	Method           string       `json:"method"`
	Temperature      float64      `json:"temperature"`
	Epsilon          float64      `json:"epsilon"`
	Generations      []int        `json:"generations"`
	Elite            bool         `json:"elite"`
	EpisodesPerAgent int          `json:"episodes_per_agent"`
	Seed             int64        `json:"seed"`
	MaxSteps         int          `json:"max_steps"`
}

// episodeReturns returns the return of each episode in steps.
func episodeReturns(steps []record.Step) []float64 {
	var out []float64
	for _, s := range steps {
		if s.EpisodeStart {
			out = append(out, 0)
		}
		out[len(out)-1] += s.Reward
	}
	return out
}

func countSteps(steps [][]record.Step) int {
	n := 0
	for _, s := range steps {
		n += len(s)
	}
	return n
}

package evo

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/internal/nearest"
	"github.com/evolverl/evolve/netconf"
	"github.com/evolverl/evolve/nn"
)

// Validate checks every value of a complete config (as LoadConfig returns
// it) and returns all problems, each naming the key, the value and what is
// allowed. It also builds the env and one agent, so that an env option, an
// observation space the network cannot read or an encoder the env does not
// suit is reported before a run starts; in between, it refuses a config
// whose estimated memory exceeds the machine's (docs/config.md, "memory"). Building
// a "gym:" env starts its Python child; a tool that only reads a config
// uses DecodeConfig, which starts nothing. Its errors match ErrBadInput.
func (c Config) Validate() error { return c.ValidateContext(context.Background()) }

// ValidateContext is Validate with a context: once ctx is done, the env it
// builds (a gym: env's Python child, which may take long to start) is
// stopped, and it fails with an error matching envs.ErrInterrupted.
func (c Config) ValidateContext(ctx context.Context) error {
	c, err := c.Complete() // what New trains (a config built in Go is completed first)
	if err != nil {
		return err
	}
	return c.validate(ctx, true)
}

// validate is ValidateContext; without build it does not build the agent.
func (c Config) validate(ctx context.Context, build bool) error {
	env, err := c.validateEnv(ctx, build)
	if env != nil {
		envs.Close(env)
	}
	return err
}

// validateEnv is validate, returning the env it made, for the caller to
// use and close (nil with an error): a gym: env's Python child is slow to
// start.
func (c Config) validateEnv(ctx context.Context, build bool) (envs.Env, error) {
	var ps problems
	c.checkEnv(&ps)
	c.checkPopulation(&ps)
	ppoOK := c.checkPPO(&ps)
	c.checkMutation(&ps)
	ps.add(c.validateStrategy()...)
	c.checkTournamentAndCheckpoints(&ps)
	c.checkDemos(&ps)
	if ppoOK { // ranges derive from, and are checked against, valid [ppo] values
		names := make([]string, 0, len(c.HP))
		for name := range c.HP {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			ps.add(c.validateHP(name, c.HP[name])...)
		}
	}
	var env envs.Env
	if len(ps) == 0 {
		var err error
		env, err = c.tryBuild(ctx, build)
		ps.add(err)
	}
	if err := errors.Join(ps...); err != nil {
		return nil, badInput(err)
	}
	return env, nil
}

// problems collects what is wrong with a config, each naming its key.
type problems []error

// bad records key = v and what is allowed instead.
func (ps *problems) bad(key string, v any, want string) {
	*ps = append(*ps, fmt.Errorf("%s = %v: want %s", key, v, want))
}

// add records errors (nil ones are dropped by errors.Join).
func (ps *problems) add(errs ...error) { *ps = append(*ps, errs...) }

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// checkEnv checks out_dir and [env].
func (c Config) checkEnv(ps *problems) {
	if c.OutDir == "" {
		ps.bad("out_dir", `""`, "a directory")
	}
	if _, ok := envs.Lookup(c.Env.ID); !ok && !strings.HasPrefix(c.Env.ID, envs.GymPrefix) {
		// A "gym:" id is checked when the env is built (tryBuild), which
		// starts the Python child and asks it for the env.
		if near := nearest.Name(c.Env.ID, envs.IDs(), 3); near != "" {
			ps.bad("env.id", fmt.Sprintf("%q", c.Env.ID), fmt.Sprintf("a registered env: did you mean %q?", near))
		} else {
			ps.bad("env.id", fmt.Sprintf("%q", c.Env.ID), "a registered env ("+strings.Join(envs.IDs(), ", ")+") or a Gymnasium env as \"gym:<id>\"; "+
				"an env of your own must be registered with envs.Register in the program that trains or resumes it (cli.Main's, as examples/customenv does)")
		}
	}
	if c.Env.NumEnvs < 1 {
		ps.bad("env.num_envs", c.Env.NumEnvs, ">= 1")
	} else if c.Env.NumEnvs > maxNumEnvs {
		ps.bad("env.num_envs", c.Env.NumEnvs, fmt.Sprintf("<= %d", maxNumEnvs))
	}
	if c.Env.EvalEpisodes < 1 {
		ps.bad("env.eval_episodes", c.Env.EvalEpisodes, ">= 1")
	} else if c.Env.EvalEpisodes > maxEvalEpisodes {
		ps.bad("env.eval_episodes", c.Env.EvalEpisodes, fmt.Sprintf("<= %d", maxEvalEpisodes))
	}
	if c.Env.EvalMaxSteps < 1 {
		ps.bad("env.eval_max_steps", c.Env.EvalMaxSteps, ">= 1")
	}
}

// checkPopulation checks [population] and learn_step against num_envs.
func (c Config) checkPopulation(ps *problems) {
	p := c.Population
	if p.Size < 1 {
		ps.bad("population.size", p.Size, ">= 1")
	} else if p.Size > maxPopulationSize {
		ps.bad("population.size", p.Size, fmt.Sprintf("<= %d agents", maxPopulationSize))
	}
	if p.EvoSteps < 1 {
		ps.bad("population.evo_steps", p.EvoSteps, ">= 1")
	}
	if p.MaxSteps < 1 {
		ps.bad("population.max_steps", p.MaxSteps, ">= 1")
	}
	if math.IsNaN(p.Target) {
		ps.bad("population.target", p.Target, "a number (inf: no target)")
	}
	if p.MinGenerations < 0 {
		ps.bad("population.min_generations", p.MinGenerations, ">= 0")
	}
	if p.Workers < 0 {
		ps.bad("population.workers", p.Workers, ">= 0 (0: GOMAXPROCS)")
	}
	if p.EliteEpisodes < 0 || p.EliteEpisodes > maxEvalEpisodes {
		ps.bad("population.elite_episodes", p.EliteEpisodes, fmt.Sprintf("0 (off) to %d", maxEvalEpisodes))
	}
	if !(p.ConfirmMargin >= 0 && p.ConfirmMargin <= 10) {
		ps.bad("population.confirm_margin", p.ConfirmMargin, "0 to 10 standard errors")
	}
	if c.PPO.LearnStep < c.Env.NumEnvs && c.Env.NumEnvs >= 1 {
		ps.bad("ppo.learn_step", c.PPO.LearnStep, fmt.Sprintf(">= env.num_envs (%d): a rollout takes learn_step/num_envs steps of each env", c.Env.NumEnvs))
	}
}

// checkPPO checks [ppo], the backend and the sizes the memory estimate
// relies on; it reports whether they are valid.
func (c Config) checkPPO(ps *problems) bool {
	ppo := c.PPO
	if ppo.Backend != "" {
		// The backend is chosen in [net], not [ppo]: check it here by its key.
		if _, err := nn.Lookup(ppo.Backend); err != nil {
			ps.add(fmt.Errorf("net.backend = %q: %w", ppo.Backend, err))
		}
		ppo.Backend = ""
	}
	ppoErr := ppo.Validate()
	if ppoErr != nil {
		ps.add(prefixLines("ppo.", ppoErr))
	}
	sizeErrs := c.validateSizes()
	ps.add(sizeErrs...)
	return ppoErr == nil && len(sizeErrs) == 0
}

// checkMutation checks [mutation]'s weights and settings.
func (c Config) checkMutation(ps *problems) {
	m := c.Mutation
	weights := []struct {
		key string
		v   float64
	}{{"no_mutation", m.NoMutation}, {"architecture", m.Architecture}, {"parameters", m.Parameters},
		{"activation", m.Activation}, {"rl_hp", m.RLHP}}
	sum := 0.0
	for _, w := range weights {
		if !(w.v >= 0) || !finite(w.v) {
			ps.bad("mutation."+w.key, w.v, "a weight >= 0")
		} else {
			sum += w.v
		}
	}
	if !(sum > 0) {
		ps.add(errors.New("mutation: no_mutation, architecture, parameters, activation and rl_hp are all 0: want at least one weight > 0"))
	}
	if !(m.NewLayer >= 0 && m.NewLayer <= 1) {
		ps.bad("mutation.new_layer", m.NewLayer, "a probability in [0, 1]")
	}
	if !(m.MutationSD >= 0) || !finite(m.MutationSD) {
		ps.bad("mutation.mutation_sd", m.MutationSD, ">= 0")
	}
}

// checkTournamentAndCheckpoints checks [tournament] and [checkpoint].
func (c Config) checkTournamentAndCheckpoints(ps *problems) {
	p := c.Population
	// The tournament's size is checked against the population only where a
	// tournament is held: independent agents and PBT hold none.
	tournament := !p.Independent && p.Selection != SelectPBT
	if c.Tournament.Size < 1 || (tournament && p.Size >= 1 && c.Tournament.Size > p.Size) {
		ps.bad("tournament.size", c.Tournament.Size, fmt.Sprintf("in [1, population.size = %d]", p.Size))
	}
	if c.Checkpoint.Every < 1 {
		ps.bad("checkpoint.every", c.Checkpoint.Every, ">= 1 (generations)")
	}
	if c.Checkpoint.Keep < 0 {
		ps.bad("checkpoint.keep", c.Checkpoint.Keep, ">= 0 (0 keeps all)")
	}
}

// validateSizes checks the upper bounds of the [ppo] sizes that set an
// agent's memory: learn_step, batch_size and max_seq_len.
func (c Config) validateSizes() []error {
	var errs []error
	p := c.PPO
	if p.LearnStep > maxLearnStep {
		errs = append(errs, fmt.Errorf("ppo.learn_step = %d: want <= %d", p.LearnStep, maxLearnStep))
	}
	if p.LearnStep >= 1 && p.BatchSize > p.LearnStep {
		errs = append(errs, fmt.Errorf("ppo.batch_size = %d: want <= ppo.learn_step (%d): a minibatch is drawn from one rollout", p.BatchSize, p.LearnStep))
	}
	n := c.Env.NumEnvs
	if c.Net.Encoder.Recurrent() && n >= 1 && p.LearnStep >= n && p.MaxSeqLen > p.LearnStep/n {
		errs = append(errs, fmt.Errorf("ppo.max_seq_len = %d: want <= learn_step/num_envs = %d: a BPTT sequence lies within one env's part of a rollout (a longer one is only padding)",
			p.MaxSeqLen, p.LearnStep/n))
	} else if p.MaxSeqLen > maxLearnStep {
		errs = append(errs, fmt.Errorf("ppo.max_seq_len = %d: want <= %d", p.MaxSeqLen, maxLearnStep))
	}
	transformer := c.Net.Encoder == netconf.EncoderTransformer || slices.Contains(c.Net.Memories, netconf.EncoderTransformer)
	if t := c.Net.Transformer; transformer && t != nil && n >= 1 && p.LearnStep >= n && t.Context > p.LearnStep/n {
		errs = append(errs, fmt.Errorf("net.transformer.context = %d: want <= learn_step/num_envs = %d: a window fits in an env's part of a rollout",
			t.Context, p.LearnStep/n))
	}
	return errs
}

// validateHP checks one [hp.<name>] table against the [ppo] value.
func (c Config) validateHP(name string, r HPRange) []error {
	var errs []error
	key := "hp." + name
	if f, i := hpField(&c.PPO, name); f == nil && i == nil {
		return []error{fmt.Errorf("[%s]: not a mutable hyperparameter; want one of %s", key, strings.Join(HPNames(), ", "))}
	}
	if name == "kl_threshold" && c.PPO.KLThreshold == 0 {
		return []error{fmt.Errorf("ppo.kl_threshold = 0 with an [hp.kl_threshold] range: the KL-adaptive rate is off; set ppo.kl_threshold > 0 to turn it on, or remove the [hp.kl_threshold] table")}
	}
	if name == "rnd_coef" && c.PPO.RNDCoef == 0 {
		// Said first: the range's own defaults around 0 would only confuse.
		return []error{fmt.Errorf("ppo.rnd_coef = 0 with an [hp.rnd_coef] range: to turn RND on, set ppo.rnd_coef > 0; to keep it off, remove the [hp.rnd_coef] table")}
	}
	if !finite(r.Min) || !finite(r.Max) || !(r.Min <= r.Max) {
		return []error{fmt.Errorf("%s: min = %v, max = %v: want finite min <= max", key, r.Min, r.Max)}
	}
	if !(r.Grow >= 1) || !finite(r.Grow) {
		errs = append(errs, fmt.Errorf("%s.grow = %v: want a factor >= 1", key, r.Grow))
	}
	if !(r.Shrink > 0 && r.Shrink <= 1) {
		errs = append(errs, fmt.Errorf("%s.shrink = %v: want a factor in (0, 1]", key, r.Shrink))
	}
	if isIntHP(name) && (r.Min != math.Trunc(r.Min) || r.Max != math.Trunc(r.Max)) {
		errs = append(errs, fmt.Errorf("%s: min = %v, max = %v: want integers", key, r.Min, r.Max))
	}
	if (name == "learn_step" || name == "batch_size") && r.Max > maxLearnStep {
		return append(errs, fmt.Errorf("%s.max = %v: want <= %d", key, r.Max, maxLearnStep))
	}
	if name == "rnd_coef" && !(r.Min > 0) {
		errs = append(errs, fmt.Errorf("%s.min = %v: want > 0 (a mutation cannot turn RND off or on)", key, r.Min))
	}
	if v := hpValue(c.PPO, name); v < r.Min || v > r.Max {
		errs = append(errs, fmt.Errorf("ppo.%s = %s: outside [%s] min = %s, max = %s", name, hpString(name, v), key, hpString(name, r.Min), hpString(name, r.Max)))
	}
	for _, end := range []struct {
		key string
		v   float64
	}{{"min", r.Min}, {"max", r.Max}} {
		t := c.PPO
		t.Backend = "" // checked once, as net.backend
		setHP(&t, name, end.v)
		if err := t.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("%s.%s = %v: %w", key, end.key, end.v, err))
		} else if name == "learn_step" && end.key == "min" && int(end.v) < c.Env.NumEnvs {
			errs = append(errs, fmt.Errorf("%s.min = %v: want >= env.num_envs (%d)", key, end.v, c.Env.NumEnvs))
		}
	}
	return errs
}

// optionValue matches the option an env's error about a value names:
// `option "key"`, or the gym bridge's `option key = …`, `option key[i] = …`
// and `option key[i] (…)`.
var optionValue = regexp.MustCompile(`option "([a-z0-9_]+)"|option ([a-z0-9_]+)(?:\[\d+\])? [=(]`)

// optionOf returns the [env.options] key an error of envs.Make is about
// (the first unknown one, or the one whose value is refused), or "".
func optionOf(err error) string {
	var unknown *envs.UnknownOptionsError
	if errors.As(err, &unknown) && len(unknown.Unknown) > 0 {
		if k := unknown.Unknown[0]; optionValue.MatchString(`option "` + k + `"`) {
			return k
		}
		return ""
	}
	if m := optionValue.FindStringSubmatch(err.Error()); m != nil {
		return m[1] + m[2]
	}
	return ""
}

// tryBuild makes the env with its options and, with build, one agent for
// it. Before the agent it estimates what the whole run needs (checkMemory),
// so that a config too big for the machine is refused before anything is
// allocated for it, rather than crashing the run with "out of memory". It
// returns the env, open, when all went well.
func (c Config) tryBuild(ctx context.Context, build bool) (envs.Env, error) {
	env, err := envs.MakeContext(ctx, c.Env.ID, c.Env.Options)
	if err != nil {
		if k := optionOf(err); k != "" {
			// Led by the option's key, the error gets the option's line
			// (withKeyLines), not the [env] table's.
			return nil, fmt.Errorf("env.options.%s: env %s: %w", k, c.Env.ID, err)
		}
		return nil, fmt.Errorf("env %s: %w", c.Env.ID, err)
	}
	if other := c.Net.DictTable(); other != "" {
		if _, dict := env.ObservationSpace().(envs.Dict); !dict {
			envs.Close(env)
			return nil, fmt.Errorf("[net.%s] given, but net.encoder = %q and %s observes %v, not a Dict (whose image keys take a CNN and 1-D keys an MLP): remove it or set encoder = %q",
				other, c.Net.Encoder, c.Env.ID, env.ObservationSpace(), other)
		}
	}
	if err := c.checkMemory(env.ObservationSpace(), env.ActionSpace()); err != nil {
		envs.Close(env)
		return nil, err
	}
	if build {
		if _, err := agent.New(env.ObservationSpace(), env.ActionSpace(), c.PPO, 0); err != nil {
			envs.Close(env)
			return nil, fmt.Errorf("net and ppo for %s: %w", c.Env.ID, err)
		}
	}
	return env, nil
}

// Upper bounds of config values, far above any run this program is made
// for (docs/config.md lists them). A few extra digits typed
// by mistake are then an error naming the key, and every product of sizes
// in the memory estimate stays far inside int64.
const (
	maxPopulationSize = 10_000
	maxNumEnvs        = 4096
	maxEvalEpisodes   = 1_000_000
	// maxLearnStep bounds learn_step, and with it batch_size (at most
	// learn_step) and max_seq_len, also as the max of their [hp] ranges.
	maxLearnStep = 100_000_000
)

// prefixLines prefixes every line of err's message with prefix (for the
// key names of a joined error from a sub-config's Validate).
func prefixLines(prefix string, err error) error {
	lines := strings.Split(err.Error(), "\n")
	errs := make([]error, len(lines))
	for i, l := range lines {
		if rest, ok := strings.CutPrefix(l, "net: "); ok {
			l = "net." + rest // [net] is a section of its own
		} else {
			l = prefix + l
		}
		errs[i] = errors.New(l)
	}
	// One error per line, so that each gets its key's line (withKeyLines).
	return errors.Join(errs...)
}

// hpString writes a value of hyperparameter name as its config key does:
// an integer one as an integer (1000000, not 1e+06).
func hpString(name string, v float64) string {
	if isIntHP(name) && v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

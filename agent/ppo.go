package agent

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/evolverl/evolve/buffer"
	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/internal/bufs"
	"github.com/evolverl/evolve/netconf"
)

// PPO is one proximal-policy-optimisation agent: an actor and a critic
// network (netconf specs and weights), its optimizer state, observation
// statistics, hyperparameters, RNG and counters. It is not safe for
// concurrent use; evolution gives every agent its own goroutine.
type PPO struct {
	cfg                   Config
	obsSpace, actSpace    envs.Space
	dist                  *dist
	actorSpec, criticSpec netconf.Spec
	actor, critic         netconf.Params // critic holds only its head when encoders are shared
	logStd                []float32      // Gaussian policies only
	adam                  *Adam
	norm                  *RunningNorm // nil unless cfg.NormalizeObs
	rewNorm               *RunningNorm // the discounted return's statistics; nil unless cfg.NormalizeReward
	valNorm               *RunningNorm // the value targets' statistics; nil unless cfg.NormalizeValue
	rnd                   *rndModule   // Random Network Distillation; nil unless cfg.RNDCoef > 0
	scale                 []imageScale // bounded images in an observation, scaled unless norm is set
	oneHot                *oneHot      // a Discrete or MultiDiscrete observation's encoding; nil for others
	pcg                   *rand.PCG
	rng                   *rand.Rand

	// Steps counts env steps collected for training; Updates counts
	// optimizer steps. TotalSteps is the horizon of LR annealing.
	Steps, Updates, TotalSteps int
	// History lists the mutations applied to this agent, oldest first.
	History []string
	// Env is the env the agent was trained on, when known; Save records it.
	Env EnvRef

	work   *nets     // the networks and their buffers, built on first use
	roll   *rollout  // the training rollout in progress, if any
	deploy []float32 // recurrent state per row for Act, grown on demand
	// sdeExpl holds gSDE's exploration matrices, one [feat·act] per row
	// acted on: drawn at a rollout's start and every sde_sample_freq steps,
	// and whenever a stochastic act has another number of rows. sdeStale
	// marks the rows whose episode restarted (ResetState) outside training:
	// the next stochastic act redraws their matrices.
	sdeExpl  []float32
	sdeStale []bool
	// rndReward is the mean intrinsic reward of the last rollout (RND).
	rndReward float64
	// demos are the given demonstrations (SetDemos), replayed with PPO+D.
	demos []Demo
	// learnCtx, while Train updates, stops the update between minibatches
	// once it is cancelled: an update of a large recurrent agent takes
	// minutes, too long for a Ctrl-C to wait on.
	learnCtx context.Context
}

// New returns an agent for the given spaces with freshly initialised
// networks, drawing every random number from a stream seeded by seed.
func New(obsSpace, actSpace envs.Space, cfg Config, seed uint64) (*PPO, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("agent config: %w", err)
	}
	a := &PPO{cfg: cfg, obsSpace: obsSpace, actSpace: actSpace}
	a.pcg = rand.NewPCG(seed, 0x70706f) // "ppo"
	a.rng = rand.New(a.pcg)
	if err := a.setSpecs(cfg.Net); err != nil {
		return nil, err
	}
	var err error
	if a.actor, err = netconf.Init(a.actorSpec, a.rng); err != nil {
		return nil, fmt.Errorf("init actor: %w", err)
	}
	critic, err := netconf.Init(a.criticSpec, a.rng)
	if err != nil {
		return nil, fmt.Errorf("init critic: %w", err)
	}
	a.critic = a.criticParams(critic)
	if cfg.UseSDE && a.dist.kind != gaussian {
		return nil, fmt.Errorf("agent config: use_sde = true: gSDE needs a Box action space, the env's is %v", actSpace)
	}
	if cfg.NormalizeObs && a.oneHot != nil {
		return nil, fmt.Errorf("agent config: normalize_obs = true: the observation space %v is one-hot encoded, there is nothing to normalise", obsSpace)
	}
	if a.dist.kind == gaussian {
		a.logStd = make([]float32, a.dist.stdLen())
		for i := range a.logStd {
			a.logStd[i] = float32(cfg.ActionStdInit)
		}
	}
	a.adam = NewAdam(cfg.LR, a.tensorSizes())
	if cfg.NormalizeObs {
		a.norm = NewRunningNorm(obsSpace.FlatSize())
	}
	if cfg.NormalizeReward {
		a.rewNorm = NewRunningNorm(1)
	}
	if cfg.NormalizeValue {
		a.valNorm = newValueNorm()
	}
	if cfg.rndOn() {
		if a.rnd, err = newRND(obsSpace.FlatSize(), cfg.rnd(), cfg.LR, a.rng); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// criticParams keeps what the critic owns: everything, or only its head
// when it shares the actor's encoder.
func (a *PPO) criticParams(p netconf.Params) netconf.Params {
	if a.cfg.ShareEncoders {
		return p.Filter("head.", "out.")
	}
	return p
}

// eachTensor calls f for every trainable tensor of actor, critic and logStd
// (skipped when nil) in the one order of the agent's tensors — actor,
// critic, log-std — with its name in agent files ("actor.<name>",
// "critic.<name>", "actor.log_std"), its shape and a pointer to its data.
// The log-std's shape is stdShape ([feat, act] with gSDE), or [len] when
// nil. The optimizer's moments, gradient clipping, the gradients, save and load,
// and the finiteness check all follow this order.
func eachTensor(actor, critic netconf.Params, logStd *[]float32, stdShape []int, f func(name string, shape []int, data *[]float32)) {
	for i := range actor {
		f("actor."+actor[i].Name, actor[i].Shape, &actor[i].Data)
	}
	for i := range critic {
		f("critic."+critic[i].Name, critic[i].Shape, &critic[i].Data)
	}
	if *logStd != nil {
		if stdShape == nil {
			stdShape = []int{len(*logStd)}
		}
		f("actor.log_std", stdShape, logStd)
	}
}

// tensors returns every trainable tensor's data in the order of eachTensor.
func (a *PPO) tensors() [][]float32 {
	var out [][]float32
	eachTensor(a.actor, a.critic, &a.logStd, a.dist.stdShape(), func(_ string, _ []int, d *[]float32) { out = append(out, *d) })
	return out
}

func (a *PPO) tensorSizes() []int { return sizesOf(a.tensors()) }

// sizesOf returns the length of each slice.
func sizesOf(tensors [][]float32) []int {
	sizes := make([]int, len(tensors))
	for i, t := range tensors {
		sizes[i] = len(t)
	}
	return sizes
}

// Config returns the agent's hyperparameters.
func (a *PPO) Config() Config {
	c := a.cfg
	c.Net = c.Net.Clone() // the caller may edit it
	return c
}

// LearningRate returns the rate the next update starts from: the adapted
// one with kl_threshold, else lr (before annealing).
func (a *PPO) LearningRate() float64 {
	if a.cfg.klAdaptive() {
		return a.adam.LR
	}
	return a.cfg.LR
}

// ObservationSpace and ActionSpace return the spaces the agent was built for.
func (a *PPO) ObservationSpace() envs.Space { return a.obsSpace }

// ActionSpace returns the space of the agent's actions.
func (a *PPO) ActionSpace() envs.Space { return a.actSpace }

// Specs returns copies of the actor's and the critic's full network specs,
// with the input, output and output gain the spaces set.
func (a *PPO) Specs() (actor, critic netconf.Spec) {
	return a.actorSpec.Clone(), a.criticSpec.Clone()
}

// ParamCounts returns the number of trainable values the actor and the
// critic own, as saved in the agent's file: the actor's include the Gaussian
// log-std, and with shared encoders the critic owns only its head and output
// layer (it reads the actor's encoder and latent layer).
func (a *PPO) ParamCounts() (actor, critic int) {
	eachTensor(a.actor, nil, &a.logStd, nil, func(_ string, _ []int, d *[]float32) { actor += len(*d) })
	critic = a.critic.Size()
	return actor, critic
}

// RNDParamCount returns the number of weights of the agent's Random
// Network Distillation networks — target, predictor and intrinsic critic —
// or 0 without RND.
func (a *PPO) RNDParamCount() int {
	n := 0
	if a.rnd != nil {
		a.rnd.eachTensor(func(_ string, _ []int, d *[]float32, _ bool) { n += len(*d) })
	}
	return n
}

// NormCount returns the number of observations the running normaliser has
// seen, and false when observation normalisation is off.
func (a *PPO) NormCount() (float64, bool) {
	if a.norm == nil {
		return 0, false
	}
	return a.norm.Count, true
}

// RewardStd returns the standard deviation training rewards are divided by
// (that of the discounted return, with normalize_reward), and false when
// reward scaling is off.
func (a *PPO) RewardStd() (float64, bool) {
	if a.rewNorm == nil {
		return 0, false
	}
	return math.Sqrt(a.rewNorm.Var[0] + rewardEpsilon), true
}

// ValueScale returns the statistics that turn the critic's standardised
// output v into a value in return units, std·clip(v, ±5) + mean (as
// float32, as acting computes it), and false without normalize_value.
func (a *PPO) ValueScale() (mean, std float64, ok bool) {
	if a.valNorm == nil {
		return 0, 0, false
	}
	m, s := a.valueStats()
	return float64(m), float64(s), true
}

// recurrent reports whether the networks carry a recurrent (LSTM or GRU) state.
func (a *PPO) recurrent() bool { return a.actorSpec.Recurrent() }

// stateSize is the number of floats of recurrent state per env: h (and an
// LSTM's c) of every layer, for the actor and (unless shared) the critic.
func (a *PPO) stateSize() int {
	if !a.recurrent() {
		return 0
	}
	n := a.actorSpec.StateSize()
	if !a.cfg.ShareEncoders {
		n += a.criticSpec.StateSize()
	}
	return n
}

// preprocess writes the network input for raw observations into dst:
// normalised with the running statistics (updated first when update is
// set) if enabled, else with every bounded image (a CNN's Box input, or an
// image key of a Dict) scaled to [0, 1] by its bounds.
func (a *PPO) preprocess(dst, raw []float32, update bool) {
	if a.oneHot != nil {
		a.oneHot.encode(dst, raw)
		return
	}
	if a.norm != nil {
		if update {
			a.norm.Update(raw)
		}
		a.norm.Normalize(dst, raw)
		return
	}
	copy(dst, raw)
	if len(a.scale) == 0 {
		return
	}
	width := a.obsSpace.FlatSize()
	for r := 0; r+width <= len(raw); r += width {
		for _, sc := range a.scale {
			n := len(sc.low)
			x, y := raw[r+sc.off:r+sc.off+n], dst[r+sc.off:r+sc.off+n]
			for i, v := range x {
				lo, hi := sc.low[i], sc.high[i]
				if hi > lo {
					y[i] = (v - lo) / (hi - lo)
				} else {
					y[i] = 0
				}
			}
		}
	}
}

// actOut receives the result of acting on a batch of rows.
type actOut struct {
	actions    []float32 // as stored for training: the Gaussian's unclipped sample
	envActions []float32 // as sent to the env: Box actions clipped to the bounds
	logp       []float32
	values     []float32
	// choiceLogp holds, for categorical policies, the log-probabilities of
	// every choice per component ([rows·n_c] each): views of the backend's
	// buffers, valid until the next act.
	choiceLogp [][]float32
}

func (o *actOut) resize(rows, width int) {
	o.actions = bufs.Grow(o.actions, rows*width)
	o.envActions = bufs.Grow(o.envActions, rows*width)
	o.logp = bufs.Grow(o.logp, rows)
	o.values = bufs.Grow(o.values, rows)
}

// fillMasks validates the rows' masks and writes the additive mask, 0 for
// legal and maskFill for illegal choices, into add ([rows·size]); add is
// nil for distributions that take no mask.
func (a *PPO) fillMasks(add []float32, masks [][]bool, rows int) error {
	if add == nil {
		for i, m := range masks {
			if m != nil {
				return fmt.Errorf("row %d has an action mask, but %v actions take none", i, a.actSpace)
			}
		}
		return nil
	}
	clear(add)
	for i, m := range masks {
		if m == nil {
			continue
		}
		if len(m) != a.dist.size {
			return fmt.Errorf("row %d: action mask of %s, want %d for %v", i, countOf(len(m), "entry", "entries"), a.dist.size, a.actSpace)
		}
		off := 0
		for c, n := range a.dist.nvec {
			legal := false
			for j := range n {
				if m[off+j] {
					legal = true
				} else {
					add[i*a.dist.size+off+j] = maskFill
				}
			}
			if !legal {
				return fmt.Errorf("row %d: action mask leaves component %d no legal choice", i, c)
			}
			off += n
		}
	}
	return nil
}

// Act returns actions for a batch of raw observations (rows of the
// observation space's flat size), one mask per row or nil, ready for the
// env (Box actions clipped). With deterministic the most likely action is
// taken, for evaluation and deployment; otherwise actions are sampled from
// the agent's own RNG. Recurrent agents keep a state per row between calls;
// ResetState clears it, as at an episode start. While a row's episode is
// under way the number of rows is fixed: a batch of another size is an
// error until ResetState(-1). An agent is not safe for concurrent use
// (Clone one per goroutine).
func (a *PPO) Act(obs []float32, masks [][]bool, deterministic bool) ([]float32, error) {
	out, err := a.step("act", obs, masks, deterministic)
	if err != nil {
		return nil, err
	}
	return out.envActions, nil
}

// ResetState zeroes the recurrent state that Act keeps for row i (all rows
// when i < 0), as at the start of an episode; a row beyond the state Act
// has kept so far has none to clear. A gSDE agent's next
// stochastic Act draws new exploration noise for those rows.
func (a *PPO) ResetState(i int) {
	size := a.stateSize()
	if i < 0 {
		clear(a.deploy)
	} else if (i+1)*size <= len(a.deploy) {
		clear(a.deploy[i*size : (i+1)*size])
	}
	for r := range a.sdeStale {
		if i < 0 || r == i {
			a.sdeStale[r] = true
		}
	}
}

// Evaluate plays episodes on env with deterministic actions, seeding the
// first reset with seed, and returns the mean undiscounted return. It is
// Play's mean; see Play for the rules.
func (a *PPO) Evaluate(env envs.Env, episodes, maxSteps int, seed int64) (float64, error) {
	p, err := a.Play(env, episodes, maxSteps, seed)
	if err != nil {
		return 0, err
	}
	return p.Mean(), nil
}

// Episodes is what Play played: each episode's undiscounted return, in
// order, and the env steps of all of them.
type Episodes struct {
	Returns []float64
	Steps   int
	total   float64 // every reward in the order played, so Mean keeps Evaluate's rounding
}

// Mean returns the mean return (NaN for none).
func (e Episodes) Mean() float64 {
	if len(e.Returns) == 0 {
		return math.NaN()
	}
	return e.total / float64(len(e.Returns))
}

// Play plays episodes on env with deterministic actions, seeding the first
// reset with seed, and returns every episode's return and the steps taken.
//
// An episode that reaches maxSteps steps is cut there and counts with its
// return so far, as a truncation would: evaluation ends even on an env
// without a time limit. Env output that training would refuse (an
// observation of the wrong size, a NaN or Inf observation or reward) is an
// error naming the env, as envs.Vector's are; so is an env whose spaces are
// not the agent's.
func (a *PPO) Play(env envs.Env, episodes, maxSteps int, seed int64) (Episodes, error) {
	return a.PlayContext(context.Background(), env, episodes, maxSteps, seed)
}

// PlayContext is Play that stops, with an error wrapping ctx.Err(), once
// ctx is cancelled: it checks before every step, and interrupts env
// (envs.InterruptWhenDone), which is then unusable, should a step be under
// way.
func (a *PPO) PlayContext(ctx context.Context, env envs.Env, episodes, maxSteps int, seed int64) (Episodes, error) {
	return a.play(ctx, env, episodes, maxSteps, seed, true)
}

// PlaySampled is PlayContext with actions sampled from the policy, as
// training acts, instead of its deterministic actions: a measure of the same
// kind as training episodes' returns, without learning. The samples are
// drawn from the agent's random stream (saved with it), so they are
// reproducible and move that stream on.
func (a *PPO) PlaySampled(ctx context.Context, env envs.Env, episodes, maxSteps int, seed int64) (Episodes, error) {
	return a.play(ctx, env, episodes, maxSteps, seed, false)
}

// play is PlayContext, with deterministic or sampled actions.
func (a *PPO) play(ctx context.Context, env envs.Env, episodes, maxSteps int, seed int64, deterministic bool) (Episodes, error) {
	var out Episodes
	switch {
	case env == nil:
		return out, errors.New("evaluate: no env")
	case episodes < 1:
		return out, errors.New("evaluate: need at least one episode")
	case maxSteps < 1:
		return out, fmt.Errorf("evaluate: max steps %d: need at least one step per episode", maxSteps)
	case !envs.SameSpace(env.ObservationSpace(), a.obsSpace) || !envs.SameSpace(env.ActionSpace(), a.actSpace):
		return out, fmt.Errorf("evaluate: env %T has spaces %v / %v, the agent %v / %v",
			env, env.ObservationSpace(), env.ActionSpace(), a.obsSpace, a.actSpace)
	}
	defer envs.InterruptWhenDone(ctx, env)() // as Train does
	done := ctx.Done()
	for ep := range episodes {
		s := envs.NoSeed
		if ep == 0 {
			s = seed
		}
		obs, info := env.Reset(s)
		if err := envs.CheckOutput(env, a.obsSpace, a.actSpace, "reset", obs, 0, info); err != nil {
			return out, fmt.Errorf("evaluate episode %d: %w", ep+1, err)
		}
		a.ResetState(-1)
		ret := 0.0
		for step := 1; step <= maxSteps; step++ {
			select {
			case <-done:
				return out, fmt.Errorf("evaluate episode %d step %d: %w", ep+1, step, ctx.Err())
			default:
			}
			act, err := a.Act(obs, [][]bool{info.ActionMask}, deterministic)
			if err != nil {
				return out, fmt.Errorf("evaluate episode %d step %d: %w", ep+1, step, err)
			}
			var r float64
			var term, trunc bool
			obs, r, term, trunc, info = env.Step(act)
			if err := envs.CheckOutput(env, a.obsSpace, a.actSpace, "step", obs, r, info); err != nil {
				if ctx.Err() != nil { // interrupted, not the env's fault
					err = ctx.Err()
				}
				return out, fmt.Errorf("evaluate episode %d step %d: %w", ep+1, step, err)
			}
			out.total += r
			ret += r
			out.Steps++
			if term || trunc {
				break
			}
		}
		out.Returns = append(out.Returns, ret)
	}
	return out, nil
}

// mode returns the BPTT sequence mode.
func (a *PPO) mode() buffer.Mode { return buffer.Mode(a.cfg.BPTT) }

package envs

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/evolverl/evolve/internal/panicsite"
)

// CheckOptions tune Check. The zero value checks 1,000 random steps with
// seed 0.
type CheckOptions struct {
	// Steps is how many random steps to take (default 1000).
	Steps int
	// Seed seeds the env and the checker's own action sampler.
	Seed int64
}

// Check exercises env as an agent would and reports every problem it finds,
// joined into one error (nil when there are none). It is meant for users'
// own environments, in the spirit of Stable-Baselines3's check_env:
//
//   - both spaces are valid, and actions are not a Dict;
//   - every observation has the observation space's flat size, is finite
//     and lies in the space;
//   - every reward is finite;
//   - action masks, when given, have MaskSize entries, are only given for
//     Discrete or MultiDiscrete actions, and leave at least one legal choice
//     (the checker only takes legal actions);
//   - the same seed gives the same episodes (observations, rewards and
//     flags);
//   - nothing panics, not even an action the mask forbids: a careless
//     caller's illegal move must get a well-formed step back (Check plays
//     one after its runs and reports a panic or malformed output).
func Check(env Env, opts CheckOptions) (err error) {
	if opts.Steps <= 0 {
		opts.Steps = 1000
	}
	if opts.Seed < 0 {
		opts.Seed = 0
	}
	c := checker{env: env}
	defer func() {
		if p := recover(); p != nil {
			c.problem("%s: panicked: %v, in %s", c.where, p, panicsite.Of())
		}
		err = c.err()
	}()
	c.spaces()
	if len(c.problems) > 0 {
		return c.err()
	}
	first := c.run(opts.Seed, opts.Steps, "run 1")
	second := c.run(opts.Seed, opts.Steps, "run 2")
	c.compareRuns(first, second)
	c.illegalAction(opts.Seed)
	return c.err()
}

type checker struct {
	env      Env
	obsSpace Space
	actSpace Space
	maskSize int
	maskable bool
	problems []error
	repeats  []int          // how many more times each problem was seen
	kinds    map[string]int // a problem's kind: its index in problems
	omitted  int            // problems of new kinds beyond maxProblems
	where    string         // the call in progress, for reporting a panic
}

// problem records a problem, once per kind: a problem reported where it
// happened ("run 1: step 7: …") is of the same kind at every step, so that
// a fault of every step is one line with its count, not twenty.
func (c *checker) problem(format string, args ...any) {
	err := fmt.Errorf(format, args...)
	kind := err.Error()
	if strings.HasPrefix(format, "%s: ") {
		kind = format
	}
	if i, ok := c.kinds[kind]; ok {
		c.repeats[i]++
		return
	}
	if len(c.problems) == maxProblems {
		c.omitted++
		return
	}
	if c.kinds == nil {
		c.kinds = map[string]int{}
	}
	c.kinds[kind] = len(c.problems)
	c.problems = append(c.problems, err)
	c.repeats = append(c.repeats, 0)
}

func (c *checker) err() error {
	if len(c.problems) == 0 {
		return nil
	}
	ps := make([]error, 0, len(c.problems)+1)
	for i, p := range c.problems {
		if n := c.repeats[i]; n > 0 {
			p = fmt.Errorf("%w (and %d more %s)", p, n, plural(n, "time", "times"))
		}
		ps = append(ps, p)
	}
	if c.omitted > 0 {
		ps = append(ps, fmt.Errorf("and %d more %s", c.omitted, plural(c.omitted, "problem", "problems")))
	}
	return fmt.Errorf("envs: check %T: %w%w", Unwrapped(c.env), errors.Join(ps...), quiet{ErrBadOutput})
}

// maxProblems is the most kinds of problem Check's error lists: enough to
// act on, short enough to read.
const maxProblems = 20

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func (c *checker) spaces() {
	c.obsSpace, c.actSpace = c.env.ObservationSpace(), c.env.ActionSpace()
	if c.obsSpace == nil || c.actSpace == nil {
		c.problem("observation space %v or action space %v is nil", c.obsSpace, c.actSpace)
		return
	}
	if err := c.obsSpace.Validate(); err != nil {
		c.problem("observation space %v: %w", c.obsSpace, err)
	}
	if err := c.actSpace.Validate(); err != nil {
		c.problem("action space %v: %w", c.actSpace, err)
	}
	if _, ok := c.actSpace.(Dict); ok {
		c.problem("action space %v: Dict actions are not supported", c.actSpace)
	}
	c.maskSize, c.maskable = MaskSize(c.actSpace)
}

// trace is what one seeded run produced, for the determinism check.
type trace struct {
	obs     [][]float32
	rewards []float64
	flags   [][2]bool
}

// run resets with seed and takes steps random legal actions, checking every
// value the env returns.
func (c *checker) run(seed int64, steps int, name string) trace {
	var tr trace
	rng := rand.New(rand.NewPCG(uint64(seed), 0x5eed))
	action := make([]float32, c.actSpace.FlatSize())
	c.where = name + ": reset"
	obs, info := c.env.Reset(seed)
	c.observation(obs, fmt.Sprintf("%s: reset", name))
	c.mask(info, fmt.Sprintf("%s: reset", name))
	tr.obs = append(tr.obs, slices.Clone(obs))
	for n := range steps {
		where := fmt.Sprintf("%s: step %d", name, n+1) // counted from 1, as runs are
		c.where = where
		c.sample(rng, info.ActionMask, action)
		var reward float64
		var term, trunc bool
		obs, reward, term, trunc, info = c.env.Step(action)
		c.observation(obs, where)
		c.mask(info, where)
		if math.IsNaN(reward) || math.IsInf(reward, 0) {
			c.problem("%s: reward %v is not finite", where, reward)
		}
		tr.obs = append(tr.obs, slices.Clone(obs))
		tr.rewards = append(tr.rewards, reward)
		tr.flags = append(tr.flags, [2]bool{term, trunc})
		if term || trunc {
			obs, info = c.env.Reset(NoSeed)
			c.observation(obs, where+": reset")
			c.mask(info, where+": reset")
			tr.obs = append(tr.obs, slices.Clone(obs))
		}
	}
	return tr
}

func (c *checker) observation(obs []float32, where string) {
	if len(obs) != c.obsSpace.FlatSize() {
		c.problem("%s: observation has %d values, want %d for %v", where, len(obs), c.obsSpace.FlatSize(), c.obsSpace)
		return
	}
	for i, x := range obs {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			c.problem("%s: observation[%d] = %v is not finite", where, i, x)
			return
		}
	}
	if !c.obsSpace.Contains(obs) {
		c.problem("%s: observation %v is outside %v", where, obs, c.obsSpace)
	}
}

func (c *checker) mask(info Info, where string) {
	m := info.ActionMask
	if m == nil {
		return
	}
	if !c.maskable {
		c.problem("%s: action mask given for %v, which takes none", where, c.actSpace)
		return
	}
	if len(m) != c.maskSize {
		c.problem("%s: action mask has %d entries, want %d for %v", where, len(m), c.maskSize, c.actSpace)
		return
	}
	if i := maskDeadComponent(c.actSpace, m); i >= 0 {
		if _, multi := c.actSpace.(MultiDiscrete); multi {
			c.problem("%s: action mask leaves component %d no legal choice", where, i)
		} else {
			c.problem("%s: action mask leaves no legal action", where)
		}
	}
}

// sample draws a random action, legal under mask when the mask is usable.
func (c *checker) sample(rng *rand.Rand, mask []bool, dst []float32) {
	if mask != nil && c.maskable && len(mask) == c.maskSize {
		switch s := c.actSpace.(type) {
		case Discrete:
			s.SampleMasked(rng, mask, dst)
			return
		case MultiDiscrete:
			s.SampleMasked(rng, mask, dst)
			return
		}
	}
	c.actSpace.Sample(rng, dst)
}

// same reports whether x and y are the same value: NaN is NaN, so that an
// env giving NaN at the same step of both runs is not called random.
func same[F float32 | float64](x, y F) bool { return x == y || (x != x && y != y) }

func (c *checker) compareRuns(a, b trace) {
	for i := range min(len(a.obs), len(b.obs)) {
		if !slices.EqualFunc(a.obs[i], b.obs[i], same[float32]) {
			c.problem("not deterministic: observation %d differs between two runs with the same seed (%v vs %v)", i, a.obs[i], b.obs[i])
			return
		}
	}
	if !slices.EqualFunc(a.rewards, b.rewards, same[float64]) || !slices.Equal(a.flags, b.flags) || len(a.obs) != len(b.obs) {
		c.problem("not deterministic: rewards or episode ends differ between two runs with the same seed")
	}
}

// illegalAction plays, from a fresh episode, the first action that the
// current mask forbids, if the env ever forbids one within a few steps.
// The step must come back well formed; what the env makes of the move
// (ending the episode, a penalty) is its own rule.
func (c *checker) illegalAction(seed int64) {
	if !c.maskable {
		return
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x111e9a1))
	action := make([]float32, c.actSpace.FlatSize())
	_, info := c.env.Reset(seed)
	for range 100 {
		if info.ActionMask != nil && len(info.ActionMask) == c.maskSize {
			for k := 0; k < 1000; k++ {
				c.actSpace.Sample(rng, action)
				if !MaskAllows(c.actSpace, info.ActionMask, action) {
					c.where = fmt.Sprintf("illegal action %v", action)
					obs, r, _, _, _ := c.env.Step(action)
					c.observation(obs, c.where)
					if math.IsNaN(r) || math.IsInf(r, 0) {
						c.problem("%s: reward %v is not finite", c.where, r)
					}
					return
				}
			}
		}
		c.sample(rng, info.ActionMask, action)
		var term, trunc bool
		_, _, term, trunc, info = c.env.Step(action)
		if term || trunc {
			_, info = c.env.Reset(NoSeed)
		}
	}
}

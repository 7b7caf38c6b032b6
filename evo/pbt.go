package evo

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/evolverl/evolve/agent"
)

// exploitExplore makes generation g+1's population by PBT (see PBTConfig):
// the bottom quantile by fitness copies agents of the top quantile and
// explores their hyperparameters; every other agent goes on as it is, the
// best included, so the run's best agent is never lost. The ranking leaves
// out members ahead of the population's step clock (aheadOfClock), whose
// fitness came from more training than the others', and, as Ray Tune's
// burn_in_period does, members that have not trained pbt.burn_in steps yet:
// such a member is neither copied nor replaced, and takes no quantile slot
// from the others. A diverged member is ranked (last) whatever its steps,
// so that it is replaced as soon as others are ranked.
func (t *Trainer) exploitExplore(g int) error {
	b := t.cfg.PBT
	if b.Explore == ExplorePB2 {
		t.pb2Observe(g)
	}
	// Rank by fitness, best first; equal fitness keeps population order.
	var order []int
	for i, m := range t.members {
		if ahead := t.aheadOfClock(m); ahead > 0 {
			m.Mutation = fmt.Sprintf("none (pbt: %d steps ahead of the laggard, not ranked)", ahead)
			continue
		}
		if m.Agent.Steps < b.BurnIn && !diverged(m) {
			m.Mutation = fmt.Sprintf("none (pbt: burn-in, %s of %s steps, not ranked)", fmtHP(float64(m.Agent.Steps)), fmtHP(float64(b.BurnIn)))
			continue
		}
		m.Mutation = "none (pbt)"
		order = append(order, i)
	}
	n := len(order)
	k := min(int(math.Ceil(b.Quantile*float64(n)-1e-9)), n/2)
	last := func(i int) float64 { f := t.members[i].Fitness; return f[len(f)-1] }
	slices.SortStableFunc(order, func(x, y int) int {
		fx, fy := last(x), last(y)
		switch {
		case fx > fy:
			return -1
		case fx < fy:
			return 1
		}
		return 0
	})
	if k == 0 {
		return nil
	}
	top, bottom := order[:k], order[n-k:]
	r := newRNG(t.cfg.Seed, -1, g, purposeExploit)
	explore := t.explorer(g)
	next := slices.Clone(t.members)
	for _, lo := range bottom {
		hi := top[r.IntN(k)]
		src, dst := t.members[hi], t.members[lo]
		if ok, why := exploits(src, dst, b); !ok {
			dst.Mutation = "none (pbt: " + why + ")"
			continue
		}
		idx := t.nextIndex
		t.nextIndex++
		a := src.Agent.Clone(deriveSeed(t.cfg.Seed, idx, g, purposeClone))
		desc, err := explore(a, idx)
		if err != nil {
			return err
		}
		desc = fmt.Sprintf("pbt: exploit %d (%s > %s); %s", src.Index, fmtHP(last(hi)), fmtHP(last(lo)), desc)
		a.History = append(a.History, desc)
		next[lo] = &Member{Index: idx, Parent: src.Index, Mutation: desc, Agent: a,
			Fitness: slices.Clone(src.Fitness), Returns: slices.Clone(src.Returns)}
	}
	t.members = next
	return nil
}

// exploits reports whether agent lo should copy agent hi: hi's fitness
// must be higher, and with pbt.ttest its episodes' mean significantly so
// (Welch's one-sided t-test at pbt.alpha) when both have 2 episodes or
// more. why says why not.
func exploits(hi, lo *Member, b *PBTConfig) (ok bool, why string) {
	fh, fl := hi.Fitness[len(hi.Fitness)-1], lo.Fitness[len(lo.Fitness)-1]
	if !(fh > fl) {
		return false, fmt.Sprintf("%d is no better", hi.Index)
	}
	if !b.TTest || len(hi.Returns) < 2 || len(lo.Returns) < 2 {
		return true, ""
	}
	if p := welchP(hi.Returns, lo.Returns); !(p < b.Alpha) {
		return false, fmt.Sprintf("%d better at p = %.2g only", hi.Index, p)
	}
	return true, ""
}

// welchP returns the one-sided p-value of Welch's t-test that x's mean
// exceeds y's: P(T >= t) for T Student-t with the Welch–Satterthwaite
// degrees of freedom. Samples without variance give 0 when x's mean is
// higher and 1 otherwise.
func welchP(x, y []float64) float64 {
	mx, vx := meanVar(x)
	my, vy := meanVar(y)
	sx, sy := vx/float64(len(x)), vy/float64(len(y))
	if sx+sy == 0 {
		if mx > my {
			return 0
		}
		return 1
	}
	tv := (mx - my) / math.Sqrt(sx+sy)
	df := (sx + sy) * (sx + sy) / (sx*sx/float64(len(x)-1) + sy*sy/float64(len(y)-1))
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(tv)
}

// stdErr returns the standard error of x's mean (0 for fewer than two
// values).
func stdErr(x []float64) float64 {
	if len(x) < 2 {
		return 0
	}
	_, v := meanVar(x)
	return math.Sqrt(v / float64(len(x)))
}

// meanVar returns the mean and the unbiased variance of x (len(x) >= 2).
func meanVar(x []float64) (m, v float64) {
	m = mean(x)
	for _, e := range x {
		v += (e - m) * (e - m)
	}
	return m, v / float64(len(x)-1)
}

// mean returns the mean of x (NaN for none).
func mean(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, e := range x {
		s += e
	}
	return s / float64(len(x))
}

// explore changes every mutable hyperparameter of a (new member index, in
// generation g) on its own scale: redrawn from its range with probability
// pbt.resample_probability, else perturbed up or down (50/50). It returns a
// description of the changes.
func (c Config) explore(a *agent.PPO, index, g int) (string, error) {
	r := newRNG(c.Seed, index, g, purposeExplore)
	b := c.PBT
	cfg := a.Config()
	resampled := map[string]bool{}
	for _, name := range c.mutableHPs() {
		rng := c.HP[name]
		var v float64
		if r.Float64() < b.ResampleProbability {
			v, resampled[name] = sampleHP(name, rng, r), true
		} else {
			v = perturbHP(name, rng, hpValue(cfg, name), r.IntN(2) == 0, b.PerturbUp, b.PerturbDown)
		}
		setHP(&cfg, name, v)
	}
	return c.applyHPs(a, index, cfg, resampled, "explore")
}

// applyHPs gives a (new member index) the hyperparameters of cfg, made to
// fit together, and returns label followed by what changed (those in
// resampled marked so).
func (c Config) applyHPs(a *agent.PPO, index int, cfg agent.Config, resampled map[string]bool, label string) (string, error) {
	old := a.Config()
	fitSizes(&cfg, c.Env.NumEnvs, c.PPO.MaxSeqLen)
	var parts []string
	for _, name := range c.mutableHPs() {
		if v, w := hpValue(old, name), hpValue(cfg, name); v != w || resampled[name] {
			p := fmt.Sprintf("%s %s -> %s", name, fmtHP(v), fmtHP(w))
			if resampled[name] {
				p += " (resampled)"
			}
			parts = append(parts, p)
		}
	}
	if err := a.SetConfig(cfg); err != nil {
		return "", fmt.Errorf("pbt explore of agent %d: %w", index, err)
	}
	if len(parts) == 0 {
		return label + ": no change", nil
	}
	return label + ": " + strings.Join(parts, ", "), nil
}

// sampleHPs returns the [ppo] config with initial agent i's mutable
// hyperparameters drawn from their ranges (population.init = "sample").
func (c Config) sampleHPs(i int) agent.Config {
	r := newRNG(c.Seed, i, 0, purposeSample)
	cfg := c.PPO
	for _, name := range c.mutableHPs() {
		setHP(&cfg, name, sampleHP(name, c.HP[name], r))
	}
	fitSizes(&cfg, c.Env.NumEnvs, c.PPO.MaxSeqLen)
	return cfg
}

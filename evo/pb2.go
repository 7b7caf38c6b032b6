// This file holds PB2's explore (pbt.explore = "pb2"): what it observes
// after each generation and how it picks a clone's hyperparameters with a
// Gaussian-process bandit instead of random perturbations.

package evo

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/evolverl/evolve/agent"
)

// The values of pbt.explore.
const (
	// ExplorePerturb is PBT's explore: each hyperparameter redrawn with
	// pbt.resample_probability, else perturbed by perturb_up or
	// perturb_down on its scale.
	ExplorePerturb = "perturb"
	// ExplorePB2 is Population-Based Bandits (Parker-Holder et al. 2020):
	// a Gaussian process with a time-varying kernel models how much an
	// agent's fitness changed over a generation given the hyperparameters
	// it trained with, and each clone gets the hyperparameters of highest
	// upper confidence bound for the next generation, the clones of one
	// generation spread apart by their pending points (GP-BUCB).
	ExplorePB2 = "pb2"
)

// pb2Obs is one of PB2's observations: over generation Gen an agent
// trained with hyperparameters HP (values of Config.mutableHPs, in its
// order) and its fitness changed by Y per evo_steps (from its own, or its
// parent's when it was cloned just before, at the generation before).
type pb2Obs struct {
	Gen int       `json:"gen"`
	HP  []float64 `json:"hp"`
	Y   float64   `json:"y"`
}

// pb2MaxObs bounds the observations kept (the newest): the time-varying
// kernel weighs old ones little, and the fit costs O(n³).
const pb2MaxObs = 256

// pb2Observe appends generation g's observations: one for each member
// that trained in it, with a fitness before g and finite fitness changes.
// A change is per evo_steps: one over a member's generation of other
// length (PBT's step clock, see memberSteps) is divided by that length in
// evo_steps, as Ray Tune's PB2 divides by the time between results, so
// that more training does not pass for better hyperparameters in the
// model. A member idle in g adds nothing; its change counts when it trains
// again (from the fitness it kept).
func (t *Trainer) pb2Observe(g int) {
	names := t.cfg.mutableHPs()
	evo := t.cfg.Population.EvoSteps
	for _, m := range t.members {
		f := m.Fitness
		if len(f) < 2 || m.idle {
			continue
		}
		y := f[len(f)-1] - f[len(f)-2]
		if m.genSteps > 0 && m.genSteps != evo {
			y /= float64(m.genSteps) / float64(evo)
		}
		if math.IsNaN(y) || math.IsInf(y, 0) {
			continue
		}
		cfg := m.Agent.Config()
		hp := make([]float64, len(names))
		for i, n := range names {
			hp[i] = hpValue(cfg, n)
		}
		t.pb2 = append(t.pb2, pb2Obs{Gen: g, HP: hp, Y: y})
	}
	if n := len(t.pb2); n > pb2MaxObs {
		t.pb2 = slices.Clone(t.pb2[n-pb2MaxObs:])
	}
}

// explorer returns how generation g's clones explore: PBT's perturbations,
// or with pbt.explore = "pb2" PB2's model, fitted for the first clone that
// needs it (PBT's perturbations while there is too little to model).
func (t *Trainer) explorer(g int) func(a *agent.PPO, index int) (string, error) {
	if t.cfg.PBT.Explore != ExplorePB2 {
		return func(a *agent.PPO, index int) (string, error) { return t.cfg.explore(a, index, g) }
	}
	var model *gp
	fitted := false
	return func(a *agent.PPO, index int) (string, error) {
		if !fitted {
			model, fitted = t.cfg.pb2Model(t.pb2), true
		}
		if model == nil {
			return t.cfg.explore(a, index, g)
		}
		return t.cfg.exploreGP(a, index, g, model)
	}
}

// pb2Model fits the Gaussian process to the observations, or returns nil
// when they cannot be modelled yet (fewer than two, or no spread: the
// first generation's clones then explore as PBT does).
func (c Config) pb2Model(obs []pb2Obs) *gp {
	names := c.mutableHPs()
	t := make([]float64, len(obs))
	u := make([][]float64, len(obs))
	y := make([]float64, len(obs))
	for i, o := range obs {
		t[i], y[i] = float64(o.Gen), o.Y
		u[i] = make([]float64, len(names))
		for j, n := range names {
			u[i][j] = toUnit(n, c.HP[n], o.HP[j])
		}
	}
	g, err := fitGP(t, u, y)
	if err != nil {
		return nil
	}
	return g
}

// pb2Beta is the weight of the posterior variance in the upper confidence
// bound at generation g over d hyperparameters: GP-UCB's
// β = 2·ln(d·g²·π²/(6δ)) with δ = 0.1 (Srinivas et al. 2010), scaled by 1/5
// as in their experiments.
func pb2Beta(d, g int) float64 {
	x := float64(max(d, 1)) * float64(g*g) * math.Pi * math.Pi / (6 * 0.1)
	return max(2*math.Log(x)/5, 0)
}

// pb2Choose returns the point u in the box [lo, hi] (within [0, 1]^d) of
// highest upper confidence bound μ + √β·σ at time tNext: the best of 1,024
// uniform draws, refined around the 8 best by 3 rounds of 16 Gaussian
// steps each (standard deviations 0.1, 0.03, 0.01 of the box's sides). It
// also returns μ and σ there.
func pb2Choose(model *gp, tNext float64, lo, hi []float64, beta float64, r *rand.Rand) (u []float64, mu, sigma float64) {
	d := len(lo)
	type cand struct {
		u         []float64
		ucb, m, s float64
	}
	score := func(u []float64) cand {
		m, v := model.predict(tNext, u)
		s := math.Sqrt(v)
		return cand{u: u, ucb: m + math.Sqrt(beta)*s, m: m, s: s}
	}
	const draws, keep = 1024, 8
	cands := make([]cand, 0, draws)
	for range draws {
		p := make([]float64, d)
		for j := range p {
			p[j] = lo[j] + r.Float64()*(hi[j]-lo[j])
		}
		cands = append(cands, score(p))
	}
	byUCB := func(a, b cand) int {
		switch {
		case a.ucb > b.ucb:
			return -1
		case a.ucb < b.ucb:
			return 1
		}
		return 0
	}
	slices.SortStableFunc(cands, byUCB)
	top := slices.Clone(cands[:keep])
	for _, sd := range []float64{0.1, 0.03, 0.01} {
		for i := range keep {
			for range 16 {
				p := slices.Clone(top[i].u)
				for j := range p {
					p[j] = min(hi[j], max(lo[j], p[j]+sd*(hi[j]-lo[j])*r.NormFloat64()))
				}
				top = append(top, score(p))
			}
		}
		slices.SortStableFunc(top, byUCB)
		top = slices.Clone(top[:keep])
	}
	return top[0].u, top[0].m, top[0].s
}

// exploreGP sets clone a's (new member index, generation g) mutable
// hyperparameters to pb2Choose's pick under model within pbt.pb2_region of
// the values it copied, then adds the pick to the model as pending, and
// returns a description of the changes.
func (c Config) exploreGP(a *agent.PPO, index, g int, model *gp) (string, error) {
	names := c.mutableHPs()
	r := newRNG(c.Seed, index, g, purposeExplore)
	tNext := float64(g + 1)
	cfg := a.Config()
	lo, hi := make([]float64, len(names)), make([]float64, len(names))
	for j, n := range names {
		u := toUnit(n, c.HP[n], hpValue(cfg, n))
		lo[j], hi[j] = max(0, u-c.PBT.PB2Region), min(1, u+c.PBT.PB2Region)
	}
	u, mu, sigma := pb2Choose(model, tNext, lo, hi, pb2Beta(len(names), g), r)
	if err := model.addPending(tNext, u); err != nil {
		return "", fmt.Errorf("pb2 explore of agent %d: %w", index, err)
	}
	for j, n := range names {
		setHP(&cfg, n, fromUnit(n, c.HP[n], u[j]))
	}
	label := fmt.Sprintf("explore (pb2, predicted change %+.2f ± %.2f sd)", mu, sigma)
	return c.applyHPs(a, index, cfg, nil, label)
}

// toUnit maps value v of name in range r to [0, 1] on the range's scale;
// for integers, to the middle of v's share of [0, 1], so that fromUnit
// returns v. It is fromUnit's inverse.
func toUnit(name string, r HPRange, v float64) float64 {
	var u float64
	switch HPScale(name, r) {
	case ScaleLog:
		lo, hi := logBounds(name, r)
		u = (math.Log(v) - lo) / (hi - lo)
	case ScaleLog1m:
		lo, hi := math.Log(1-r.Max), math.Log(1-r.Min)
		u = (math.Log(1-v) - lo) / (hi - lo)
	case ScalePow2:
		lo, hi := pow2Bounds(r)
		u = (math.Round(math.Log2(max(v, 1))) - float64(lo) + 0.5) / float64(hi-lo+1)
	default:
		u = (v - r.Min) / (r.Max - r.Min)
		if isIntHP(name) {
			u = (v - r.Min + 0.5) / (r.Max - r.Min + 1)
		}
	}
	return min(1, max(0, u))
}

// logBounds returns the logarithms of the ends of r on the log scale. An
// integer's range reaches half a unit past each end (as Optuna's log-scale
// integers do), so that rounding gives the ends their whole share: drawn
// from [min, max] itself, max would come half as often as max − 1.
func logBounds(name string, r HPRange) (lo, hi float64) {
	if isIntHP(name) && r.Min > 0.5 {
		return math.Log(r.Min - 0.5), math.Log(r.Max + 0.5)
	}
	return math.Log(r.Min), math.Log(r.Max)
}

// fromUnit maps u in [0, 1] to a value of name in r, uniformly on the
// range's scale (integers each taking an equal share of [0, 1] on the
// linear scale, of its logarithm on the log scale).
func fromUnit(name string, r HPRange, u float64) float64 {
	var v float64
	switch HPScale(name, r) {
	case ScaleLog:
		lo, hi := logBounds(name, r)
		v = math.Exp(lo + u*(hi-lo))
	case ScaleLog1m:
		lo, hi := math.Log(1-r.Max), math.Log(1-r.Min)
		v = 1 - math.Exp(lo+u*(hi-lo))
	case ScalePow2:
		lo, hi := pow2Bounds(r)
		return math.Ldexp(1, min(lo+int(u*float64(hi-lo+1)), hi))
	default:
		v = r.Min + u*(r.Max-r.Min)
		if isIntHP(name) {
			v = math.Floor(r.Min + u*(r.Max-r.Min+1))
		}
	}
	return clampHP(name, r, v)
}

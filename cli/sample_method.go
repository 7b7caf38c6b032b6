package cli

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/envs"
)

// sampleMethod is how `evolve sample` picks actions from an agent's
// policy: "greedy" (the most likely action; a Box action its mean),
// "stochastic" (drawn from the policy), "temperature" (drawn from the
// policy tempered by T: categorical probabilities ∝ p^(1/T), Bernoulli
// logits / T, Gaussian standard deviations × T) or "epsilon" (with
// probability ε an action drawn uniformly from the action space, legal
// choices only under a mask; otherwise the greedy one).
type sampleMethod struct {
	name        string
	temperature float64 // "temperature": T > 0; 1 otherwise
	epsilon     float64 // "epsilon": ε in [0, 1]
}

// sampleMethods are the methods by name.
var sampleMethods = []string{"greedy", "stochastic", "temperature", "epsilon"}

// choice is one action picked: the env's action (a Box action clipped to
// the bounds), the agent's own log π of it (a Box action's before
// clipping, as training stores it) and its log-probability under the
// distribution it was drawn from (NaN where that has none: a greedy or
// ε-uniform Box action).
type choice struct {
	action                []float32
	logProb, behaviorProb float32
}

// pick picks an action for one row of policy p over the action space s;
// mask is the row's action mask (nil: all legal). rng is drawn from only
// by the methods that draw.
func (m sampleMethod) pick(p *agent.PolicyOutput, s envs.Space, mask []bool, rng *rand.Rand) choice {
	explore := m.name == "epsilon" && rng.Float64() < m.epsilon
	switch s := s.(type) {
	case envs.Discrete:
		return m.categorical(p.Probs, []int{s.N}, s.Start, explore, rng)
	case envs.MultiDiscrete:
		return m.categorical(p.Probs, s.Nvec, 0, explore, rng)
	case envs.MultiBinary:
		return m.bits(p.BitProbs[:s.N], explore, rng)
	case envs.Box:
		return m.gaussian(p.Mean, p.Std, s, explore, rng)
	}
	panic(fmt.Sprintf("sample: action space %v", s)) // agent.Load refuses others
}

// categorical picks each component's choice k (action value k + start).
// Masked choices have probability 0 in probs and are never picked.
func (m sampleMethod) categorical(probs [][]float32, nvec []int, start int, explore bool, rng *rand.Rand) choice {
	c := choice{action: make([]float32, len(nvec))}
	var lp, blp, uniform float64 // uniform: log-probability of the ε-uniform draw
	greedyAll := true
	for i, n := range nvec {
		p := probs[i][:n]
		best, legal := 0, 0
		for k, v := range p {
			if v > p[best] {
				best = k
			}
			if v > 0 {
				legal++
			}
		}
		uniform -= math.Log(float64(legal))
		k := best
		switch {
		case explore:
			k = nthLegal(p, rng.IntN(legal))
		case m.name == "stochastic" || m.name == "temperature":
			q := tempered(p, m.temperature)
			k = drawIndex(q, rng)
			blp += math.Log(q[k])
		}
		greedyAll = greedyAll && k == best
		lp += math.Log(float64(p[k]))
		c.action[i] = float32(k + start)
	}
	if m.name == "greedy" || m.name == "epsilon" {
		// ε-greedy mixes the uniform draw with the greedy action (the
		// greedy method is ε = 0): P(a) = ε·U(a) + (1−ε)·[a = greedy].
		eps := m.epsilon
		pa := eps * math.Exp(uniform)
		if greedyAll {
			pa += 1 - eps
		}
		blp = math.Log(pa)
	}
	c.logProb, c.behaviorProb = float32(lp), float32(blp)
	return c
}

// tempered returns p^(1/t) normalised.
func tempered(p []float32, t float64) []float64 {
	q := make([]float64, len(p))
	total := 0.0
	for k, v := range p {
		if v > 0 {
			q[k] = math.Exp(math.Log(float64(v)) / t)
			total += q[k]
		}
	}
	for k := range q {
		q[k] /= total
	}
	return q
}

// drawIndex draws an index from probabilities q by inverse CDF; zero entries
// are never drawn.
func drawIndex(q []float64, rng *rand.Rand) int {
	u, cum, last := rng.Float64(), 0.0, 0
	for k, v := range q {
		if v == 0 {
			continue
		}
		last, cum = k, cum+v
		if u < cum {
			return k
		}
	}
	return last
}

// nthLegal returns the index of the n-th choice of p with a non-zero
// probability.
func nthLegal(p []float32, n int) int {
	for k, v := range p {
		if v > 0 {
			if n == 0 {
				return k
			}
			n--
		}
	}
	return len(p) - 1
}

// bits picks each bit of a MultiBinary action from P(bit = 1).
func (m sampleMethod) bits(p1 []float32, explore bool, rng *rand.Rand) choice {
	c := choice{action: make([]float32, len(p1))}
	var lp, blp float64
	greedyAll := true
	for i, p := range p1 {
		pf := float64(p)
		greedy := pf >= 0.5
		bit := greedy
		switch {
		case explore:
			bit = rng.IntN(2) == 1
		case m.name == "stochastic" || m.name == "temperature":
			// σ(logit(p)/T), written with p's powers: p^(1/T) / (p^(1/T) + (1−p)^(1/T)).
			a, b := math.Pow(pf, 1/m.temperature), math.Pow(1-pf, 1/m.temperature)
			q := a / (a + b)
			bit = rng.Float64() < q
			if bit {
				blp += math.Log(q)
			} else {
				blp += math.Log(1 - q)
			}
		}
		greedyAll = greedyAll && bit == greedy
		if bit {
			c.action[i], lp = 1, lp+math.Log(pf)
		} else {
			lp += math.Log(1 - pf)
		}
	}
	if m.name == "greedy" || m.name == "epsilon" {
		pa := m.epsilon * math.Pow(0.5, float64(len(p1)))
		if greedyAll {
			pa += 1 - m.epsilon
		}
		blp = math.Log(pa)
	}
	c.logProb, c.behaviorProb = float32(lp), float32(blp)
	return c
}

// gaussian picks a Box action: the mean, a draw from N(mean, (T·std)²), or
// with ε a draw from the space (uniform on bounded intervals), clipped to
// the bounds for the env.
func (m sampleMethod) gaussian(mean, std []float32, s envs.Box, explore bool, rng *rand.Rand) choice {
	n := len(s.Low)
	raw := make([]float32, n)
	blp := math.NaN()
	switch {
	case explore:
		s.Sample(rng, raw)
	case m.name == "stochastic" || m.name == "temperature":
		blp = 0
		for j := range n {
			sd := float64(std[j]) * m.temperature
			z := rng.NormFloat64()
			raw[j] = mean[j] + float32(z*sd)
			blp += -0.5*z*z - math.Log(sd) - 0.5*math.Log(2*math.Pi)
		}
	default:
		copy(raw, mean[:n])
	}
	lp := 0.0
	c := choice{action: make([]float32, n)}
	for j := range n {
		z := float64(raw[j]-mean[j]) / float64(std[j])
		lp += -0.5*z*z - math.Log(float64(std[j])) - 0.5*math.Log(2*math.Pi)
		c.action[j] = min(max(raw[j], s.Low[j]), s.High[j])
	}
	c.logProb, c.behaviorProb = float32(lp), float32(blp)
	return c
}

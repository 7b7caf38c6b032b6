package evo

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/evolverl/evolve/agent"
)

// The scales of an [hp.<name>] range (HPRange.Scale): where a range's
// values lie evenly, which is how PBT's explore steps through them and how
// population.init = "sample" draws them.
const (
	// ScaleLinear: uniform on [min, max]; a perturbation multiplies the
	// value (Ray Tune's rule), integers move at least 1.
	ScaleLinear = "linear"
	// ScaleLog: log-uniform (lr, ent_coef); min > 0.
	ScaleLog = "log"
	// ScaleLog1m: 1−value is log-uniform (gamma, gae_lambda: 1−gamma
	// from 1e-4 to 0.03 is the zoo's range); max < 1.
	ScaleLog1m = "log1m"
	// ScalePow2: powers of two in [min, max] (batch_size, learn_step); a
	// perturbation moves one power up or down.
	ScalePow2 = "pow2"
)

// HPScale returns the scale of hyperparameter name's range r: r.Scale when
// set, else the hyperparameter's default (log for lr, ent_coef,
// kl_threshold and rnd_coef, log1m for gamma and gae_lambda, pow2 for batch_size and
// learn_step, linear for the others).
func HPScale(name string, r HPRange) string {
	if r.Scale != "" {
		return r.Scale
	}
	switch name {
	case "lr", "ent_coef", "kl_threshold", "rnd_coef":
		return ScaleLog
	case "gamma", "gae_lambda":
		return ScaleLog1m
	case "batch_size", "learn_step":
		return ScalePow2
	}
	return ScaleLinear
}

// checkScale returns what is wrong with range r of name on its scale, or
// nil: a log range needs min > 0, a log1m range max < 1, a pow2 range an
// integer hyperparameter and a power of two within it.
func checkScale(name string, r HPRange) error {
	key := "hp." + name
	switch sc := HPScale(name, r); sc {
	case ScaleLinear:
	case ScaleLog:
		if !(r.Min > 0) {
			return fmt.Errorf("%s: min = %v on scale %q: want min > 0", key, r.Min, sc)
		}
	case ScaleLog1m:
		if !(r.Max < 1) {
			return fmt.Errorf("%s: max = %v on scale %q (1−value is log-uniform): want max < 1", key, r.Max, sc)
		}
	case ScalePow2:
		if !isIntHP(name) {
			return fmt.Errorf("%s.scale = %q: want an integer hyperparameter (batch_size, learn_step, update_epochs)", key, sc)
		}
		if lo, hi := pow2Bounds(r); lo > hi {
			return fmt.Errorf("%s: min = %v, max = %v on scale %q: the range holds no power of two", key, r.Min, r.Max, sc)
		}
	default:
		return fmt.Errorf("%s.scale = %q: want \"linear\", \"log\", \"log1m\" or \"pow2\"", key, sc)
	}
	return nil
}

// pow2Bounds returns the exponents of the smallest and largest powers of two
// in r (lo > hi when there is none).
func pow2Bounds(r HPRange) (lo, hi int) {
	return int(math.Ceil(math.Log2(max(r.Min, 1)))), int(math.Floor(math.Log2(r.Max)))
}

// sampleHP draws a value of name from r, uniformly on its scale.
func sampleHP(name string, r HPRange, rng *rand.Rand) float64 {
	return fromUnit(name, r, rng.Float64())
}

// perturbHP moves value v of name one step on r's scale, up (factor up) or
// down (factor down), and clips it to the range.
func perturbHP(name string, r HPRange, v float64, upward bool, up, down float64) float64 {
	f := down
	if upward {
		f = up
	}
	switch HPScale(name, r) {
	case ScaleLog1m:
		// A factor > 1 widens 1−v: gamma moves away from 1.
		v = 1 - (1-v)*f
	case ScalePow2:
		e := math.Round(math.Log2(max(v, 1)))
		if upward {
			e++
		} else {
			e--
		}
		v = math.Ldexp(1, int(e))
	default:
		w := v * f
		if isIntHP(name) {
			w = math.Round(w)
			if w == v { // a small integer would never move
				w = v + math.Copysign(1, f-1)
			}
		}
		v = w
	}
	return clampHP(name, r, v)
}

// clampHP clips v to r, keeping integers whole (and pow2 values powers of
// two).
func clampHP(name string, r HPRange, v float64) float64 {
	if HPScale(name, r) == ScalePow2 {
		lo, hi := pow2Bounds(r)
		e := min(max(int(math.Round(math.Log2(max(v, 1)))), lo), hi)
		return math.Ldexp(1, e)
	}
	v = min(r.Max, max(r.Min, v))
	if isIntHP(name) {
		v = math.Round(v)
	}
	return v
}

// fitSizes repairs what hyperparameters drawn one by one can break
// together: a rollout is a whole number of steps of each env (the agent
// trains learn_step/num_envs of each, so the value recorded is the one
// trained with), a minibatch larger than the rollout it is drawn from becomes
// the whole rollout, and BPTT sequences are the config's maxSeqLen or an
// env's share of the rollout where that is shorter. maxSeqLen, not the
// agent's own (perhaps already shortened) length, is the ceiling: max_seq_len
// is not explored, so a lineage whose rollout once shrank would otherwise
// keep the short sequences after its rollout grew back.
func fitSizes(c *agent.Config, numEnvs, maxSeqLen int) {
	if numEnvs >= 1 {
		c.LearnStep = max(numEnvs, c.LearnStep/numEnvs*numEnvs)
	}
	c.BatchSize = min(c.BatchSize, c.LearnStep)
	if numEnvs >= 1 && c.Net.Encoder.Recurrent() {
		c.MaxSeqLen = max(1, min(maxSeqLen, c.LearnStep/numEnvs))
	}
}

package agent

import (
	"fmt"
	"math"

	"github.com/evolverl/evolve/internal/jsonfloat"
)

// DefaultClipReward bounds scaled rewards when Config.ClipReward is 0, as
// Stable-Baselines3's VecNormalize does by default.
const DefaultClipReward = 10.0

// rewardEpsilon is added to the variance before its square root (SB3's).
const rewardEpsilon = 1e-8

// clipReward returns ClipReward with its default filled in.
func (c Config) clipReward() float64 {
	if c.ClipReward == 0 {
		return DefaultClipReward
	}
	return c.ClipReward
}

// scaleRewards does what VecNormalize's step does to one vector step's
// rewards: every env's discounted return ret[i] = ret[i]·γ + raw[i], the
// running variance updated with the batch of returns, each reward divided
// by √(var + 1e-8) and clipped into dst, and the returns of the envs whose
// episode ended (done) zeroed.
func (a *PPO) scaleRewards(ret, raw []float64, done func(i int) bool, dst []float32) {
	for i, r := range raw {
		ret[i] = ret[i]*a.cfg.Gamma + r
	}
	updateNorm(a.rewNorm, ret)
	std := math.Sqrt(a.rewNorm.Var[0] + rewardEpsilon)
	c := a.cfg.clipReward()
	for i, r := range raw {
		dst[i] = float32(math.Max(-c, math.Min(c, r/std)))
		if done(i) {
			ret[i] = 0
		}
	}
}

// scalarNormJSON describes one-value statistics (the reward scaler's, the
// value targets') for the agent file; nil for nil.
func scalarNormJSON(r *RunningNorm) *normJSON {
	if r == nil {
		return nil
	}
	return &normJSON{Count: jsonfloat.F64(r.Count), Mean: jsonfloat.Convert[jsonfloat.F64](r.Mean), Var: jsonfloat.Convert[jsonfloat.F64](r.Var)}
}

// loadScalarNorm checks one-value statistics from an agent file against
// the config key that keeps them (on) and returns them (nil when off).
// what names the statistics in errors.
func loadScalarNorm(d *normJSON, key string, on bool, what string) (*RunningNorm, error) {
	if !on {
		if d != nil {
			return nil, fmt.Errorf("statistics given, but config.%s is false", key)
		}
		return nil, nil
	}
	if d == nil {
		return nil, fmt.Errorf("missing, but config.%s is true", key)
	}
	if len(d.Mean) != 1 || len(d.Var) != 1 {
		return nil, fmt.Errorf("%d means and %d variances: want one of each (of %s)", len(d.Mean), len(d.Var), what)
	}
	c, v, m := float64(d.Count), float64(d.Var[0]), float64(d.Mean[0])
	switch {
	case !(c > 0) || math.IsInf(c, 0):
		return nil, fmt.Errorf("count = %v: want > 0", c)
	case !(v >= 0) || math.IsInf(v, 0):
		return nil, fmt.Errorf("var = %v: want >= 0", v)
	case math.IsNaN(m) || math.IsInf(m, 0):
		return nil, fmt.Errorf("mean = %v: want a finite number", m)
	}
	return &RunningNorm{Mean: []float64{m}, Var: []float64{v}, Count: c}, nil
}

package evo

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/evolverl/evolve/agent"
)

// HPRange is one [hp.<name>] table: an rl_hp mutation multiplies the value
// by Grow or Shrink (50/50) — on the log1m scale (gamma's and gae_lambda's
// default) 1 − value instead — clips it to [Min, Max] and rounds integers;
// an integer that rounding would leave where it was moves by 1 toward the
// factor, and learn_step is then cut to a multiple of env.num_envs (at
// least one).
// Scale is the range's geometry, which PBT's explore and population.init =
// "sample" use (see HPScale); "" means the hyperparameter's default scale.
type HPRange struct {
	Min    float64 `toml:"min"`
	Max    float64 `toml:"max"`
	Grow   float64 `toml:"grow"`
	Shrink float64 `toml:"shrink"`
	Scale  string  `toml:"scale,omitempty"`
}

// Defaults of rl_hp mutation steps.
const (
	DefaultGrow   = 1.2
	DefaultShrink = 0.8
)

// HPNames returns the [ppo] keys an [hp.<name>] table may name, in a fixed
// order. lr, batch_size and learn_step are mutable by default.
func HPNames() []string {
	return []string{"lr", "batch_size", "learn_step", "ent_coef", "clip_coef", "vf_coef",
		"max_grad_norm", "update_epochs", "gamma", "gae_lambda", "kl_threshold", "sde_sample_freq",
		"vtrace_rho_clip", "vtrace_c_clip", "rnd_coef"}
}

// hpField returns a pointer to the hyperparameter name of c: a float or an
// integer one.
func hpField(c *agent.Config, name string) (f *float64, i *int) {
	switch name {
	case "lr":
		return &c.LR, nil
	case "batch_size":
		return nil, &c.BatchSize
	case "learn_step":
		return nil, &c.LearnStep
	case "ent_coef":
		return &c.EntCoef, nil
	case "clip_coef":
		return &c.ClipCoef, nil
	case "vf_coef":
		return &c.VFCoef, nil
	case "max_grad_norm":
		return &c.MaxGradNorm, nil
	case "update_epochs":
		return nil, &c.UpdateEpochs
	case "gamma":
		return &c.Gamma, nil
	case "gae_lambda":
		return &c.GAELambda, nil
	case "kl_threshold":
		return &c.KLThreshold, nil
	case "sde_sample_freq":
		return nil, &c.SDESampleFreq
	case "vtrace_rho_clip":
		return &c.VTraceRhoClip, nil
	case "vtrace_c_clip":
		return &c.VTraceCClip, nil
	case "rnd_coef":
		return &c.RNDCoef, nil
	}
	return nil, nil
}

// hpValue returns hyperparameter name of c as a float64.
func hpValue(c agent.Config, name string) float64 {
	f, i := hpField(&c, name)
	if f != nil {
		return *f
	}
	return float64(*i)
}

// setHP sets hyperparameter name of c to v, rounded for integers.
func setHP(c *agent.Config, name string, v float64) {
	f, i := hpField(c, name)
	if f != nil {
		*f = v
	} else {
		*i = int(math.Round(v))
	}
}

// isIntHP reports whether hyperparameter name is an integer.
func isIntHP(name string) bool {
	_, i := hpField(&agent.Config{}, name)
	return i != nil
}

// defaultRange returns the default range of hyperparameter name around
// value: lr in [value/10, value×10], gamma and gae_lambda with 1−value in
// [(1−value)/4, (1−value)×4] (their log1m scale; at least 0), the others in
// [value/4, value×4] (integers rounded, at least 1; learn_step and
// batch_size at most maxLearnStep).
func defaultRange(name string, value float64) HPRange {
	f := 4.0
	if name == "lr" {
		f = 10
	}
	// Rounded to 12 digits, so that 3e-4/10 reads 3e-05 in config.toml.
	round := func(x float64) float64 { y, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 12, 64), 64); return y }
	r := HPRange{Min: round(value / f), Max: round(value * f), Grow: DefaultGrow, Shrink: DefaultShrink}
	if isIntHP(name) {
		r.Min, r.Max = max(1, math.Floor(r.Min)), math.Ceil(r.Max)
	}
	if name == "gamma" || name == "gae_lambda" {
		r.Max = min(r.Max, 1)
		if v := 1 - value; v > 0 { // a value of 1 has no log1m range: [value/4, 1], refused on that scale
			r.Min, r.Max = round(max(0, 1-v*f)), round(1-v/f)
		}
	}
	if name == "learn_step" || name == "batch_size" {
		r.Max = min(r.Max, maxLearnStep)
	}
	return r
}

// defaultRange is the default range of hyperparameter name around the
// config's [ppo] value, with learn_step's minimum at least env.num_envs
// (a rollout takes learn_step/num_envs steps of each env) and
// update_epochs' maximum at most agent.MaxUpdateEpochs.
func (c *Config) defaultRange(name string) HPRange {
	r := defaultRange(name, hpValue(c.PPO, name))
	if name == "learn_step" && c.Env.NumEnvs > 0 {
		r.Min = max(r.Min, float64(c.Env.NumEnvs))
	}
	if name == "update_epochs" {
		r.Max = min(r.Max, agent.MaxUpdateEpochs)
	}
	return r
}

// completeHP fills each [hp.<name>] table's missing keys from the default
// range around the [ppo] value, and adds the ranges every run mutates (lr,
// batch_size, learn_step) where the file has none.
func completeHP(md toml.MetaData, cfg *Config) error {
	hp := map[string]HPRange{}
	var errs []error
	// In name order, so that a config's errors read the same on every run.
	for _, name := range slices.Sorted(maps.Keys(cfg.HP)) {
		r := cfg.HP[name]
		if f, i := hpField(&cfg.PPO, name); f == nil && i == nil {
			errs = append(errs, fmt.Errorf("[hp.%s]: not a mutable hyperparameter; want one of %s", name, strings.Join(HPNames(), ", ")))
			continue
		}
		if name == "sde_sample_freq" && (!cfg.PPO.UseSDE || cfg.PPO.SDESampleFreq < 1) {
			errs = append(errs, fmt.Errorf("[hp.sde_sample_freq]: [ppo] has use_sde = %v, sde_sample_freq = %d: want use_sde = true and sde_sample_freq >= 1 (the range's start)",
				cfg.PPO.UseSDE, cfg.PPO.SDESampleFreq))
			continue
		}
		d := cfg.defaultRange(name)
		for _, k := range []struct {
			key string
			dst *float64
			def float64
		}{{"min", &r.Min, d.Min}, {"max", &r.Max, d.Max}, {"grow", &r.Grow, d.Grow}, {"shrink", &r.Shrink, d.Shrink}} {
			if !md.IsDefined("hp", name, k.key) {
				*k.dst = k.def
			}
		}
		if name == "sde_sample_freq" && r.Min < 1 {
			// 0 and -1 both mean "once per rollout": not a point on a range.
			errs = append(errs, fmt.Errorf("[hp.sde_sample_freq]: min = %v: want >= 1 (a redraw every min to max steps)", r.Min))
			continue
		}
		hp[name] = r
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, name := range []string{"lr", "batch_size", "learn_step"} {
		if _, ok := hp[name]; !ok {
			hp[name] = cfg.defaultRange(name)
		}
	}
	cfg.HP = hp
	return nil
}

package agent

import (
	"fmt"
	"math"
)

// The KL-adaptive learning rate's defaults, skrl's (KLAdaptiveLR, itself
// from rl_games' adaptive schedule).
const (
	DefaultKLFactor = 2.0
	DefaultLRFactor = 1.5
	DefaultMinLR    = 1e-6
	DefaultMaxLR    = 1e-2
)

// klAdaptive reports whether the learning rate adapts to the KL divergence.
func (c Config) klAdaptive() bool { return c.KLThreshold > 0 }

// klSettings returns KLFactor, LRFactor, MinLR and MaxLR with their
// defaults filled in.
func (c Config) klSettings() (klFactor, lrFactor, minLR, maxLR float64) {
	or := func(v, d float64) float64 {
		if v == 0 {
			return d
		}
		return v
	}
	return or(c.KLFactor, DefaultKLFactor), or(c.LRFactor, DefaultLRFactor), or(c.MinLR, DefaultMinLR), or(c.MaxLR, DefaultMaxLR)
}

// KLAdaptLR returns the learning rate after an epoch whose minibatches had
// mean approximate KL divergence kl, from rate lr: lr/LRFactor (at least
// MinLR) when kl > KLFactor×KLThreshold, lr×LRFactor (at most MaxLR) when
// kl < KLThreshold/KLFactor, lr otherwise. It is lr when the KL-adaptive
// rate is off.
func (c Config) KLAdaptLR(lr, kl float64) float64 {
	if !c.klAdaptive() {
		return lr
	}
	klFactor, lrFactor, minLR, maxLR := c.klSettings()
	switch {
	case kl > c.KLThreshold*klFactor:
		return max(lr/lrFactor, minLR)
	case kl < c.KLThreshold/klFactor:
		return min(lr*lrFactor, maxLR)
	}
	return lr
}

// clampLR bounds an adapted rate by MinLR and MaxLR.
func (c Config) clampLR(lr float64) float64 {
	_, _, minLR, maxLR := c.klSettings()
	return min(max(lr, minLR), maxLR)
}

// validateKLAdaptive checks the KL-adaptive rate's keys.
func (c Config) validateKLAdaptive() []error {
	var errs []error
	bad := func(key string, v any, want string) {
		errs = append(errs, fmt.Errorf("%s = %v: want %s", key, v, want))
	}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	if !(c.KLThreshold >= 0) || !finite(c.KLThreshold) {
		bad("kl_threshold", c.KLThreshold, ">= 0 (0 turns the KL-adaptive learning rate off)")
	}
	for _, f := range []struct {
		key string
		v   float64
	}{{"kl_factor", c.KLFactor}, {"lr_factor", c.LRFactor}} {
		if f.v != 0 && !(f.v > 1 && finite(f.v)) {
			bad(f.key, f.v, "> 1 (0: the default)")
		}
	}
	if !(c.MinLR >= 0) || !finite(c.MinLR) {
		bad("min_lr", c.MinLR, ">= 0 (0: the default 1e-6)")
	}
	if !(c.MaxLR >= 0) || !finite(c.MaxLR) {
		bad("max_lr", c.MaxLR, "> 0 (0: the default 1e-2)")
	}
	if _, _, lo, hi := c.klSettings(); len(errs) == 0 && !(lo < hi) {
		errs = append(errs, fmt.Errorf("min_lr = %v, max_lr = %v: want min_lr < max_lr", lo, hi))
	}
	if !c.klAdaptive() && (c.KLFactor != 0 || c.LRFactor != 0 || c.MinLR != 0 || c.MaxLR != 0) {
		errs = append(errs, fmt.Errorf("kl_factor, lr_factor, min_lr, max_lr: set only with kl_threshold > 0 (the KL-adaptive learning rate)"))
	}
	if c.klAdaptive() && c.AnnealLR {
		errs = append(errs, fmt.Errorf("kl_threshold = %v with anneal_lr = true: want one learning-rate schedule", c.KLThreshold))
	}
	return errs
}

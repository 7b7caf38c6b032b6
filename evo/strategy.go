// This file holds how a generation is made from the last (population.selection,
// fitness and init, and PBT's settings): their config, defaults and checks.

package evo

import (
	"errors"
	"fmt"
	"math"

	"github.com/BurntSushi/toml"
)

// The values of population.selection.
const (
	// SelectTournament is AgileRL's evolution: tournaments of
	// tournament.size with elitism pick the next population, and each clone
	// gets one mutation drawn with the [mutation] weights.
	SelectTournament = "tournament"
	// SelectPBT is Population Based Training's exploit and explore
	// (Jaderberg et al. 2017): see PBTConfig.
	SelectPBT = "pbt"
)

// The values of population.fitness.
const (
	// FitnessEval is the mean return of env.eval_episodes deterministic
	// episodes played after training, from the generation's evaluation seed.
	FitnessEval = "eval"
	// FitnessTrain is the mean return of the last env.eval_episodes
	// training episodes that ended in the generation (as many as ended, if
	// fewer): no env steps are spent on measuring. An agent none of whose
	// training episodes ended after the generation's first update — one
	// that finished none, or a generation of a single rollout (learn_step
	// at least the generation's steps), whose episodes were all played before its only update
	// — plays env.eval_episodes episodes from the generation's evaluation
	// seed with actions sampled as in training (agent.PPO.PlaySampled), so
	// that its fitness is of the same kind as the others'.
	FitnessTrain = "train"
)

// The values of population.init.
const (
	// InitConfig starts every agent at the [ppo] values.
	InitConfig = "config"
	// InitSample draws each agent's mutable hyperparameters (those with an
	// [hp] range) from their ranges, uniformly on each range's scale, as
	// PBT and random search start.
	InitSample = "sample"
)

// PBTConfig is the [pbt] section. After each generation the agents are
// ranked by fitness; each agent of the bottom quantile picks one of the top
// quantile at random and, unless ttest finds the difference insignificant,
// becomes a copy of it (exploit: weights, optimiser state and
// hyperparameters, under a new index) whose every mutable hyperparameter is
// then explored: redrawn from its range with probability
// resample_probability, otherwise perturbed one step up or down on its
// scale (see HPRange.Scale). The other agents go on as they are.
type PBTConfig struct {
	// Quantile is the share of the agents ranked (the population, less
	// those ahead of the step clock) in the bottom and the top quantile,
	// in (0, 0.5]: ceil(quantile·n) agents each of n ranked, at most n/2
	// (rounded down, so that no agent is in both).
	Quantile float64 `toml:"quantile"`
	// ResampleProbability is the chance, per hyperparameter, that explore
	// redraws it from its range instead of perturbing it.
	ResampleProbability float64 `toml:"resample_probability"`
	// PerturbUp and PerturbDown are the factors of a perturbation (50/50)
	// on a range's scale: for "log" and "linear" the value is multiplied,
	// for "log1m" 1−value is; "pow2" ranges move one power of two.
	PerturbUp   float64 `toml:"perturb_up"`
	PerturbDown float64 `toml:"perturb_down"`
	// TTest, when set, lets an agent exploit another only when the other's
	// fitness episodes have the higher mean and Welch's t-test rejects
	// equal means at level Alpha (one-sided), as the PBT paper does; the
	// two need 2 episodes each, else the higher fitness decides.
	TTest bool    `toml:"ttest"`
	Alpha float64 `toml:"alpha"`
	// Explore is how a clone's hyperparameters are chosen: "perturb"
	// (PBT's, the default; stored as "" so that runs of earlier builds
	// keep their digests) or "pb2" (ExplorePB2), which uses neither the
	// perturbation factors nor resample_probability, except in the first
	// generations, before it has observed two fitness changes.
	Explore string `toml:"explore,omitempty"`
	// PB2Region is how far from the copied values PB2 may move each
	// hyperparameter, as a share of its range on its scale, in (0, 1]: 1
	// searches the whole range, as the PB2 paper does; the default 0.25
	// keeps a clone near what worked, as PBT's perturbations do, which
	// matters where many hyperparameters and few observations leave the
	// model unsure (it then picks near the region's edges). Only with
	// explore = "pb2".
	PB2Region float64 `toml:"pb2_region,omitzero"`
	// BurnIn is Ray Tune's burn_in_period in env steps: an agent that has
	// trained fewer (its own and its lineage's, agent.PPO.Steps) is not
	// ranked — neither replaced nor copied by exploit, and it takes no
	// quantile slot from the others — so that a setting slow to start (a
	// long rollout, a small learning rate) is judged after it has had the
	// chance to learn. A diverged agent is ranked, last, whatever its steps.
	// 0, the default, judges every agent from the first generation.
	BurnIn int `toml:"burn_in,omitzero"`
}

// DefaultPB2Region is pbt.pb2_region's default.
const DefaultPB2Region = 0.25

// DefaultPBT returns Ray Tune's PBT defaults (quantile 0.25, resample
// probability 0.25, perturbations ×1.2 and ×0.8) with the paper's t-test at
// the 5 % level.
func DefaultPBT() PBTConfig {
	return PBTConfig{Quantile: 0.25, ResampleProbability: 0.25, PerturbUp: 1.2, PerturbDown: 0.8, TTest: true, Alpha: 0.05}
}

// resolveStrategy normalises population.selection, fitness and init (their
// defaults are stored as "", so that earlier runs keep their digests) and
// gives [pbt] its defaults when selection is "pbt". A [pbt] table under
// another selection is an error: it would be silently ignored.
func (c *Config) resolveStrategy(md toml.MetaData) error {
	p := &c.Population
	if p.Selection == SelectTournament {
		p.Selection = ""
	}
	if p.Fitness == FitnessEval {
		p.Fitness = ""
	}
	if p.Init == InitConfig {
		p.Init = ""
	}
	if p.Selection != SelectPBT {
		if p.Selection != "" {
			return nil // an unknown selection: validateStrategy names it and the two it may be
		}
		if md.IsDefined("pbt") {
			return badInput(fmt.Errorf("[pbt] given, but population.selection = %q: remove it or set selection = \"pbt\"", c.selection()))
		}
		return nil
	}
	if c.PBT == nil {
		c.PBT = &PBTConfig{}
	}
	fillAbsent(md, c.PBT, DefaultPBT(), "pbt")
	if c.PBT.Explore == ExplorePerturb {
		c.PBT.Explore = ""
	}
	if c.PBT.Explore == ExplorePB2 && !md.IsDefined("pbt", "pb2_region") {
		c.PBT.PB2Region = DefaultPB2Region
	}
	return nil
}

// selection returns population.selection with its default spelled out.
func (c Config) selection() string {
	if c.Population.Selection == "" {
		return SelectTournament
	}
	return c.Population.Selection
}

// validateStrategy checks population.selection, fitness and init, [pbt]
// and the scales of the [hp] ranges.
func (c Config) validateStrategy() []error {
	var errs []error
	p := c.Population
	switch p.Selection {
	case "", SelectPBT:
	default:
		errs = append(errs, fmt.Errorf("population.selection = %q: want \"tournament\" (the default) or \"pbt\"", p.Selection))
	}
	switch p.Fitness {
	case "", FitnessTrain:
	default:
		errs = append(errs, fmt.Errorf("population.fitness = %q: want \"eval\" (the default) or \"train\"", p.Fitness))
	}
	switch p.Init {
	case "", InitSample:
	default:
		errs = append(errs, fmt.Errorf("population.init = %q: want \"config\" (the default) or \"sample\"", p.Init))
	}
	if p.Selection == SelectPBT && c.PBT == nil {
		errs = append(errs, errors.New("population.selection = \"pbt\" without a [pbt] section"))
	}
	if p.Selection == "" && c.PBT != nil {
		errs = append(errs, fmt.Errorf("[pbt] given, but population.selection = %q: remove it or set selection = \"pbt\"", c.selection()))
	}
	// Under a misspelt selection [pbt] was not given its defaults: the
	// selection's error is the one to report, not every key left out.
	if b := c.PBT; b != nil && p.Selection == SelectPBT {
		finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
		if !(b.Quantile > 0 && b.Quantile <= 0.5) {
			errs = append(errs, fmt.Errorf("pbt.quantile = %v: want a share in (0, 0.5]", b.Quantile))
		}
		if !(b.ResampleProbability >= 0 && b.ResampleProbability <= 1) {
			errs = append(errs, fmt.Errorf("pbt.resample_probability = %v: want a probability in [0, 1]", b.ResampleProbability))
		}
		// A perturbation takes either factor with probability ½, so a pair
		// given in the other order (up < 1 < down) explores the same way.
		if !(b.PerturbUp > 0) || !finite(b.PerturbUp) {
			errs = append(errs, fmt.Errorf("pbt.perturb_up = %v: want a factor > 0 (Ray Tune's is 1.2)", b.PerturbUp))
		}
		if !(b.PerturbDown > 0) || !finite(b.PerturbDown) {
			errs = append(errs, fmt.Errorf("pbt.perturb_down = %v: want a factor > 0 (Ray Tune's is 0.8)", b.PerturbDown))
		}
		switch b.Explore {
		case "":
			if b.PB2Region != 0 {
				errs = append(errs, fmt.Errorf("pbt.pb2_region = %v with pbt.explore = \"perturb\": set explore = \"pb2\" or remove it", b.PB2Region))
			}
		case ExplorePB2:
			if !(b.PB2Region > 0 && b.PB2Region <= 1) {
				errs = append(errs, fmt.Errorf("pbt.pb2_region = %v: want a share of each range in (0, 1]", b.PB2Region))
			}
		default:
			errs = append(errs, fmt.Errorf("pbt.explore = %q: want \"perturb\" (the default) or \"pb2\"", b.Explore))
		}
		if b.BurnIn < 0 {
			errs = append(errs, fmt.Errorf("pbt.burn_in = %d: want env steps >= 0 (0: no burn-in)", b.BurnIn))
		}
		if !(b.Alpha > 0 && b.Alpha < 1) {
			errs = append(errs, fmt.Errorf("pbt.alpha = %v: want a significance level in (0, 1)", b.Alpha))
		}
	}
	// The default scales matter only where something steps or draws on
	// them: a tournament's rl_hp mutation multiplies by grow and shrink.
	scaled := p.Selection == SelectPBT || p.Init == InitSample
	for _, name := range HPNames() {
		if r, ok := c.HP[name]; ok && r.Min < r.Max && (scaled || r.Scale != "") {
			if err := checkScale(name, r); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errs
}

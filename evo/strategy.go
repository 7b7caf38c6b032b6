package evo

import (
	"errors"
	"fmt"
	"math"

	"github.com/BurntSushi/toml"
)

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
		if md.IsDefined("pbt") {
			return badInput(fmt.Errorf("[pbt] given, but population.selection = %q: remove it or set selection = \"pbt\"", c.selection()))
		}
		return nil
	}
	if c.PBT == nil {
		c.PBT = &PBTConfig{}
	}
	fillAbsent(md, c.PBT, DefaultPBT(), "pbt")
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
	if p.Selection != SelectPBT && c.PBT != nil {
		errs = append(errs, fmt.Errorf("[pbt] given, but population.selection = %q: remove it or set selection = \"pbt\"", c.selection()))
	}
	if b := c.PBT; b != nil {
		finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
		if !(b.Quantile > 0 && b.Quantile <= 0.5) {
			errs = append(errs, fmt.Errorf("pbt.quantile = %v: want a share in (0, 0.5]", b.Quantile))
		}
		if !(b.ResampleProbability >= 0 && b.ResampleProbability <= 1) {
			errs = append(errs, fmt.Errorf("pbt.resample_probability = %v: want a probability in [0, 1]", b.ResampleProbability))
		}
		if !(b.PerturbUp > 0) || !finite(b.PerturbUp) {
			errs = append(errs, fmt.Errorf("pbt.perturb_up = %v: want a factor > 0 (Ray Tune's is 1.2)", b.PerturbUp))
		}
		if !(b.PerturbDown > 0) || !finite(b.PerturbDown) {
			errs = append(errs, fmt.Errorf("pbt.perturb_down = %v: want a factor > 0 (Ray Tune's is 0.8)", b.PerturbDown))
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

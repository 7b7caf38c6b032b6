package cli

import (
	"math"

	"github.com/evolverl/evolve/evo"
	"gonum.org/v1/plot"
)

// hpLabels gives the hyperparameters' axis labels with their units.
var hpLabels = map[string]string{
	"lr":         "lr (Adam step size, log scale)",
	"batch_size": "batch_size (transitions)",
	"learn_step": "learn_step (transitions per update)",
}

// hyperparameterPlots returns one chart per hyperparameter that changed
// during the run (hpPlot).
func hyperparameterPlots(m *evo.Metrics) []*plot.Plot {
	l := newLineages(m)
	var plots []*plot.Plot
	for i := range m.HPNames {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, r := range m.Rows {
			lo, hi = min(lo, r.HP[i]), max(hi, r.HP[i])
		}
		if lo < hi {
			plots = append(plots, hpPlot(m, l, i))
		}
	}
	return plots
}

// hpPlot charts hyperparameter m.HPNames[i] of every agent over
// generations, one line per agent starting at its parent's value; lr is on
// a log scale.
func hpPlot(m *evo.Metrics, l *lineages, i int) *plot.Plot {
	name := m.HPNames[i]
	lo := math.Inf(1)
	for _, r := range m.Rows {
		lo = min(lo, r.HP[i])
	}
	p := newPlot()
	p.Title.Text = name + " of every agent (lines follow parent → child)"
	p.X.Label.Text = "generation"
	p.X.Tick.Marker = integerTicks{}
	p.Y.Label.Text = name
	if s, ok := hpLabels[name]; ok {
		p.Y.Label.Text = s
	}
	value := func(r evo.MetricsRow) float64 { return r.HP[i] }
	logScale := lo > 0 && (name == "lr" || name == "ent_coef" || name == "batch_size" || name == "learn_step")
	if (name == "gamma" || name == "gae_lambda") && hiOf(m, i) < 1 {
		// What matters is the horizon 1/(1 − gamma): plot 1 − value on a
		// log scale, as PBT and the zoo step it.
		value = func(r evo.MetricsRow) float64 { return 1 - r.HP[i] }
		p.Y.Label.Text = "1 − " + name + " (log scale)"
		logScale = true
	} else if logScale && name != "lr" {
		p.Y.Label.Text += " (log scale)"
	}
	l.plot(p, value)
	if logScale {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
		if p.Y.Max/p.Y.Min < 1.5 { // a constant or nearly constant lr: show its neighbourhood
			p.Y.Min, p.Y.Max = p.Y.Min/1.5, p.Y.Max*1.5
		}
	} else {
		p.Y.Tick.Marker = plainTicks{}
		padY(p)
	}
	return p
}

// hiOf returns the largest value of hyperparameter column i.
func hiOf(m *evo.Metrics, i int) float64 {
	hi := math.Inf(-1)
	for _, r := range m.Rows {
		hi = max(hi, r.HP[i])
	}
	return hi
}

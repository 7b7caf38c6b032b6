package cli

import (
	"math"
	"strings"

	"github.com/evolverl/evolve/evo"
	"gonum.org/v1/plot"
)

// trainingPanel is one of training.png's panels: a statistic of the last
// PPO update of each generation.
type trainingPanel struct {
	title, unit string
	value       func(evo.MetricsRow) float64
	// logScale draws the panel on a log scale when every value is > 0.
	logScale bool
	// lo, when not NaN, is the lowest value drawn: lower ones sit on the
	// panel's floor (explained variance, unbounded below, would flatten
	// the rest).
	lo float64
}

// trainingPanels are the statistics training.png shows, as CleanRL logs
// them: the loss, the policy's entropy, the approximate KL divergence of
// the update and the value function's explained variance.
var trainingPanels = []trainingPanel{
	{"loss", "", func(r evo.MetricsRow) float64 { return r.Loss }, false, math.NaN()},
	{"entropy", "nats", func(r evo.MetricsRow) float64 { return r.Entropy }, false, math.NaN()},
	{"approx_kl", "", func(r evo.MetricsRow) float64 { return r.ApproxKL }, true, math.NaN()},
	{"explained_variance", "", func(r evo.MetricsRow) float64 { return r.ExplainedVariance }, false, -1},
}

// trainingPlots charts each of trainingPanels per slot against the
// population's env steps, or returns nil when metrics.csv has none of
// their columns (a file of another tool).
func trainingPlots(m *evo.Metrics, t *slotTable) []*plot.Plot {
	var plots []*plot.Plot
	for _, tp := range trainingPanels {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, r := range m.Rows {
			if v := tp.value(r); !math.IsNaN(v) && !math.IsInf(v, 0) {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
		if lo > hi {
			continue
		}
		p := newPlot()
		p.Title.Text = tp.title
		var notes []string
		if tp.unit != "" {
			notes = append(notes, tp.unit)
		}
		stepsAxis(p)
		value := tp.value
		if !math.IsNaN(tp.lo) && lo < tp.lo {
			value = func(r evo.MetricsRow) float64 { return max(tp.value(r), tp.lo) }
			floor := strings.Replace(fmtFloat(tp.lo), "-", "−", 1)
			notes = append(notes, "below "+floor+" drawn at "+floor)
		}
		t.plot(p, value)
		if tp.logScale && lo > 0 {
			logY(p)
			notes = append(notes, "log scale")
		} else {
			p.Y.Tick.Marker = plainTicks{}
			padY(p)
		}
		if len(notes) > 0 {
			p.Title.Text += " (" + strings.Join(notes, ", ") + ")"
		}
		plots = append(plots, p)
	}
	return plots
}

package cli

import (
	"fmt"
	"math"
	"strings"

	"github.com/evolverl/evolve/evo"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
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
// population's env steps: every PPO update from the run's TensorBoard
// scalars (updates: "slot_<i>/<stat>" series) where it wrote them, else
// each generation's last update from metrics.csv; nil when neither has
// them (a file of another tool).
func trainingPlots(m *evo.Metrics, t *slotTable, updates map[string][]evo.Point) []*plot.Plot {
	var plots []*plot.Plot
	for _, tp := range trainingPanels {
		perUpdate := slotSeries(updates, tp.title, t.slots)
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, r := range m.Rows {
			if v := tp.value(r); perUpdate == nil && !math.IsNaN(v) && !math.IsInf(v, 0) {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
		for _, s := range perUpdate {
			for _, pt := range s {
				if !math.IsNaN(pt.Value) && !math.IsInf(pt.Value, 0) {
					lo, hi = min(lo, pt.Value), max(hi, pt.Value)
				}
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
		if perUpdate != nil {
			floor := math.Inf(-1)
			if !math.IsNaN(tp.lo) {
				floor = tp.lo
			}
			plotUpdates(p, perUpdate, floor)
		} else {
			t.plot(p, value)
		}
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

// slotSeries returns the per-update series of stat for slots 0…n−1 from
// the run's scalars, or nil when the run wrote none for any slot.
func slotSeries(updates map[string][]evo.Point, stat string, n int) [][]evo.Point {
	out := make([][]evo.Point, n)
	found := false
	for s := range n {
		out[s] = updates[fmt.Sprintf("slot_%d/%s", s, stat)]
		found = found || len(out[s]) > 0
	}
	if !found {
		return nil
	}
	return out
}

// plotUpdates draws each slot's series as a thin line in the slot's
// colour, values below floor at floor.
func plotUpdates(p *plot.Plot, series [][]evo.Point, floor float64) {
	for s, pts := range series {
		xys := make(plotter.XYs, 0, len(pts))
		for _, pt := range pts {
			if !math.IsNaN(pt.Value) && !math.IsInf(pt.Value, 0) {
				xys = append(xys, plotter.XY{X: float64(pt.Step), Y: max(pt.Value, floor)})
			}
		}
		if len(xys) == 0 {
			continue
		}
		c, dashes, _ := slotStyle(s)
		line, err := plotter.NewLine(xys)
		if err != nil {
			continue
		}
		line.Color, line.Width, line.Dashes = c, vg.Points(1), dashes
		p.Add(line)
	}
}

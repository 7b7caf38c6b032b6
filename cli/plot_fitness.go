package cli

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"github.com/evolverl/evolve/evo"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// fitnessPlot charts the best, mean and elite (best so far) fitness per
// generation against the population's env steps, every agent as a dot,
// and the target when the run has one.
func fitnessPlot(m *evo.Metrics, rc runConfig) *plot.Plot {
	f := fitnessSeriesOf(m)
	p := newPlot()
	p.Title.Text = "Fitness per generation"
	if rc.env != "" {
		p.Title.Text = rc.env + ": fitness per generation"
	}
	p.X.Label.Text = "training env steps (whole population)"
	p.Y.Label.Text = "fitness (mean evaluation return)"
	if rc.trainFitness {
		p.Y.Label.Text = "fitness (mean return of training episodes, sampled actions)"
	}
	p.Y.Tick.Marker = plainTicks{}
	p.X.Tick.Marker = siTicks{}
	p.X.Min = 0

	if len(f.agents) > 0 {
		s := newScatter(f.agents)
		s.GlyphStyle = draw.GlyphStyle{Color: color.Gray{Y: 150}, Radius: vg.Points(2.2), Shape: draw.CircleGlyph{}}
		p.Add(s)
		p.Legend.Add("each agent", s)
	}
	eliteName := "elite (best so far)"
	if rc.confirmed && len(m.Rows) > 0 && !math.IsNaN(m.Rows[0].EliteFitness) {
		// Confirmation plays greedy actions on the run's confirmation
		// episodes: on a training-return fitness it sits above the rest.
		eliteName = "elite (confirmed, greedy actions)"
	}
	for _, l := range fitnessLines(f, eliteName) {
		if len(l.dots) == 0 {
			continue
		}
		line, dots := lineDots(l.dots, l.c, l.width, l.dash)
		line.XYs = finite(l.path)
		p.Add(line, dots)
		p.Legend.Add(l.name, line, dots)
	}
	if len(f.newElite) > 0 {
		s := newScatter(f.newElite)
		s.GlyphStyle = draw.GlyphStyle{Color: color.RGBA{G: 110, A: 255}, Radius: vg.Points(4.5), Shape: draw.PyramidGlyph{}}
		p.Add(s)
		p.Legend.Add("new elite saved", s)
	}
	addTarget(p, rc.target)
	if f.diverged > 0 {
		agents := "agents"
		if f.diverged == 1 {
			agents = "agent"
		}
		// A line of its own: a long env id fills the first.
		p.Title.Text += fmt.Sprintf("\n(%d diverged %s not shown)", f.diverged, agents)
	}
	padY(p)
	return p
}

// fitnessLine is one of fitness.png's lines: its legend entry, its points
// (a dot each) and the path drawn through them.
type fitnessLine struct {
	name       string
	dots, path plotter.XYs
	c          color.Color
	width      vg.Length
	dash       []vg.Length
}

// fitnessLines returns fitness.png's lines: the elite as steps, as
// comparison.png draws it, since its score holds until a generation
// replaces or confirms it (a slope between two generations would show
// scores no elite had), and the best and mean of each generation from
// point to point.
func fitnessLines(f fitnessSeries, eliteName string) []fitnessLine {
	return []fitnessLine{
		{eliteName, f.elite, stairs(f.elite), color.RGBA{R: 152, G: 223, B: 138, A: 255}, vg.Points(5), nil},
		{"best of generation", f.best, f.best, color.RGBA{R: 214, G: 39, B: 40, A: 255}, vg.Points(1.5), nil},
		{"mean of generation", f.mean, f.mean, color.RGBA{R: 31, G: 119, B: 180, A: 255}, vg.Points(1.5), []vg.Length{vg.Points(5), vg.Points(3)}},
	}
}

// addTarget draws the run's target as a dashed line, when it has one.
func addTarget(p *plot.Plot, target float64) {
	if math.IsNaN(target) || math.IsInf(target, 0) {
		return
	}
	t := plotter.NewFunction(func(float64) float64 { return target })
	t.Color, t.Dashes, t.Width = color.Gray{Y: 60}, []vg.Length{vg.Points(2), vg.Points(2)}, vg.Points(1)
	p.Add(t)
	p.Legend.Add(fmt.Sprintf("target %s", strconv.FormatFloat(target, 'g', -1, 64)), t)
	p.Y.Max = max(p.Y.Max, target)
	p.Y.Min = min(p.Y.Min, target)
}

// fitnessSeries are the points of the fitness chart, against the
// population's env steps.
type fitnessSeries struct {
	best, mean, elite, agents plotter.XYs
	// newElite are the generations where the elite changed: where it was
	// first saved and each time a better one replaced it.
	newElite plotter.XYs
	diverged int // agents with a non-finite fitness, not drawn
}

// fitnessSeriesOf computes the chart's points from metrics.csv: per
// generation the best and mean finite fitness, every agent, and the elite
// (the run's own column where metrics.csv has it, else the best so far).
func fitnessSeriesOf(m *evo.Metrics) fitnessSeries {
	var f fitnessSeries
	byGen := map[int][]evo.MetricsRow{}
	var gens []int
	for _, r := range m.Rows {
		if _, ok := byGen[r.Generation]; !ok {
			gens = append(gens, r.Generation)
		}
		byGen[r.Generation] = append(byGen[r.Generation], r)
	}
	slices.Sort(gens)
	eliteSoFar := math.Inf(-1)
	for _, g := range gens {
		rows := byGen[g]
		x := rows[0].TotalSteps
		b, sum, n := math.Inf(-1), 0.0, 0
		for _, r := range rows {
			if math.IsInf(r.Fitness, 0) || math.IsNaN(r.Fitness) {
				f.diverged++
				continue
			}
			b = max(b, r.Fitness)
			sum += r.Fitness
			n++
			f.agents = append(f.agents, plotter.XY{X: x, Y: r.Fitness})
		}
		if n == 0 {
			continue
		}
		prev := eliteSoFar
		eliteSoFar = max(eliteSoFar, b)
		if e := rows[0].EliteFitness; !math.IsNaN(e) {
			// The run's own elite: with elite_episodes its confirmed
			// score, which the best fitness so far overstates.
			eliteSoFar = e
		}
		f.best = append(f.best, plotter.XY{X: x, Y: b})
		f.mean = append(f.mean, plotter.XY{X: x, Y: sum / float64(n)})
		if !math.IsInf(eliteSoFar, 0) {
			f.elite = append(f.elite, plotter.XY{X: x, Y: eliteSoFar})
			if eliteSoFar != prev {
				f.newElite = append(f.newElite, plotter.XY{X: x, Y: eliteSoFar})
			}
		}
	}
	return f
}

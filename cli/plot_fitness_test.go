package cli

import (
	"math"
	"slices"
	"testing"

	"github.com/evolverl/evolve/evo"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// TestFitnessEliteIsSteps: fitness.png draws the elite as steps, its score
// holding until the generation that replaces it (as comparison.png draws
// it), not as a slope through scores no agent had; the best and mean of
// each generation go straight from point to point.
func TestFitnessEliteIsSteps(t *testing.T) {
	m := &evo.Metrics{}
	for _, r := range []struct {
		gen          int
		steps, fit   float64
		eliteFitness float64
	}{
		{1, 401e3, -54.3, -54.3}, {1, 401e3, -80, -54.3},
		{2, 614e3, 150.7, 150.7}, {2, 614e3, 20, 150.7},
		{3, 820e3, 100, 150.7}, {3, 820e3, 90, 150.7},
	} {
		m.Rows = append(m.Rows, evo.MetricsRow{Generation: r.gen, TotalSteps: r.steps, Fitness: r.fit, EliteFitness: r.eliteFitness})
	}
	lines := fitnessLines(fitnessSeriesOf(m), "elite (confirmed)")
	elite := plotter.XYs{{X: 401e3, Y: -54.3}, {X: 614e3, Y: 150.7}, {X: 820e3, Y: 150.7}}
	steps := plotter.XYs{{X: 401e3, Y: -54.3}, {X: 614e3, Y: -54.3}, {X: 614e3, Y: 150.7}, {X: 820e3, Y: 150.7}, {X: 820e3, Y: 150.7}}
	if l := lines[0]; l.name != "elite (confirmed)" || !slices.Equal(l.dots, elite) || !slices.Equal(l.path, steps) {
		t.Errorf("elite %q: dots %v, path %v;\nwant dots %v, path %v", l.name, l.dots, l.path, elite, steps)
	}
	best := plotter.XYs{{X: 401e3, Y: -54.3}, {X: 614e3, Y: 150.7}, {X: 820e3, Y: 100}}
	if l := lines[1]; !slices.Equal(l.dots, best) || !slices.Equal(l.path, best) {
		t.Errorf("best of generation: dots %v, path %v; want both %v", l.dots, l.path, best)
	}
}

// TestFitnessChartSkipsNaN: a NaN in metrics.csv (a fitness no agent could
// have, but a file may hold) leaves its point out of the chart instead of
// failing it.
func TestFitnessChartSkipsNaN(t *testing.T) {
	m := &evo.Metrics{Rows: []evo.MetricsRow{
		{Generation: 1, TotalSteps: 1000, Fitness: 10, EliteFitness: 10},
		{Generation: 1, TotalSteps: 1000, Fitness: math.NaN(), EliteFitness: 10},
		{Generation: 2, TotalSteps: 2000, Fitness: 20, EliteFitness: math.NaN()},
	}}
	if f := fitnessSeriesOf(m); f.diverged != 1 || len(f.agents) != 2 {
		t.Errorf("%d agents drawn, %d not shown; want 2 and the NaN one", len(f.agents), f.diverged)
	}
	p := fitnessPlot(m, runConfig{env: "CartPole-v1", target: math.NaN()})
	c := vgimg.New(400, 300)
	p.Draw(draw.New(c))
}

package cli

import (
	"slices"
	"testing"

	"github.com/evolverl/evolve/evo"
	"gonum.org/v1/plot/plotter"
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

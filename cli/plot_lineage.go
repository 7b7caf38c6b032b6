package cli

import (
	"fmt"
	"image/color"
	"slices"

	"github.com/evolverl/evolve/evo"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// lineages assigns every agent its founder (the generation-1 ancestor it
// descends from) and a colour per founder, and returns, per agent, the
// row of its parent's last generation before it appears (to draw the
// branch), so that the hyperparameter and network charts show who
// inherited what.
type lineages struct {
	founder map[int]int
	color   map[int]color.Color      // by founder
	order   []int                    // founders in order of appearance
	rows    map[int][]evo.MetricsRow // by agent, in generation order
	branch  map[int]evo.MetricsRow   // the parent's row the agent starts from
	agents  []int                    // in order of appearance
}

func newLineages(m *evo.Metrics) *lineages {
	l := &lineages{founder: map[int]int{}, color: map[int]color.Color{}, rows: map[int][]evo.MetricsRow{}, branch: map[int]evo.MetricsRow{}}
	for _, r := range m.Rows {
		if _, seen := l.rows[r.Agent]; !seen {
			l.agents = append(l.agents, r.Agent)
			f, ok := l.founder[r.Parent]
			if r.Parent < 0 || !ok {
				f = r.Agent
			}
			l.founder[r.Agent] = f
			if _, ok := l.color[f]; !ok {
				l.color[f] = plotutil.Color(len(l.order))
				l.order = append(l.order, f)
			}
			// The parent's row in the generation before this agent's first.
			for _, pr := range slices.Backward(l.rows[r.Parent]) {
				if pr.Generation < r.Generation {
					l.branch[r.Agent] = pr
					break
				}
			}
		}
		l.rows[r.Agent] = append(l.rows[r.Agent], r)
	}
	return l
}

// plot adds one line per agent of value(row) over generations to p,
// starting at its parent's value, coloured by founder, with a legend
// entry per founder. Lineages that share values would hide each other, so
// each founder's lines are shifted by a few points on the page (up and to
// the right, by founder, centred on the true position: lineageShift) and
// its dots have a shape of their own.
func (l *lineages) plot(p *plot.Plot, value func(evo.MetricsRow) float64) {
	rank := map[int]int{}
	for i, f := range l.order {
		rank[f] = i
	}
	style := func(f int) (color.Color, draw.GlyphDrawer, vg.Length) {
		k := rank[f]
		return l.color[f], plotutil.Shape(k), lineageShift(k, len(l.order))
	}
	for _, a := range l.agents {
		var xys plotter.XYs
		if pr, ok := l.branch[a]; ok {
			xys = append(xys, plotter.XY{X: float64(pr.Generation), Y: value(pr)})
		}
		for _, r := range l.rows[a] {
			xys = append(xys, plotter.XY{X: float64(r.Generation), Y: value(r)})
		}
		c, shape, shift := style(l.founder[a])
		line, dots := lineDots(xys, c, vg.Points(1.5), nil)
		dots.GlyphStyle.Shape = shape
		p.Add(shifted{line, shift}, shifted{dots, shift})
	}
	for _, f := range l.order {
		c, shape, _ := style(f)
		line, dots := lineDots(plotter.XYs{{}}, c, vg.Points(1.5), nil)
		dots.GlyphStyle.Shape = shape
		p.Legend.Add(fmt.Sprintf("agent %d's lineage", f), line, dots)
	}
}

// lineageShift is how far founder k of n has its lines shifted on the
// page, both right and up: 1.5 points per founder (less when there are
// many, at most 9 points from the first to the last), centred on 0.
func lineageShift(k, n int) vg.Length {
	if n < 2 {
		return 0
	}
	step := min(vg.Points(1.5), vg.Points(9)/vg.Length(n-1))
	return step * (vg.Length(k) - vg.Length(n-1)/2)
}

// shifted draws a plotter shifted by d points right and up on the page,
// leaving the data (and so the axes' ranges) as they are.
type shifted struct {
	plot.Plotter
	d vg.Length
}

// Plot implements plot.Plotter.
func (s shifted) Plot(c draw.Canvas, p *plot.Plot) {
	c.Push()
	defer c.Pop()
	c.Translate(vg.Point{X: s.d, Y: s.d})
	s.Plotter.Plot(c, p)
}

// DataRange implements plot.DataRanger for the axes' ranges.
func (s shifted) DataRange() (xmin, xmax, ymin, ymax float64) {
	return s.Plotter.(plot.DataRanger).DataRange()
}

// GlyphBoxes implements plot.GlyphBoxer, so that the plot leaves room for
// the dots.
func (s shifted) GlyphBoxes(p *plot.Plot) []plot.GlyphBox {
	if g, ok := s.Plotter.(plot.GlyphBoxer); ok {
		return g.GlyphBoxes(p)
	}
	return nil
}

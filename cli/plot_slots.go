package cli

import (
	"fmt"
	"image/color"
	"math"

	"github.com/evolverl/evolve/evo"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// slotTable is a run's metrics.csv by generation and population slot: the
// rows of a generation come in population order, so the i-th is slot i's
// agent. Colouring by slot stays meaningful for the whole run, where
// colouring by founder would not: after a few tournaments every agent
// descends from the same one.
type slotTable struct {
	steps []float64          // the population's env steps after each generation
	rows  [][]evo.MetricsRow // rows[g][slot], g counting the generations in the file from 0
	slots int                // the largest generation's size
	// clones are the clone events, keyed by [g, slot] (cloneEvent).
	clones map[[2]int]cloneEvent
}

// cloneEvent is a slot's agent replaced, after generation g−1, by a copy
// of another agent: tournament selection or PBT's exploit put a clone of
// another slot's agent there, or the elite moved there from its slot.
type cloneEvent struct {
	g, slot int
	// from is the slot, in generation g−1, of the agent copied; −1 when
	// that agent was not in generation g−1.
	from int
	// agent is the index of the agent copied.
	agent int
}

// newSlotTable groups m's rows by generation, in file order, and finds
// the clone events (cloneSource).
func newSlotTable(m *evo.Metrics) *slotTable {
	t := &slotTable{clones: map[[2]int]cloneEvent{}}
	for i, r := range m.Rows {
		if i == 0 || r.Generation != m.Rows[i-1].Generation {
			t.rows = append(t.rows, nil)
			t.steps = append(t.steps, r.TotalSteps)
		}
		g := len(t.rows) - 1
		t.rows[g] = append(t.rows[g], r)
		t.slots = max(t.slots, len(t.rows[g]))
	}
	for g := 1; g < len(t.rows); g++ {
		for s, r := range t.rows[g] {
			if from, agent, ok := cloneSource(t.rows[g-1], s, r); ok {
				t.clones[[2]int{g, s}] = cloneEvent{g: g, slot: s, from: from, agent: agent}
			}
		}
	}
	return t
}

// cloneSource reports whether row r, in slot s of a generation whose
// previous generation is prev, holds a copy of another agent than the one
// slot s held in prev, and which: the slot (−1 if absent from prev) and
// index of the agent copied. The slot's agent went on when r is that agent
// or a clone of it (tournament selection may pick a slot's own agent); an
// agent already in prev that moved to slot s (the elite, which keeps its
// index) is a copy of itself; any other agent is a copy of its parent.
func cloneSource(prev []evo.MetricsRow, s int, r evo.MetricsRow) (from, agent int, ok bool) {
	if s >= len(prev) || r.Agent == prev[s].Agent {
		return 0, 0, false
	}
	for j, p := range prev {
		if p.Agent == r.Agent {
			return j, r.Agent, true
		}
	}
	if r.Parent == prev[s].Agent {
		return 0, 0, false
	}
	for j, p := range prev {
		if p.Agent == r.Parent {
			return j, r.Parent, true
		}
	}
	return -1, r.Parent, true
}

// slotPalette is matplotlib's tab10, whose colours stay apart for the 4 to
// 8 slots of the configs; slots beyond 10 reuse them with dashes.
var slotPalette = []color.RGBA{
	{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255},
	{148, 103, 189, 255}, {140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255},
	{188, 189, 34, 255}, {23, 190, 207, 255},
}

// slotShapes are the slots' dot shapes, so that slots stay apart in grey
// print and for readers who confuse colours; the clone marker is a larger
// black ring (cloneGlyph).
var slotShapes = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.BoxGlyph{},
	draw.PyramidGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}, draw.RingGlyph{},
}

// cloneGlyph marks a clone event.
var cloneGlyph = draw.GlyphStyle{Color: color.Black, Radius: vg.Points(5), Shape: draw.RingGlyph{}}

// slotStyle is the colour, dashes and dot shape of slot k.
func slotStyle(k int) (color.Color, []vg.Length, draw.GlyphDrawer) {
	var dashes []vg.Length
	if k >= len(slotPalette) {
		dashes = []vg.Length{vg.Points(4), vg.Points(2)}
	}
	return slotPalette[k%len(slotPalette)], dashes, slotShapes[k%len(slotShapes)]
}

// slotName is slot k's legend entry. With tournament selection and
// elitism, selection puts the last generation's best agent in slot 0, so
// slot 0 is named the elite's once there has been a selection (selected);
// before, in the first generation, it is a slot like the others.
func slotName(k int, rc runConfig, selected bool) string {
	switch {
	case k == 0 && selected && rc.eliteSlot && rc.eliteMutated:
		return "slot 0 (the elite, mutated)"
	case k == 0 && selected && rc.eliteSlot:
		return "slot 0 (elite kept)"
	}
	return fmt.Sprintf("slot %d", k)
}

// selected reports whether the table holds a generation made by
// selection: one after the run's first.
func (t *slotTable) selected() bool {
	return len(t.rows) > 1 || len(t.rows) == 1 && t.rows[0][0].Generation > 1
}

// plot adds one line per slot of value(row) against the population's env
// steps to p. A clone event ends the slot's line: the next one starts
// with a dashed segment from the copied agent's value in the generation
// before, and a ring marks the clone. Non-finite values are left out.
// Slots that share values would hide each other, so each slot is shifted
// by a few points on the page (up and to the right, centred on the true
// position: slotShift).
func (t *slotTable) plot(p *plot.Plot, value func(evo.MetricsRow) float64) {
	at := func(g, s int) (plotter.XY, bool) {
		if s < 0 || s >= len(t.rows[g]) {
			return plotter.XY{}, false
		}
		y := value(t.rows[g][s])
		return plotter.XY{X: t.steps[g], Y: y}, !math.IsNaN(y) && !math.IsInf(y, 0)
	}
	for s := range t.slots {
		c, dashes, shape := slotStyle(s)
		shift := slotShift(s, t.slots)
		add := func(xys plotter.XYs) {
			if len(xys) == 0 {
				return
			}
			line, dots := lineDots(xys, c, vg.Points(1.5), dashes)
			dots.GlyphStyle.Shape, dots.GlyphStyle.Radius = shape, vg.Points(2.5)
			p.Add(shifted{line, shift}, shifted{dots, shift})
		}
		var seg, rings plotter.XYs
		for g := range t.rows {
			xy, ok := at(g, s)
			if !ok {
				add(seg)
				seg = nil
				continue
			}
			if ev, cloned := t.clones[[2]int{g, s}]; cloned {
				add(seg)
				seg = nil
				if src, ok := at(g-1, ev.from); ok { // a line only: no dot where the slot was not
					line := newLine(plotter.XYs{src, xy})
					line.Color, line.Width, line.Dashes = c, vg.Points(1), []vg.Length{vg.Points(3), vg.Points(3)}
					p.Add(shifted{line, shift})
				}
				rings = append(rings, xy)
			}
			seg = append(seg, xy)
		}
		add(seg)
		if len(rings) > 0 {
			sc := newScatter(rings)
			sc.GlyphStyle = cloneGlyph
			p.Add(shifted{sc, shift})
		}
	}
}

// legend returns the slots' legend: one entry per slot and one for the
// clone marker.
func (t *slotTable) legend(rc runConfig) plot.Legend { return t.legendOf(rc, true) }

// legendOf is the slots' legend. perGeneration says the panels draw
// t.plot's lines (a dot per generation, clone events): the entries then
// show each slot's dot, and the clone events' entries are added when the
// run has any; else (plotUpdates' lines of every update) lines alone.
func (t *slotTable) legendOf(rc runConfig, perGeneration bool) plot.Legend {
	l := plot.NewLegend()
	for s := range t.slots {
		c, dashes, shape := slotStyle(s)
		line, dots := lineDots(plotter.XYs{{}}, c, vg.Points(1.5), dashes)
		dots.GlyphStyle.Shape, dots.GlyphStyle.Radius = shape, vg.Points(2.5)
		if perGeneration {
			l.Add(slotName(s, rc, t.selected()), line, dots)
		} else {
			l.Add(slotName(s, rc, t.selected()), line)
		}
	}
	if perGeneration && len(t.clones) > 0 {
		ring := newScatter(plotter.XYs{{}})
		ring.GlyphStyle = cloneGlyph
		dash := newLine(plotter.XYs{{}, {X: 1}})
		dash.Color, dash.Dashes = color.Gray{Y: 90}, []vg.Length{vg.Points(3), vg.Points(3)}
		l.Add("clone (slot's agent replaced)", ring)
		l.Add("from the agent copied", dash)
	}
	return l
}

// slotShift is how far slot k of n has its lines shifted on the page,
// both right and up: 1.5 points per slot (less when there are many, at
// most 9 points from the first to the last), centred on 0.
func slotShift(k, n int) vg.Length {
	if n < 2 {
		return 0
	}
	step := min(vg.Points(1.5), vg.Points(9)/vg.Length(n-1))
	return step * (vg.Length(k) - vg.Length(n-1)/2)
}

// shifted draws a plotter shifted by d points right and up on the page,
// leaving the data (and so the axes' ranges) as they are. It reports no
// glyph boxes, since they would size each panel's data area differently
// and plot.Align could no longer line the panels up: the room for the dots
// comes from the padded y ranges (padY, logY), and the last generation's
// dots may reach a few points right of the x axis, which ends where
// fitness.png's does.
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

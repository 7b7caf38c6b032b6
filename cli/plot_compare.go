package cli

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// seedBand is a group's curve over its seeds on a common x grid: at each
// x, the mean, min and max of the seeds' values.
type seedBand struct {
	x, mean, lo, hi []float64
}

// bandOf evaluates curves (each sorted by x) with at on a common grid:
// every x where one of them has a point, from the last curve's start to
// the first curve's end, where every seed has a value. Seeds whose ends lie
// within one generation of each other (PBT's step clock ends a run a few
// rollouts after the budget, each seed at its own step) count as ending
// together: each holds its last value to the latest end, or every seed but
// the shortest would be averaged at its generation before the last.
func bandOf(curves []plotter.XYs, at func(plotter.XYs, float64) float64) seedBand {
	lo, hi, last := math.Inf(-1), math.Inf(1), math.Inf(-1)
	var xs []float64
	for _, c := range curves {
		if len(c) == 0 {
			return seedBand{}
		}
		lo, hi, last = max(lo, c[0].X), min(hi, c[len(c)-1].X), max(last, c[len(c)-1].X)
		for _, p := range c {
			xs = append(xs, p.X)
		}
	}
	together := true
	for _, c := range curves {
		n := len(c)
		together = together && n > 1 && last-c[n-1].X <= c[n-1].X-c[n-2].X
	}
	if together {
		hi = last
	}
	slices.Sort(xs)
	var b seedBand
	for _, x := range slices.Compact(xs) {
		if x < lo || x > hi {
			continue
		}
		sum, mn, mx := 0.0, math.Inf(1), math.Inf(-1)
		for _, c := range curves {
			v := c[len(c)-1].Y
			if x <= c[len(c)-1].X {
				v = at(c, x)
			}
			sum, mn, mx = sum+v, min(mn, v), max(mx, v)
		}
		b.x, b.mean = append(b.x, x), append(b.mean, sum/float64(len(curves)))
		b.lo, b.hi = append(b.lo, mn), append(b.hi, mx)
	}
	return b
}

// stepAt is a step function's value at x: that of the last point at or
// before x (the elite is the best so far until a better one replaces it).
func stepAt(c plotter.XYs, x float64) float64 {
	i := sort.Search(len(c), func(i int) bool { return c[i].X > x })
	return c[max(i-1, 0)].Y
}

// linearAt interpolates c linearly at x, inside its range.
func linearAt(c plotter.XYs, x float64) float64 {
	i := sort.Search(len(c), func(i int) bool { return c[i].X >= x })
	if i == 0 || c[i].X == x {
		return c[i].Y
	}
	a, b := c[i-1], c[i]
	return a.Y + (b.Y-a.Y)*(x-a.X)/(b.X-a.X)
}

// stairs returns the points of a step line through xy: each value holds
// until the next x.
func stairs(xy plotter.XYs) plotter.XYs {
	var st plotter.XYs
	for i, p := range xy {
		st = append(st, p)
		if i+1 < len(xy) {
			st = append(st, plotter.XY{X: xy[i+1].X, Y: p.Y})
		}
	}
	return st
}

// xyOf pairs xs and ys.
func xyOf(xs, ys []float64) plotter.XYs {
	xy := make(plotter.XYs, len(xs))
	for i := range xs {
		xy[i] = plotter.XY{X: xs[i], Y: ys[i]}
	}
	return xy
}

// comparisonFigure charts the runs' elite score (solid steps) and best of
// generation (dashed) against the population's env steps: a run alone as
// it is, a group of seeds as the mean over its seeds with a band from the
// min to the max, each seed's elite drawn thin beside it. Groups are
// shifted apart by a few points on the page (slotShift), so that equal
// curves (two groups at a solved task's maximum) stay visible.
func comparisonFigure(runs []*plotRun) figure {
	p := newPlot()
	stepsAxis(p)
	comparisonLabels(p, runs)
	groups := groupSeeds(runs)
	banded := false
	for k, g := range groups {
		st := curveStyle{c: slotPalette[k%len(slotPalette)], shift: slotShift(k, len(groups))}
		if len(g.runs) == 1 {
			f := fitnessSeriesOf(g.runs[0].m)
			p.Legend.Add(g.name, st.add(p, f.elite, f.best, nil)...)
			continue
		}
		var elites, bests []plotter.XYs
		for _, r := range g.runs {
			f := fitnessSeriesOf(r.m)
			elites, bests = append(elites, f.elite), append(bests, f.best)
		}
		e, b := bandOf(elites, stepAt), bandOf(bests, linearAt)
		if len(e.x) == 0 { // seeds without a common stretch: each on its own
			for i, r := range g.runs {
				p.Legend.Add(g.name+" ("+r.label+")", st.add(p, elites[i], bests[i], nil)...)
			}
			continue
		}
		banded = true
		p.Legend.Add(g.name, st.add(p, xyOf(e.x, e.mean), xyOf(b.x, b.mean), &e, elites...)...)
	}
	confirmed := true
	for _, r := range runs {
		confirmed = confirmed && r.rc.confirmed
	}
	addStyleKey(&p.Legend, banded, confirmed)
	target := runs[0].rc.target
	for _, r := range runs {
		if r.rc.target != target {
			target = math.NaN()
		}
	}
	addTarget(p, target)
	padY(p)
	padX(p)
	return figure{w: 9 * vg.Inch, h: 5 * vg.Inch, cols: 1, panels: []*plot.Plot{p}, legend: p.Legend}
}

// comparisonLabels titles the comparison with the runs' env, when they
// share one, and labels its y axis with their fitness measure.
func comparisonLabels(p *plot.Plot, runs []*plotRun) {
	env, train, eval, confirmed := runs[0].rc.env, 0, 0, 0
	var envIDs []string
	for _, r := range runs {
		if r.rc.env != env {
			env = ""
		}
		if r.rc.env != "" && !slices.Contains(envIDs, r.rc.env) {
			envIDs = append(envIDs, r.rc.env)
		}
		if r.rc.trainFitness {
			train++
		} else {
			eval++
		}
		if r.rc.confirmed {
			confirmed++
		}
	}
	p.Title.Text = comparisonTitle(p.Title.TextStyle, env, envIDs)
	switch {
	case confirmed == len(runs): // the solid line is the confirmed score, whatever the fitness
		p.Y.Label.Text = "return (solid: confirmed elite; dashed: best fitness)"
	case train == 0:
		p.Y.Label.Text = "fitness (mean evaluation return)"
	case eval == 0:
		p.Y.Label.Text = "fitness (mean return of training episodes)"
	default:
		p.Y.Label.Text = "fitness (evaluation or training return, as each run's config)"
	}
	p.Y.Tick.Marker = plainTicks{}
}

// maxTitleWidth is the widest line of a comparison's title: the chart's
// width beside a legend of long run names, over which the title is
// centred.
const maxTitleWidth = 5 * vg.Inch

// comparisonTitle is the comparison's title: with the runs' env when they
// share one (env), else with their envs (envIDs), named while they fit on
// a line and else counted, since scores of different envs on one axis
// need saying; on as many lines of at most maxTitleWidth as it takes.
func comparisonTitle(style text.Style, env string, envIDs []string) string {
	switch {
	case env != "":
		return fitTitle(style, env+":", "elite score against env steps")
	case len(envIDs) > 1:
		on := "on " + strings.Join(envIDs, ", ") + " (different envs)"
		if style.Width(on) > maxTitleWidth {
			on = fmt.Sprintf("on %d different envs", len(envIDs))
		}
		return fitTitle(style, "Elite score against env steps,", on)
	}
	return "Elite score against env steps"
}

// fitTitle joins parts, separated by spaces, into lines no wider than
// maxTitleWidth in style: it breaks lines between parts, and between the
// words of a part too wide for a line of its own.
func fitTitle(style text.Style, parts ...string) string {
	var lines []string
	line := ""
	for _, part := range parts {
		words := []string{part}
		if style.Width(part) > maxTitleWidth {
			words = strings.Fields(part)
		}
		for _, w := range words {
			switch {
			case line == "":
				line = w
			case style.Width(line+" "+w) > maxTitleWidth:
				lines, line = append(lines, line), w
			default:
				line += " " + w
			}
		}
	}
	return strings.Join(append(lines, line), "\n")
}

// curveStyle is a run's or a group's colour and shift on the page.
type curveStyle struct {
	c     color.RGBA
	shift vg.Length
}

// add draws a run's or a group's curves: the elite as steps, the best of
// generation dashed, and for a group the band (min to max over seeds) and
// each seed's elite, thin. It returns the legend's thumbnails.
func (st curveStyle) add(p *plot.Plot, elite, best plotter.XYs, band *seedBand, seeds ...plotter.XYs) []plot.Thumbnailer {
	var thumbs []plot.Thumbnailer
	if band != nil {
		poly, err := plotter.NewPolygon(append(stairs(xyOf(band.x, band.hi)), reversed(stairs(xyOf(band.x, band.lo)))...))
		if err == nil {
			poly.Color, poly.LineStyle.Width = fade(st.c, 0.2), 0
			p.Add(shifted{poly, st.shift})
			thumbs = append(thumbs, poly)
		}
		for _, s := range seeds {
			line := newLine(stairs(s))
			line.Color, line.Width = fade(st.c, 0.45), vg.Points(0.7)
			p.Add(shifted{line, st.shift})
		}
	}
	if len(best) > 0 {
		line := newLine(best)
		line.Color, line.Width, line.Dashes = st.c, vg.Points(1.2), []vg.Length{vg.Points(5), vg.Points(3)}
		p.Add(shifted{line, st.shift})
		if len(best) == 1 { // a run of one generation: a ring, as a line needs two points
			ring := newScatter(best)
			ring.GlyphStyle = draw.GlyphStyle{Color: st.c, Radius: vg.Points(3), Shape: draw.RingGlyph{}}
			p.Add(shifted{ring, st.shift})
		}
	}
	if len(elite) > 0 {
		line := newLine(stairs(elite))
		line.Color, line.Width = st.c, vg.Points(2.5)
		p.Add(shifted{line, st.shift})
		thumbs = append(thumbs, line)
		if len(elite) == 1 { // a run of one generation: a point, not a line
			dot := newScatter(elite)
			dot.GlyphStyle = draw.GlyphStyle{Color: st.c, Radius: vg.Points(4), Shape: draw.CircleGlyph{}}
			p.Add(shifted{dot, st.shift})
		}
	}
	return thumbs
}

// addStyleKey adds the legend's key to the line styles, in black; the
// solid line is the confirmed elite where every run confirms its elite.
func addStyleKey(l *plot.Legend, banded, confirmed bool) {
	solid := newLine(plotter.XYs{{}, {X: 1}})
	solid.Width = vg.Points(2.5)
	dashed := newLine(plotter.XYs{{}, {X: 1}})
	dashed.Width, dashed.Dashes = vg.Points(1.2), []vg.Length{vg.Points(5), vg.Points(3)}
	l.Add("")
	if confirmed {
		l.Add("confirmed elite", solid)
	} else {
		l.Add("elite (best so far)", solid)
	}
	l.Add("best of generation", dashed)
	if banded {
		band, _ := plotter.NewPolygon(plotter.XYs{{}, {X: 1}, {X: 1, Y: 1}})
		band.Color, band.LineStyle.Width = color.Gray{Y: 200}, 0
		thin := newLine(plotter.XYs{{}, {X: 1}})
		thin.Color, thin.Width = color.Gray{Y: 120}, vg.Points(0.8)
		l.Add("seeds: mean, band min–max", band, solid)
		l.Add("each seed's elite", thin)
	}
}

// fade returns c with opacity a, premultiplied as image/color wants.
func fade(c color.RGBA, a float64) color.RGBA {
	f := func(v uint8) uint8 { return uint8(float64(v)*a + 0.5) }
	return color.RGBA{f(c.R), f(c.G), f(c.B), f(255)}
}

// reversed returns xy in reverse order.
func reversed(xy plotter.XYs) plotter.XYs {
	r := slices.Clone(xy)
	slices.Reverse(r)
	return r
}

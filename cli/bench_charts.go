package cli

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/evolverl/evolve/evo"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// writeLRCharts writes lr-<config>.png for every config run from a changed
// lr: one panel per evolving variant, with every agent's lr per generation
// (grey dots), each seed's population geometric mean (a line) and the
// config's own lr (dashed). It returns the paths written.
func (o benchOptions) writeLRCharts(groups []benchGroup) ([]string, error) {
	var written []string
	for i := 0; i < len(groups); {
		j := i
		changed := false
		for ; j < len(groups) && groups[j].config == groups[i].config; j++ {
			changed = changed || groups[j].variant != "evo" && groups[j].variant != "fixed"
		}
		var panels []*plot.Plot
		for _, g := range groups[i:j] {
			if !changed || g.variant == "fixed" {
				continue
			}
			p, err := lrPanel(g)
			if err != nil {
				return written, err
			}
			panels = append(panels, p)
		}
		if len(panels) > 0 {
			path := filepath.Join(o.report, "lr-"+groups[i].config+".png")
			if err := savePNG(path, 8*vg.Inch, vg.Length(len(panels))*2.6*vg.Inch, panels); err != nil {
				return written, err
			}
			written = append(written, path)
		}
		i = j
	}
	return written, nil
}

// lrPanel charts the lr of every agent of g's runs per generation.
func lrPanel(g benchGroup) (*plot.Plot, error) {
	p := newPlot()
	p.Title.Text = fmt.Sprintf("%s, %s: lr of the population per generation", g.config, g.variant)
	p.X.Label.Text = "generation"
	p.X.Tick.Marker = integerTicks{}
	p.Y.Label.Text = hpLabels["lr"]
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	var dots plotter.XYs
	var lines []plot.Plotter
	lo, hi := g.runs[0].BaseLR, g.runs[0].BaseLR
	for k, r := range g.runs {
		m, err := evo.ReadMetrics(filepath.Join(r.Dir, "metrics.csv"))
		if err != nil {
			return nil, err
		}
		col := slices.Index(m.HPNames, "lr")
		if col < 0 {
			return nil, fmt.Errorf("%s: no lr column", filepath.Join(r.Dir, "metrics.csv"))
		}
		logSum := map[int]float64{}
		count := map[int]int{}
		var gens []int
		for _, row := range m.Rows {
			lr := row.HP[col]
			if !(lr > 0) {
				continue
			}
			if count[row.Generation] == 0 {
				gens = append(gens, row.Generation)
			}
			logSum[row.Generation] += math.Log(lr)
			count[row.Generation]++
			dots = append(dots, plotter.XY{X: float64(row.Generation), Y: lr})
			lo, hi = min(lo, lr), max(hi, lr)
		}
		var mean plotter.XYs
		for _, gen := range gens {
			mean = append(mean, plotter.XY{X: float64(gen), Y: math.Exp(logSum[gen] / float64(count[gen]))})
		}
		if len(mean) > 0 {
			line, pts := lineDots(mean, plotutil.Color(k), vg.Points(1.5), nil)
			lines = append(lines, line, pts)
			p.Legend.Add(fmt.Sprintf("seed %d (geometric mean)", r.Seed), line, pts)
		}
	}
	if len(dots) > 0 {
		s := newScatter(dots)
		s.GlyphStyle = draw.GlyphStyle{Color: color.Gray{Y: 170}, Radius: vg.Points(1.8), Shape: draw.CircleGlyph{}}
		p.Add(s)
		p.Legend.Add("each agent", s)
	}
	p.Add(lines...) // over the dots
	base := g.runs[0].BaseLR
	ref := plotter.NewFunction(func(float64) float64 { return base })
	ref.Color, ref.Dashes, ref.Width = color.Gray{Y: 60}, []vg.Length{vg.Points(2), vg.Points(2)}, vg.Points(1)
	p.Add(ref)
	p.Legend.Add("the config's lr "+strconv.FormatFloat(base, 'g', 3, 64), ref)
	p.Y.Min, p.Y.Max = lo/1.3, hi*1.3
	return p, nil
}

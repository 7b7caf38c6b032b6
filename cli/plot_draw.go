package cli

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// lineDots returns a line through xys and a dot at each point.
func lineDots(xys plotter.XYs, c color.Color, width vg.Length, dashes []vg.Length) (*plotter.Line, *plotter.Scatter) {
	line, dots, err := plotter.NewLinePoints(xys)
	if err != nil { // only NaN or Inf coordinates, which the callers never pass
		panic("evolve plot: " + err.Error())
	}
	line.Color, line.Width, line.Dashes = c, width, dashes
	dots.GlyphStyle = draw.GlyphStyle{Color: c, Radius: width + vg.Points(1), Shape: draw.CircleGlyph{}}
	return line, dots
}

// newPlot returns a plot with a grid and readable fonts; its legend goes
// right of the chart (savePNG).
func newPlot() *plot.Plot {
	p := plot.New()
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.Title.Padding = vg.Points(6)
	p.X.Label.TextStyle.Font.Size = vg.Points(11)
	p.Y.Label.TextStyle.Font.Size = vg.Points(11)
	p.X.Tick.Label.Font.Size = vg.Points(10)
	p.Y.Tick.Label.Font.Size = vg.Points(10)
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	g := plotter.NewGrid()
	g.Vertical.Color, g.Horizontal.Color = color.Gray{Y: 225}, color.Gray{Y: 225}
	p.Add(g)
	return p
}

// padY widens the y range so that constant lines and the extreme points
// do not sit on the frame (paddedRange).
func padY(p *plot.Plot) {
	p.Y.Min, p.Y.Max = paddedRange(p.Y.Min, p.Y.Max)
}

// paddedRange widens [lo, hi] by 8 % of its width on each side, so that a
// small quantity (an ent_coef moving between 0.008 and 0.012) fills the
// chart. A range that is empty, or negligible next to its values, is
// centred with 5 % of |value| on each side, and only a range at exactly 0
// gets ±0.5.
func paddedRange(lo, hi float64) (float64, float64) {
	mid, span := (lo+hi)/2, hi-lo
	if span > 1e-9*max(math.Abs(lo), math.Abs(hi)) {
		return lo - 0.08*span, hi + 0.08*span
	}
	pad := 0.05 * math.Abs(mid)
	if pad == 0 {
		pad = 0.5
	}
	return mid - pad, mid + pad
}

// legendWidth is the column right of the charts that holds their legends,
// so that a legend never hides data.
const legendWidth = 1.75 * vg.Inch

// savePNG draws the plots stacked vertically on one w×h image at 120 dpi,
// each with its legend to its right.
func savePNG(path string, w, h vg.Length, plots []*plot.Plot) error {
	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(120))
	dc := draw.New(img)
	rows := make([][]*plot.Plot, len(plots))
	legends := make([]plot.Legend, len(plots))
	for i, p := range plots {
		rows[i] = []*plot.Plot{p}
		legends[i] = p.Legend
		p.Legend = plot.NewLegend()
	}
	tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadY: vg.Points(14), PadTop: vg.Points(4),
		PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8)}
	cs := plot.Align(rows, tiles, draw.Crop(dc, 0, -legendWidth, 0, 0))
	for i, p := range plots {
		p.Draw(cs[i][0])
		c := cs[i][0]
		lc := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: c.Max.X + vg.Points(10), Y: c.Min.Y},
			Max: vg.Point{X: dc.Max.X, Y: c.Max.Y - vg.Points(22)}}}
		legends[i].Top, legends[i].Left = true, true
		legends[i].XOffs, legends[i].YOffs = 0, 0
		legends[i].Draw(lc)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// plainTicks labels the default ticks with as few digits as they need.
type plainTicks struct{}

func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i, t := range ts {
		if t.Label != "" {
			ts[i].Label = strconv.FormatFloat(t.Value, 'g', 6, 64)
		}
	}
	return ts
}

// siTicks labels the default ticks with k, M and G suffixes (400k, 1.2M)
// instead of exponents, and labels the minor ticks too when fewer than
// three major ones fall in the range.
type siTicks struct{}

func (siTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	labelled := 0
	for _, t := range ts {
		if t.Label != "" {
			labelled++
		}
	}
	for i, t := range ts {
		if t.Label != "" || labelled < 3 {
			ts[i].Label = siFormat(t.Value)
		}
	}
	return ts
}

func siFormat(v float64) string {
	for _, u := range []struct {
		div    float64
		suffix string
	}{{1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if math.Abs(v) >= u.div {
			return strconv.FormatFloat(v/u.div, 'f', -1, 64) + u.suffix
		}
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// integerTicks keeps only the default ticks at whole numbers (generations).
type integerTicks struct{}

func (integerTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for _, t := range (plot.DefaultTicks{}).Ticks(lo, hi) {
		if t.Label != "" && t.Value == math.Trunc(t.Value) {
			ts = append(ts, plot.Tick{Value: t.Value, Label: strconv.FormatFloat(t.Value, 'f', 0, 64)})
		}
	}
	if len(ts) == 0 { // a range inside one generation
		for g := math.Ceil(lo); g <= hi; g++ {
			ts = append(ts, plot.Tick{Value: g, Label: strconv.FormatFloat(g, 'f', 0, 64)})
		}
	}
	return ts
}

// logTicks uses powers of ten when the range spans a decade and the
// default (linear) ticks, placed on the log scale, when it does not,
// since plot.LogTicks would then label nothing.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if hi/lo >= 10 {
		ts := plot.LogTicks{Prec: -1}.Ticks(lo, hi)
		for i, t := range ts {
			if t.Label != "" { // powers of ten computed by repeated products: 9.999999e-05
				ts[i].Label = strconv.FormatFloat(t.Value, 'g', 3, 64)
			}
		}
		return ts
	}
	var ts []plot.Tick
	for _, t := range (plot.DefaultTicks{}).Ticks(lo, hi) {
		if t.Value > 0 {
			if t.Label != "" {
				t.Label = strconv.FormatFloat(t.Value, 'g', 3, 64)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

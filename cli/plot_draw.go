package cli

import (
	"fmt"
	"image/color"
	"io"
	"math"

	"github.com/evolverl/evolve/internal/atomicfile"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// finite returns xys without the points a chart cannot place (a NaN or an
// infinite coordinate), so that no value in a run's files can fail a chart.
func finite(xys plotter.XYs) plotter.XYs {
	out := make(plotter.XYs, 0, len(xys))
	for _, p := range xys {
		if !math.IsNaN(p.X) && !math.IsInf(p.X, 0) && !math.IsNaN(p.Y) && !math.IsInf(p.Y, 0) {
			out = append(out, p)
		}
	}
	return out
}

// newLine is a line through xys's finite points.
func newLine(xys plotter.XYs) *plotter.Line {
	line, err := plotter.NewLine(finite(xys))
	if err != nil { // NewLine fails only on non-finite points
		panic("evolve plot: " + err.Error())
	}
	return line
}

// newScatter is a dot at each of xys's finite points.
func newScatter(xys plotter.XYs) *plotter.Scatter {
	s, err := plotter.NewScatter(finite(xys))
	if err != nil { // NewScatter fails only on non-finite points
		panic("evolve plot: " + err.Error())
	}
	return s
}

// lineDots returns a line through xys's finite points and a dot at each.
func lineDots(xys plotter.XYs, c color.Color, width vg.Length, dashes []vg.Length) (*plotter.Line, *plotter.Scatter) {
	line, dots, err := plotter.NewLinePoints(finite(xys))
	if err != nil { // NewLinePoints fails only on non-finite points
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

// legendPadding is the room between a legend's entries: without it the
// elite's thick line and the triangles of fitness.png's entries touch.
const legendPadding = vg.Length(2.5)

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
		legends[i].Padding = legendPadding
		legends[i].Draw(lc)
	}
	return writePNG(path, img)
}

// stepsAxis makes p's x axis the population's env steps from 0, the x
// axis of every chart of a run (as fitness.png's), so that they line up.
func stepsAxis(p *plot.Plot) {
	p.X.Label.Text = "training env steps (whole population)"
	p.X.Tick.Marker = siTicks{}
	p.X.Min = 0
}

// logY puts p's y axis on a log scale, padded by 8 % of the range (in
// decades) as padY pads a linear one; a constant or nearly constant value
// is shown with its neighbourhood, ×/÷ 1.5.
func logY(p *plot.Plot) {
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	if p.Y.Max/p.Y.Min < 1.5 {
		p.Y.Min, p.Y.Max = p.Y.Min/1.5, p.Y.Max*1.5
		return
	}
	f := math.Pow(p.Y.Max/p.Y.Min, 0.08)
	p.Y.Min, p.Y.Max = p.Y.Min/f, p.Y.Max*f
}

// padX leaves 3 % of the x range right of the last point, room for the
// comparison's last steps.
func padX(p *plot.Plot) {
	p.X.Max += 0.03 * (p.X.Max - p.X.Min)
}

// figure is one PNG: panels in a grid of cols columns, filled row by row,
// and one legend, for all of them, right of the grid.
type figure struct {
	w, h   vg.Length
	cols   int
	panels []*plot.Plot
	legend plot.Legend
}

// save draws the figure at 120 dpi and writes it to path. The legend's
// column is as wide as its longest entry, so that it never hides data,
// and the figure at least as tall as the legend.
func (f figure) save(path string) error {
	f.legend.Top, f.legend.Left = true, true
	f.legend.XOffs, f.legend.YOffs = 0, 0
	f.legend.Padding = legendPadding
	lr := f.legend.Rectangle(draw.Canvas{})
	lw := lr.Max.X - lr.Min.X + vg.Points(18)
	img := vgimg.NewWith(vgimg.UseWH(f.w, max(f.h, lr.Max.Y-lr.Min.Y+vg.Points(40))), vgimg.UseDPI(120))
	dc := draw.New(img)
	cols := max(1, f.cols)
	rows := make([][]*plot.Plot, (len(f.panels)+cols-1)/cols)
	for i := range rows {
		rows[i] = make([]*plot.Plot, cols)
	}
	for i, p := range f.panels {
		p.Legend = plot.NewLegend()
		rows[i/cols][i%cols] = p
	}
	tiles := draw.Tiles{Rows: len(rows), Cols: cols, PadX: vg.Points(18), PadY: vg.Points(14),
		PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8)}
	cs := plot.Align(rows, tiles, draw.Crop(dc, 0, -lw, 0, 0))
	for i, p := range f.panels {
		p.Draw(cs[i/cols][i%cols])
	}
	top := cs[0][0].Max.Y - vg.Points(22)
	f.legend.Draw(draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
		Min: vg.Point{X: dc.Max.X - lw + vg.Points(10), Y: dc.Min.Y}, Max: vg.Point{X: dc.Max.X, Y: top}}})
	return writePNG(path, img)
}

// writePNG writes img to path as a PNG, whole or not at all (a chart
// being replaced stays readable until the new one is in place).
func writePNG(path string, img *vgimg.Canvas) error {
	if err := atomicfile.Write(path, func(w io.Writer) error {
		_, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(w)
		return err
	}); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

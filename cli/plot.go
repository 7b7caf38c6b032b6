package cli

import (
	"context"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/evolverl/evolve/evo"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// plotCmd is `evolve plot [-o DIR] [-hp NAME] RUN_DIR`: it reads RUN_DIR/metrics.csv
// and writes fitness.png, hyperparameters.png (when a hyperparameter
// changed during the run) and network.png (when the net column can be
// parsed) to DIR, RUN_DIR/plots by default.
func plotCmd(_ context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCommand("evolve plot", "usage: evolve plot [-o DIR] [-hp NAME] RUN_DIR\n\n", stderr)
	outDir := c.fs.String("o", "", "write the PNGs to `DIR` (default RUN_DIR/plots)")
	hp := c.fs.String("hp", "", "write only hp-`NAME`.png: hyperparameter NAME (a metrics.csv column: lr, batch_size, ...) of every agent per generation")
	pos, status, ok := c.parseInterspersed(args)
	if !ok {
		return status
	}
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "evolve plot: "+format+"\n", a...)
		return exitBadInput
	}
	if len(pos) != 1 {
		return c.misuse("want one run directory, got %d arguments", len(pos))
	}
	dir := pos[0]
	if fi, err := os.Stat(dir); err != nil {
		return bad("%v", err)
	} else if !fi.IsDir() {
		return bad("%s: not a run directory", dir)
	}
	m, err := evo.ReadMetrics(filepath.Join(dir, "metrics.csv"))
	if err != nil {
		return bad("%v", err)
	}
	rc := readRunConfig(dir)
	if *outDir == "" {
		*outDir = filepath.Join(dir, "plots")
	}
	if err := os.MkdirAll(*outDir, 0o755); err != nil {
		return bad("%v", err)
	}

	write := func(name string, w, h vg.Length, plots ...*plot.Plot) bool {
		path := filepath.Join(*outDir, name)
		if err := savePNG(path, w, h, plots); err != nil {
			fmt.Fprintf(stderr, "evolve plot: %v\n", err)
			return false
		}
		fmt.Fprintln(stdout, path)
		return true
	}
	if *hp != "" {
		i := slices.Index(m.HPNames, *hp)
		if i < 0 {
			return bad("-hp %s: %s has the hyperparameter columns %s", *hp, filepath.Join(dir, "metrics.csv"), strings.Join(m.HPNames, ", "))
		}
		if !write("hp-"+*hp+".png", 8*vg.Inch, 4*vg.Inch, hpPlot(m, newLineages(m), i)) {
			return exitFailure
		}
		return exitOK
	}
	if !write("fitness.png", 8*vg.Inch, 4.5*vg.Inch, fitnessPlot(m, rc)) {
		return exitFailure
	}
	if hps := hyperparameterPlots(m); len(hps) == 0 {
		fmt.Fprintf(stderr, "evolve plot: no hyperparameter changed during the run: no hyperparameters.png\n")
	} else if !write("hyperparameters.png", 8*vg.Inch, vg.Length(len(hps))*2.6*vg.Inch, hps...) {
		return exitFailure
	}
	if p := networkPlot(m); p == nil {
		fmt.Fprintf(stderr, "evolve plot: no layer widths in the net column: no network.png\n")
	} else if !write("network.png", 8*vg.Inch, 4*vg.Inch, p) {
		return exitFailure
	}
	return exitOK
}

// runConfig is what the plots read of a run's config.toml: the env id,
// the fitness target (NaN if none), whether the elite is confirmed and
// whether fitness comes from training episodes.
type runConfig struct {
	env                     string
	target                  float64
	confirmed, trainFitness bool
}

// readRunConfig reads the config.toml of the run directory dir; what it
// cannot read stays empty: the plots only use it for the title, the labels
// and a reference line.
func readRunConfig(dir string) runConfig {
	rc := runConfig{target: math.NaN()}
	cfg, err := evo.ReadRunConfig(dir)
	if err != nil {
		return rc
	}
	p := cfg.Population
	if !math.IsInf(p.Target, 1) {
		rc.target = p.Target
	}
	rc.env, rc.confirmed, rc.trainFitness = cfg.Env.ID, p.EliteEpisodes > 0, p.Fitness == evo.FitnessTrain
	return rc
}

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
	p.X.Label.Text = "env steps (whole population)"
	p.Y.Label.Text = "fitness (mean evaluation return)"
	if rc.trainFitness {
		p.Y.Label.Text = "fitness (mean return of training episodes)"
	}
	p.Y.Tick.Marker = plainTicks{}
	p.X.Tick.Marker = siTicks{}
	p.X.Min = 0

	if len(f.agents) > 0 {
		s, _ := plotter.NewScatter(f.agents)
		s.GlyphStyle = draw.GlyphStyle{Color: color.Gray{Y: 150}, Radius: vg.Points(2.2), Shape: draw.CircleGlyph{}}
		p.Add(s)
		p.Legend.Add("each agent", s)
	}
	eliteName := "elite (best so far)"
	if rc.confirmed && len(m.Rows) > 0 && !math.IsNaN(m.Rows[0].EliteFitness) {
		eliteName = "elite (confirmed)"
	}
	eliteColor := color.RGBA{R: 152, G: 223, B: 138, A: 255}
	lines := []struct {
		name  string
		xys   plotter.XYs
		c     color.Color
		width vg.Length
		dash  []vg.Length
	}{
		{eliteName, f.elite, eliteColor, 5, nil},
		{"best of generation", f.best, color.RGBA{R: 214, G: 39, B: 40, A: 255}, 1.5, nil},
		{"mean of generation", f.mean, color.RGBA{R: 31, G: 119, B: 180, A: 255}, 1.5, []vg.Length{vg.Points(5), vg.Points(3)}},
	}
	for _, l := range lines {
		if len(l.xys) == 0 {
			continue
		}
		line, dots := lineDots(l.xys, l.c, vg.Points(float64(l.width)), l.dash)
		p.Add(line, dots)
		p.Legend.Add(l.name, line, dots)
	}
	if len(f.newElite) > 0 {
		s, _ := plotter.NewScatter(f.newElite)
		s.GlyphStyle = draw.GlyphStyle{Color: color.RGBA{G: 110, A: 255}, Radius: vg.Points(4.5), Shape: draw.PyramidGlyph{}}
		p.Add(s)
		p.Legend.Add("new elite saved", s)
	}
	addTarget(p, rc.target)
	if f.diverged > 0 {
		p.Title.Text += fmt.Sprintf(" (%d diverged agents not shown)", f.diverged)
	}
	padY(p)
	return p
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
			if math.IsInf(r.Fitness, 0) {
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

// hpLabels gives the hyperparameters' axis labels with their units.
var hpLabels = map[string]string{
	"lr":         "lr (Adam step size, log scale)",
	"batch_size": "batch_size (transitions)",
	"learn_step": "learn_step (transitions per update)",
}

// hyperparameterPlots returns one chart per hyperparameter that changed
// during the run (hpPlot).
func hyperparameterPlots(m *evo.Metrics) []*plot.Plot {
	l := newLineages(m)
	var plots []*plot.Plot
	for i := range m.HPNames {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, r := range m.Rows {
			lo, hi = min(lo, r.HP[i]), max(hi, r.HP[i])
		}
		if lo < hi {
			plots = append(plots, hpPlot(m, l, i))
		}
	}
	return plots
}

// hpPlot charts hyperparameter m.HPNames[i] of every agent over
// generations, one line per agent starting at its parent's value; lr is on
// a log scale.
func hpPlot(m *evo.Metrics, l *lineages, i int) *plot.Plot {
	name := m.HPNames[i]
	lo := math.Inf(1)
	for _, r := range m.Rows {
		lo = min(lo, r.HP[i])
	}
	p := newPlot()
	p.Title.Text = name + " of every agent (lines follow parent → child)"
	p.X.Label.Text = "generation"
	p.X.Tick.Marker = integerTicks{}
	p.Y.Label.Text = name
	if s, ok := hpLabels[name]; ok {
		p.Y.Label.Text = s
	}
	value := func(r evo.MetricsRow) float64 { return r.HP[i] }
	logScale := lo > 0 && (name == "lr" || name == "ent_coef" || name == "batch_size" || name == "learn_step")
	if (name == "gamma" || name == "gae_lambda") && hiOf(m, i) < 1 {
		// What matters is the horizon 1/(1 − gamma): plot 1 − value on a
		// log scale, as PBT and the zoo step it.
		value = func(r evo.MetricsRow) float64 { return 1 - r.HP[i] }
		p.Y.Label.Text = "1 − " + name + " (log scale)"
		logScale = true
	} else if logScale && name != "lr" {
		p.Y.Label.Text += " (log scale)"
	}
	l.plot(p, value)
	if logScale {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
		if p.Y.Max/p.Y.Min < 1.5 { // a constant or nearly constant lr: show its neighbourhood
			p.Y.Min, p.Y.Max = p.Y.Min/1.5, p.Y.Max*1.5
		}
	} else {
		p.Y.Tick.Marker = plainTicks{}
		padY(p)
	}
	return p
}

// hiOf returns the largest value of hyperparameter column i.
func hiOf(m *evo.Metrics, i int) float64 {
	hi := math.Inf(-1)
	for _, r := range m.Rows {
		hi = max(hi, r.HP[i])
	}
	return hi
}

// widthRE matches the layer widths in netconf.Spec.String's description:
// "mlp[64 64]", "cnn[32 32]" (channels), "head[64]", "latent 32", "lstm 2x64".
var widthRE = regexp.MustCompile(`(?:mlp|cnn|head)\[([0-9 ]*)\]|latent ([0-9]+)|lstm ([0-9]+)x([0-9]+)`)

// hiddenUnits sums the widths of a net description's hidden layers
// (encoder, latent and head; CNN channels count as units), and reports
// whether the description held any.
func hiddenUnits(net string) (int, bool) {
	ms := widthRE.FindAllStringSubmatch(net, -1)
	sum := 0
	for _, m := range ms {
		switch {
		case m[3] != "":
			layers, _ := strconv.Atoi(m[3])
			width, _ := strconv.Atoi(m[4])
			sum += layers * width
		case m[2] != "":
			n, _ := strconv.Atoi(m[2])
			sum += n
		default:
			for _, f := range strings.Fields(m[1]) {
				n, _ := strconv.Atoi(f)
				sum += n
			}
		}
	}
	return sum, len(ms) > 0
}

// networkPlot charts every agent's hidden units over generations, or
// returns nil when a net description has no widths to read.
func networkPlot(m *evo.Metrics) *plot.Plot {
	units := map[string]int{}
	for _, r := range m.Rows {
		n, ok := hiddenUnits(r.Net)
		if !ok {
			return nil
		}
		units[r.Net] = n
	}
	p := newPlot()
	p.Title.Text = "Network size of every agent (lines follow parent → child)"
	p.X.Label.Text = "generation"
	p.X.Tick.Marker = integerTicks{}
	p.Y.Label.Text = "hidden units (encoder + latent + head)"
	p.Y.Tick.Marker = plainTicks{}
	newLineages(m).plot(p, func(r evo.MetricsRow) float64 { return float64(units[r.Net]) })
	padY(p)
	return p
}

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

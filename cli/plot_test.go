package cli

import (
	"context"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/evolverl/evolve/evo"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// checkPNG decodes path and checks that it is a chart-sized image with
// something drawn on it.
func checkPNG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b := img.Bounds()
	if b.Dx() < 600 || b.Dy() < 300 || b.Dx() > 2000 || b.Dy() > 4000 {
		t.Errorf("%s: %v, want a chart of about 960×540", path, b)
	}
	inked := 0
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			if r, g, bl, _ := img.At(x, y).RGBA(); r < 0xf000 || g < 0xf000 || bl < 0xf000 {
				inked++
			}
		}
	}
	if share := float64(inked) / float64(b.Dx()*b.Dy()/4); share < 0.01 {
		t.Errorf("%s: %.2g %% of the pixels drawn, want a chart", path, 100*share)
	}
}

func TestPlotTinyRun(t *testing.T) {
	_, dir := trainTiny(t, 1024)
	code, out, errOut := evolve(context.Background(), "plot", dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, name := range []string{"fitness.png", "training.png"} {
		p := filepath.Join(dir, "plots", name)
		checkPNG(t, p)
		if !strings.Contains(out, p) {
			t.Errorf("stdout does not list %s:\n%s", p, out)
		}
	}
	// The tiny run's hyperparameters and network never change: no charts,
	// and a note each.
	if _, err := os.Stat(filepath.Join(dir, "plots", "hyperparameters.png")); err == nil || !strings.Contains(errOut, "no hyperparameter changed") {
		t.Errorf("hyperparameters.png written for constant hyperparameters (stderr %q)", errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "plots", "network.png")); err == nil ||
		!strings.Contains(errOut, "no network changed during the run (mlp[") {
		t.Errorf("network.png written for a network that never changed (stderr %q)", errOut)
	}
}

// syntheticMetrics is a metrics.csv of two generations in which lr and
// learn_step evolve, the net grows, and one agent diverged.
const syntheticMetrics = `generation,agent,parent,fitness,diverged,steps,total_steps,wall_s,train_return,loss,policy_loss,value_loss,entropy,approx_kl,clip_frac,explained_variance,grad_norm,lr,batch_size,learn_step,net,mutation
1,0,-1,10,false,256,512,0.1,20,1,0,1,0.6,0,0,0,1,0.0003,64,128,mlp[16] ReLU latent 8 head[16] ReLU,initial
1,1,-1,-Inf,true,256,512,0.1,20,NaN,0,1,0.6,0,0,0,1,0.0003,64,128,mlp[16] ReLU latent 8 head[16] ReLU,initial
2,0,-1,30,false,512,1024,0.2,20,1,0,1,0.6,0,0,0,1,0.0003,64,128,mlp[16] ReLU latent 8 head[16] ReLU,none
2,2,0,25,false,512,1024,0.2,20,1,0,1,0.6,0,0,0,1,0.003,64,256,"mlp[16 32] ReLU latent 8 head[16] ReLU","lr, learn_step"
`

func TestPlotEvolvingHyperparametersAndOutDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "metrics.csv"), []byte(syntheticMetrics), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "charts")
	// Flags may follow the run directory.
	if code, _, errOut := evolve(context.Background(), "plot", dir, "-o", out); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, name := range []string{"fitness.png", "training.png", "hyperparameters.png", "network.png"} {
		checkPNG(t, filepath.Join(out, name))
	}
}

func TestPlotOneHyperparameter(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "metrics.csv"), []byte(syntheticMetrics), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "charts")
	// A constant hyperparameter is charted too when asked for by name.
	for _, hp := range []string{"lr", "batch_size"} {
		code, stdout, errOut := evolve(context.Background(), "plot", "-hp", hp, "-o", out, dir)
		if p := filepath.Join(out, "hp-"+hp+".png"); code != exitOK || strings.TrimSpace(stdout) != p {
			t.Fatalf("-hp %s: exit %d, stdout %q (want only %s): %s", hp, code, stdout, p, errOut)
		}
		checkPNG(t, filepath.Join(out, "hp-"+hp+".png"))
	}
	if _, err := os.Stat(filepath.Join(out, "fitness.png")); err == nil {
		t.Errorf("-hp wrote the other charts too")
	}
	code, _, errOut := evolve(context.Background(), "plot", "-hp", "gamma", dir)
	if code != exitBadInput || !strings.Contains(errOut, "-hp gamma") || !strings.Contains(errOut, "lr, batch_size, learn_step") {
		t.Errorf("-hp gamma: exit %d, stderr %q: want 2 naming the columns there are", code, errOut)
	}
}

func TestHiddenUnits(t *testing.T) {
	for _, c := range []struct {
		net  string
		want int
		ok   bool
	}{
		{"mlp[64 64] ReLU latent 32 head[64] ReLU", 224, true},
		{"mlp[] ReLU latent 8 head[] ReLU", 8, true},
		{"lstm 2x64 latent 32 head[64] Tanh", 224, true},
		{"cnn[32 32] k[3 3] s[2 2] ReLU latent 32 head[64] ReLU", 160, true},
		{"dict{pos: mlp[64] ReLU, img: cnn[16] k[3] s[1] ReLU} latent 32 head[64] ReLU", 176, true},
		{"something else", 0, false},
	} {
		if got, ok := hiddenUnits(c.net); got != c.want || ok != c.ok {
			t.Errorf("hiddenUnits(%q) = %d, %v, want %d, %v", c.net, got, ok, c.want, c.ok)
		}
	}
}

func TestPlotBadInputExitsTwo(t *testing.T) {
	dir := t.TempDir()
	runDir := func(name, metrics string) string {
		d := filepath.Join(dir, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if metrics != "" {
			if err := os.WriteFile(filepath.Join(d, "metrics.csv"), []byte(metrics), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	header := strings.SplitN(syntheticMetrics, "\n", 2)[0] + "\n"
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no argument", nil, "want a run directory"},
		{"missing directory", []string{filepath.Join(dir, "nope")}, "nope"},
		{"no metrics.csv", []string{runDir("empty", "")}, "empty: no metrics.csv in it or below"},
		{"empty metrics.csv", []string{runDir("zero", "\n")}, "metrics.csv: empty file"},
		{"header only", []string{runDir("header", header)}, "metrics.csv: no rows"},
		{"foreign CSV", []string{runDir("foreign", "a,b\n1,2\n")}, `no column "generation"`},
		{"ragged row", []string{runDir("ragged", header+"1,0,-1\n")}, "metrics.csv"},
		{"bad number", []string{runDir("number", strings.Replace(syntheticMetrics, "0.0003,64", "fast,64", 1))}, `metrics.csv: line 2: column lr: "fast"`},
		{"unknown flag", []string{"-x", runDir("flag", syntheticMetrics)}, "-x"},
		{"empty -o", []string{"-o", "", runDir("emptyo", syntheticMetrics)}, "-o: empty"},
		{"empty -hp", []string{"-hp", "", runDir("emptyhp", syntheticMetrics)}, "-hp: empty"},
		{"-o under a file", []string{"-o", filepath.Join(runDir("file", syntheticMetrics), "metrics.csv", "plots"), runDir("o", syntheticMetrics)},
			"-o " + filepath.Join(dir, "file", "metrics.csv", "plots") + ": "},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, errOut := evolve(context.Background(), append([]string{"plot"}, c.args...)...)
			if code != exitBadInput || !strings.Contains(errOut, c.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, errOut, c.want)
			}
		})
	}
}

// TestPaddedRange: the y padding is relative to the range, so that small
// hyperparameters (ent_coef 0.008–0.012) fill the chart instead of being
// drawn flat on −0.5…0.5; a constant is shown around its value.
func TestPaddedRange(t *testing.T) {
	for _, c := range []struct{ lo, hi, wantLo, wantHi float64 }{
		{0.008, 0.012, 0.00768, 0.01232},
		{10, 60, 6, 64},
		{-3, 1, -3.32, 1.32},
		{0.01, 0.01, 0.0095, 0.0105},
		{-200, -200, -210, -190},
		{0, 0, -0.5, 0.5},
		{64, 64 * (1 + 1e-12), 60.8, 67.2}, // rounding noise is a constant
	} {
		lo, hi := paddedRange(c.lo, c.hi)
		if math.Abs(lo-c.wantLo) > 1e-9*math.Abs(c.wantLo)+1e-15 || math.Abs(hi-c.wantHi) > 1e-9*math.Abs(c.wantHi)+1e-15 {
			t.Errorf("paddedRange(%g, %g) = %g, %g; want %g, %g", c.lo, c.hi, lo, hi, c.wantLo, c.wantHi)
		}
	}
}

// TestSlotShift: slots' lines are shifted apart on the page, centred
// on the data, never by more than 9 points in all.
func TestSlotShift(t *testing.T) {
	if d := slotShift(0, 1); d != 0 {
		t.Errorf("one slot shifted by %v", d)
	}
	for _, n := range []int{2, 3, 16} {
		first, last := slotShift(0, n), slotShift(n-1, n)
		if first >= last || math.Abs(float64(first+last)) > 1e-9 || last-first > vg.Points(9)+1e-9 {
			t.Errorf("%d slots: shifts %v … %v; want distinct, centred on 0, at most 9 points apart", n, first, last)
		}
	}
}

// TestNetParts: the parts of a network's description that mutations
// change, for every encoder netconf.Spec.String writes.
func TestNetParts(t *testing.T) {
	for _, c := range []struct {
		net  string
		want string
	}{
		{"mlp[64 64] ReLU ln latent 32 head[64] ReLU",
			"mlp widths=[64 64]; mlp activation=ReLU ln; latent size=32; head widths=[64]; head activation=ReLU"},
		{"cnn[32 32] k[3 3] s[2 1] ReLU latent 32 head[] ReLU",
			"cnn channels=[32 32]; cnn kernels=[3 3]; cnn strides=[2 1]; cnn activation=ReLU; latent size=32; head widths=[]; head activation=ReLU"},
		{"lstm 2x64 latent 32 head[64] Tanh",
			"memory model=lstm; lstm/gru layers×hidden=2×64; latent size=32; head widths=[64]; head activation=Tanh"},
		{"gru 1x74 latent 64 head[64] Tanh",
			"memory model=gru; lstm/gru layers×hidden=1×74; latent size=64; head widths=[64]; head activation=Tanh"},
		{"transformer 2x32 h2 f64 k40 latent 128 head[128] Tanh",
			"memory model=transformer; transformer layers×width=2×32; transformer heads=2; transformer mlp=64; transformer context=40; latent size=128; head widths=[128]; head activation=Tanh"},
		{"dict{pos: mlp[64] ReLU, img: cnn[16] k[3] s[1] ReLU} latent 32 head[64] ReLU",
			"pos: mlp widths=[64]; pos: mlp activation=ReLU; img: cnn channels=[16]; img: cnn kernels=[3]; img: cnn strides=[1]; img: cnn activation=ReLU; latent size=32; head widths=[64]; head activation=ReLU"},
	} {
		parts, ok := netParts(c.net)
		var got []string
		for _, p := range parts {
			got = append(got, p.name+"="+p.value)
		}
		if !ok || strings.Join(got, "; ") != c.want {
			t.Errorf("netParts(%q) = %q, %v;\nwant %q", c.net, strings.Join(got, "; "), ok, c.want)
		}
	}
	if _, ok := netParts("something else"); ok {
		t.Errorf("netParts read parts from a description without any")
	}
	values := []string{"[64 64]", "[128]", "[64]", "[32 32 32]"}
	slices.SortFunc(values, partOrder)
	if want := []string{"[64]", "[32 32 32]", "[128]", "[64 64]"}; !slices.Equal(values, want) {
		t.Errorf("partOrder sorts %v, want %v (by units, then layers)", values, want)
	}
}

// TestNetworkPlotsChangedParts: network.png has the hidden units, then a
// panel per part that changed (here the CNN's kernels); the parts that
// did not are listed for the legend.
func TestNetworkPlotsChangedParts(t *testing.T) {
	m := &evo.Metrics{}
	for g, net := range []string{"cnn[8 8] k[3 3] s[1 1] ReLU latent 32 head[32] ReLU", "cnn[8 8] k[3 2] s[1 1] ReLU latent 32 head[32] ReLU"} {
		m.Rows = append(m.Rows, evo.MetricsRow{Generation: g + 1, Agent: 0, Parent: -1, TotalSteps: float64(g + 1), Net: net})
	}
	plots, unchanged, _ := networkPlots(m, newSlotTable(m))
	if len(plots) != 2 || plots[1].Title.Text != "cnn kernels" {
		t.Errorf("%d panels, want hidden units and cnn kernels", len(plots))
	}
	want := []string{"unchanged:", "cnn channels [8 8]", "cnn strides [1 1]", "cnn activation ReLU", "latent size 32", "head widths [32]", "head activation ReLU"}
	if !slices.Equal(unchanged, want) {
		t.Errorf("unchanged %q, want %q", unchanged, want)
	}
}

// TestNetworkPlotsMemoryGene: in a run whose memory model is a gene, network.png has a
// panel of each slot's model, and the LSTM's and GRU's shared sizes are one part (a
// switch between the two changes the model, not the sizes).
func TestNetworkPlotsMemoryGene(t *testing.T) {
	m := &evo.Metrics{}
	for g, net := range []string{"lstm 1x32 latent 32 head[64] Tanh", "gru 1x32 latent 32 head[64] Tanh",
		"transformer 1x32 h4 f128 k8 latent 32 head[64] Tanh"} {
		m.Rows = append(m.Rows, evo.MetricsRow{Generation: g + 1, Agent: 0, Parent: -1, TotalSteps: float64(g + 1), Net: net})
	}
	plots, unchanged, _ := networkPlots(m, newSlotTable(m))
	var titles []string
	for _, p := range plots {
		titles = append(titles, p.Title.Text)
	}
	if want := []string{"hidden units: encoder + latent + head", "memory model"}; !slices.Equal(titles, want) {
		t.Errorf("panels %q, want %q", titles, want)
	}
	want := []string{"unchanged:", "lstm/gru layers×hidden 1×32", "latent size 32", "head widths [64]", "head activation Tanh",
		"transformer layers×width 1×32", "transformer heads 4", "transformer mlp 128", "transformer context 8"}
	if !slices.Equal(unchanged, want) {
		t.Errorf("unchanged %q, want %q", unchanged, want)
	}
}

// TestBandOf: seeds are compared where all have a value, at every x one
// of them has a point; the elite holds its value until the next
// generation (stepAt), the best of generation is interpolated (linearAt).
// Seeds ending within a generation of each other end together (each
// holds its last value to the latest end); seeds ending further apart are
// cut to the shortest.
func TestBandOf(t *testing.T) {
	a := plotter.XYs{{X: 1, Y: 1}, {X: 3, Y: 3}, {X: 5, Y: 5}}
	b := plotter.XYs{{X: 2, Y: 10}, {X: 4, Y: 20}, {X: 6, Y: 30}}
	s := bandOf([]plotter.XYs{a, b}, stepAt)
	want := seedBand{x: []float64{2, 3, 4, 5, 6}, mean: []float64{5.5, 6.5, 11.5, 12.5, 17.5}, lo: []float64{1, 3, 3, 5, 5}, hi: []float64{10, 10, 20, 20, 30}}
	if !slices.Equal(s.x, want.x) || !slices.Equal(s.mean, want.mean) || !slices.Equal(s.lo, want.lo) || !slices.Equal(s.hi, want.hi) {
		t.Errorf("stepAt band %+v,\nwant %+v", s, want)
	}
	l := bandOf([]plotter.XYs{a, b}, linearAt)
	if want := []float64{6, 9, 12, 15, 17.5}; !slices.Equal(l.mean, want) {
		t.Errorf("linearAt means %v, want %v", l.mean, want)
	}
	// b going on two generations after a's end: cut at a's end.
	long := append(slices.Clone(b), plotter.XY{X: 8, Y: 40})
	if c := bandOf([]plotter.XYs{a, long}, stepAt); c.x[len(c.x)-1] != 5 {
		t.Errorf("seeds ending two generations apart: band to %v, want to 5", c.x)
	}
	if e := bandOf([]plotter.XYs{{{X: 1, Y: 1}}, {{X: 2, Y: 2}}}, stepAt); len(e.x) != 0 {
		t.Errorf("seeds without a common stretch: band at %v, want none", e.x)
	}
}

// TestPlotWithoutStatsColumns: a metrics.csv without the PPO statistics'
// columns still gets its other charts, and a note instead of
// training.png.
func TestPlotWithoutStatsColumns(t *testing.T) {
	dir := writeRun(t, t.TempDir(), "generation,agent,parent,fitness,total_steps,grad_norm,lr,net\n"+
		"1,0,-1,10,512,1,0.001,mlp[16] ReLU latent 8 head[16] ReLU\n2,1,0,20,1024,1,0.002,mlp[32] ReLU latent 8 head[16] ReLU\n", "")
	code, _, errOut := evolve(context.Background(), "plot", dir)
	if code != exitOK || !strings.Contains(errOut, "no PPO statistics") {
		t.Fatalf("exit %d, stderr %q: want 0 and a note on training.png", code, errOut)
	}
	for _, name := range []string{"fitness.png", "hyperparameters.png", "network.png"} {
		checkPNG(t, filepath.Join(dir, "plots", name))
	}
	if _, err := os.Stat(filepath.Join(dir, "plots", "training.png")); err == nil {
		t.Errorf("training.png written without statistics")
	}
}

// TestTrainingFromEveryUpdate: training.png's panels draw every PPO update
// of each slot where the run wrote TensorBoard scalars, one line per slot.
func TestTrainingFromEveryUpdate(t *testing.T) {
	updates := map[string][]evo.Point{
		"slot_0/loss": {{Step: 10, Value: 3}, {Step: 20, Value: 2}, {Step: 30, Value: 1}},
		"slot_1/loss": {{Step: 10, Value: 4}, {Step: 20, Value: math.NaN()}},
	}
	if s := slotSeries(updates, "loss", 3); len(s) != 3 || len(s[0]) != 3 || len(s[1]) != 2 || s[2] != nil {
		t.Errorf("slotSeries: %v", s)
	}
	if s := slotSeries(updates, "entropy", 3); s != nil {
		t.Errorf("slotSeries of a stat without series: %v", s)
	}
	p := newPlot()
	plotUpdates(p, slotSeries(updates, "loss", 2), math.Inf(-1))
	if p.X.Min != 10 || p.X.Max != 30 || p.Y.Min != 1 || p.Y.Max != 4 {
		t.Errorf("per-update lines span x [%g, %g], y [%g, %g]; want [10, 30], [1, 4]", p.X.Min, p.X.Max, p.Y.Min, p.Y.Max)
	}
}

// TestPow2Ticks: powers of two labelled with their values, minor ticks
// between.
func TestPow2Ticks(t *testing.T) {
	var labels []string
	for _, tk := range (pow2Ticks{}).Ticks(60, 300) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if strings.Join(labels, " ") != "64 128 256" {
		t.Errorf("labels %v, want 64 128 256", labels)
	}
	if ts := (pow2Ticks{}).Ticks(70, 100); len(ts) < 2 {
		t.Errorf("inside one octave: %v", ts)
	}
}

// TestUpdateLRJoinsTheHyperparameters: where the KL-adaptive rate (or annealing) moved an
// agent's rate away from its lr, update_lr becomes a hyperparameter column that changed,
// for hyperparameters.png and -hp; where it never did, the columns stay as they are.
func TestUpdateLRJoinsTheHyperparameters(t *testing.T) {
	rows := func(update ...float64) *evo.Metrics {
		m := &evo.Metrics{HPNames: []string{"lr", "batch_size"}}
		for g, u := range update {
			m.Rows = append(m.Rows, evo.MetricsRow{Generation: g + 1, Parent: -1, TotalSteps: float64(g + 1), HP: []float64{3e-4, 64}, UpdateLR: u})
		}
		return m
	}
	m := rows(4e-4, 2e-4)
	addUpdateLR(m, false)
	addUpdateLR(m, true) // a second call adds nothing
	if !slices.Equal(m.HPNames, []string{"lr", "batch_size", "update_lr"}) || !slices.Equal(changedHPs(m), []int{2}) {
		t.Fatalf("columns %q, changed %v; want update_lr added and changed", m.HPNames, changedHPs(m))
	}
	if got := m.Rows[1].HP; !slices.Equal(got, []float64{3e-4, 64, 2e-4}) {
		t.Errorf("row 2 %v", got)
	}
	for _, u := range [][]float64{{3e-4, 3e-4}, {math.NaN(), math.NaN()}} {
		m := rows(u...)
		if addUpdateLR(m, false); len(m.HPNames) != 2 {
			t.Errorf("update_lr %v: columns %q, want lr and batch_size only", u, m.HPNames)
		}
	}
	// -hp update_lr charts the column also where it never left lr (the
	// docs say so), but not where the file has no such column.
	m = rows(3e-4, 3e-4)
	if addUpdateLR(m, true); len(m.HPNames) != 3 {
		t.Errorf("-hp update_lr on an unmoved rate: columns %q, want update_lr added", m.HPNames)
	}
	m = rows(math.NaN(), math.NaN())
	if addUpdateLR(m, true); len(m.HPNames) != 2 {
		t.Errorf("-hp update_lr without the column: columns %q, want none added", m.HPNames)
	}
}

// TestHPPlotScaleFollowsTheRange: a hyperparameter's axis is the scale of
// its [hp] range — the name's default (rnd_coef and kl_threshold are
// log-scaled, vf_coef linear) unless the range's scale key says otherwise.
func TestHPPlotScaleFollowsTheRange(t *testing.T) {
	m := &evo.Metrics{HPNames: []string{"rnd_coef", "kl_threshold", "vf_coef"}}
	for g := 1; g <= 3; g++ {
		for a := range 2 {
			v := float64(g*10 + a)
			m.Rows = append(m.Rows, evo.MetricsRow{Generation: g, Agent: a, Parent: -1, TotalSteps: float64(1000 * g),
				HP: []float64{0.25 * v, 0.001 * v, 0.05 * v}})
		}
	}
	st := newSlotTable(m)
	for _, tc := range []struct {
		scales map[string]string
		i      int
		log    bool
	}{
		{nil, 0, true},
		{nil, 1, true},
		{nil, 2, false},
		{map[string]string{"vf_coef": evo.ScaleLog}, 2, true},
		{map[string]string{"rnd_coef": evo.ScaleLinear}, 0, false},
	} {
		p := hpPlot(m, st, tc.i, runConfig{hpScales: tc.scales})
		if got := strings.Contains(p.Title.Text, "log scale"); got != tc.log {
			t.Errorf("%s with scales %v: title %q, want log scale %v", m.HPNames[tc.i], tc.scales, p.Title.Text, tc.log)
		}
	}
}

// TestClipUpdates: TensorBoard's per-update scalars past metrics.csv's last
// generation (one whose row was cut) are left out of training.png, so every
// chart of the run spans the same steps; scalars ending a generation or more
// early (a damaged event file) are said to.
func TestClipUpdates(t *testing.T) {
	m := &evo.Metrics{Rows: []evo.MetricsRow{{Generation: 1, TotalSteps: 100}, {Generation: 2, TotalSteps: 200}, {Generation: 3, TotalSteps: 300}}}
	pts := func(steps ...int64) []evo.Point {
		var p []evo.Point
		for _, s := range steps {
			p = append(p, evo.Point{Step: s, Value: 1})
		}
		return p
	}
	var stderr strings.Builder
	u := map[string][]evo.Point{"slot_0/loss": pts(50, 100, 250, 300, 350, 400)}
	clipUpdates(&stderr, u, m)
	if got := len(u["slot_0/loss"]); got != 4 || stderr.Len() != 0 {
		t.Errorf("kept %d points (want 4, to step 300), stderr %q", got, stderr.String())
	}
	u = map[string][]evo.Point{"slot_0/loss": pts(50, 100, 150)}
	clipUpdates(&stderr, u, m)
	if !strings.Contains(stderr.String(), "end at 150 env steps, metrics.csv at 300") {
		t.Errorf("stderr %q, want a note that TensorBoard ends early", stderr.String())
	}
}

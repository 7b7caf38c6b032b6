package cli

import (
	"context"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
)

// checkPNG decodes path and checks that it is a chart-sized image.
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
	if b := img.Bounds(); b.Dx() < 600 || b.Dy() < 300 || b.Dx() > 2000 || b.Dy() > 4000 {
		t.Errorf("%s: %v, want a chart of about 960×540", path, b)
	}
}

func TestPlotTinyRun(t *testing.T) {
	_, dir := trainTiny(t, 1024)
	code, out, errOut := evolve(context.Background(), "plot", dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, name := range []string{"fitness.png", "network.png"} {
		p := filepath.Join(dir, "plots", name)
		checkPNG(t, p)
		if !strings.Contains(out, p) {
			t.Errorf("stdout does not list %s:\n%s", p, out)
		}
	}
	// The tiny run's hyperparameters never change: no chart, and a note.
	if _, err := os.Stat(filepath.Join(dir, "plots", "hyperparameters.png")); err == nil || !strings.Contains(errOut, "no hyperparameter changed") {
		t.Errorf("hyperparameters.png written for constant hyperparameters (stderr %q)", errOut)
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
	for _, name := range []string{"fitness.png", "hyperparameters.png", "network.png"} {
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
		{"no argument", nil, "want one run directory"},
		{"missing directory", []string{filepath.Join(dir, "nope")}, "nope"},
		{"no metrics.csv", []string{runDir("empty", "")}, "metrics.csv"},
		{"empty metrics.csv", []string{runDir("zero", "\n")}, "metrics.csv: empty file"},
		{"header only", []string{runDir("header", header)}, "metrics.csv: no rows"},
		{"foreign CSV", []string{runDir("foreign", "a,b\n1,2\n")}, `no column "generation"`},
		{"ragged row", []string{runDir("ragged", header+"1,0,-1\n")}, "metrics.csv"},
		{"bad number", []string{runDir("number", strings.Replace(syntheticMetrics, "0.0003,64", "fast,64", 1))}, `metrics.csv: line 2: column lr: "fast"`},
		{"unknown flag", []string{"-x", runDir("flag", syntheticMetrics)}, "-x"},
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

// TestLineageShift: founders' lines are shifted apart on the page, centred
// on the data, never by more than 9 points in all.
func TestLineageShift(t *testing.T) {
	if d := lineageShift(0, 1); d != 0 {
		t.Errorf("one founder shifted by %v", d)
	}
	for _, n := range []int{2, 3, 16} {
		first, last := lineageShift(0, n), lineageShift(n-1, n)
		if first >= last || math.Abs(float64(first+last)) > 1e-9 || last-first > vg.Points(9)+1e-9 {
			t.Errorf("%d founders: shifts %v … %v; want distinct, centred on 0, at most 9 points apart", n, first, last)
		}
	}
}

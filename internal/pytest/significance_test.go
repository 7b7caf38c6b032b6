package pytest

import (
	"encoding/json"
	"math"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// significance runs prog with python/evolve_significance.py imported as s
// and the JSON of arg in the variable a, and decodes the JSON prog prints
// into v.
func significance(t *testing.T, python, prog string, arg, v any) {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "python"))
	if err != nil {
		t.Fatal(err)
	}
	in, err := json.Marshal(arg)
	if err != nil {
		t.Fatal(err)
	}
	head := "import sys, json; sys.path.insert(0, sys.argv[1]); import evolve_significance as s; a = json.loads(sys.argv[2])\n"
	out, err := exec.Command(python, "-c", head+prog, dir, string(in)).Output()
	if err != nil {
		var stderr string
		if e, ok := err.(*exec.ExitError); ok {
			stderr = string(e.Stderr)
		}
		t.Fatalf("evolve_significance: %v\n%s", err, stderr)
	}
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("evolve_significance: %v in %q", err, out)
	}
}

// near reports whether got is within rel of want (relative to max(1, |want|)).
func near(got, want, rel float64) bool {
	return math.Abs(got-want) <= rel*math.Max(1, math.Abs(want))
}

// TestStudentsTAgainstGonum holds the script's two-sided Student's t tail
// and its quantile to gonum's distuv.StudentsT over the degrees of freedom
// Welch's test meets with 2 to 5 seeds a side (fractional ones included)
// and beyond, and to printed tables' two-sided 5 % critical values.
func TestStudentsTAgainstGonum(t *testing.T) {
	python := tomlPython(t)
	dfs := []float64{1, 1.7, 2, 2.4, 3.5, 4, 7.4, 8, 30, 200}
	ts := []float64{0, 0.1, 0.5, 1, 1.96, 2.5, 4, 10, 40}
	ps := []float64{0.5, 0.9, 0.975, 0.999}
	var got struct{ SF, Q [][]float64 }
	significance(t, python, "print(json.dumps({'SF': [[s.t_sf2(x, d) for x in a['ts']] for d in a['dfs']],"+
		" 'Q': [[s.t_quantile(p, d) for p in a['ps']] for d in a['dfs']]}))",
		map[string][]float64{"dfs": dfs, "ts": ts, "ps": ps}, &got)
	for i, df := range dfs {
		dist := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
		for j, x := range ts {
			if want := 2 * dist.Survival(x); !near(got.SF[i][j], want, 1e-10) {
				t.Errorf("P(|T| > %g), df %g: %.15g, gonum %.15g", x, df, got.SF[i][j], want)
			}
		}
		for j, p := range ps {
			if want := dist.Quantile(p); !near(got.Q[i][j], want, 1e-8) {
				t.Errorf("quantile %g, df %g: %.12g, gonum %.12g", p, df, got.Q[i][j], want)
			}
		}
	}
	// Printed t tables' two-sided 5 % points for 1, 4 and 10 degrees of freedom.
	table := [][2]float64{{1, 12.706}, {4, 2.776}, {10, 2.228}}
	var q []float64
	significance(t, python, "print(json.dumps([s.t_quantile(0.975, r[0]) for r in a]))", table, &q)
	for i, c := range table {
		if math.Abs(q[i]-c[1]) > 5e-4 {
			t.Errorf("t(0.975, %g) = %.4f, the table's %.3f", c[0], q[i], c[1])
		}
	}
}

// TestWelchAgainstGonum computes Welch's test in Go from gonum's moments
// and t distribution and holds the script's difference, interval, t,
// degrees of freedom and p to it, on seeds like the benchmarks' (5 against
// 3, unequal spreads), and checks samples without spread.
func TestWelchAgainstGonum(t *testing.T) {
	python := tomlPython(t)
	xs := []float64{-159.4, -155.7, -152.6, -173.8, -143.0}
	ys := []float64{-216.4, -159.5, -159.9}
	var got []float64
	significance(t, python, "d, ci, t, df, p = s.welch(a[0], a[1]); print(json.dumps([d, ci[0], ci[1], t, df, p]))",
		[][]float64{xs, ys}, &got)
	mx, vx := stat.MeanVariance(xs, nil)
	my, vy := stat.MeanVariance(ys, nil)
	sx, sy := vx/float64(len(xs)), vy/float64(len(ys))
	se := math.Sqrt(sx + sy)
	df := (sx + sy) * (sx + sy) / (sx*sx/float64(len(xs)-1) + sy*sy/float64(len(ys)-1))
	dist := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
	tv := (mx - my) / se
	half := dist.Quantile(0.975) * se
	want := []float64{mx - my, mx - my - half, mx - my + half, tv, df, 2 * dist.Survival(math.Abs(tv))}
	for i, name := range []string{"difference", "interval low", "interval high", "t", "df", "p"} {
		if !near(got[i], want[i], 1e-8) {
			t.Errorf("%s: %.12g, gonum %.12g", name, got[i], want[i])
		}
	}
	// Without spread: equal means are no difference (p 1), unequal ones certain (p 0).
	var flat []float64
	significance(t, python, "print(json.dumps([s.welch([500.0]*5, [500.0]*3)[4], s.welch([500.0]*5, [499.0]*3)[4]]))", nil, &flat)
	if flat[0] != 1 || flat[1] != 0 {
		t.Errorf("p without spread: %v, want [1 0]", flat)
	}
}

// TestPairedAgainstGonum holds the script's paired t-test to one computed
// in Go from gonum's moments and t distribution, and its exact Wilcoxon
// signed-rank p to a count over every sign assignment made here (ties and
// zeros included), and to the textbook value for 8 positive differences
// (2/2⁸).
func TestPairedAgainstGonum(t *testing.T) {
	python := tomlPython(t)
	xs := []float64{-64.1, -66.0, -63.2, -65.9, -62.8, -67.5, -63.0, -66.4, -61.9, -65.9}
	ys := []float64{-66.0, -66.4, -70.2, -64.1, -64.0, -71.8, -62.9, -69.3, -63.3, -82.4}
	var got []float64
	significance(t, python, "d, ci, t, df, p = s.paired(a[0], a[1]); print(json.dumps([d, ci[0], ci[1], t, df, p, s.wilcoxon(a[0], a[1])]))",
		[][]float64{xs, ys}, &got)
	d := make([]float64, len(xs))
	for i := range xs {
		d[i] = xs[i] - ys[i]
	}
	mean, v := stat.MeanVariance(d, nil)
	se := math.Sqrt(v / float64(len(d)))
	dist := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(d) - 1)}
	half := dist.Quantile(0.975) * se
	want := []float64{mean, mean - half, mean + half, mean / se, float64(len(d) - 1), 2 * dist.Survival(math.Abs(mean/se)), wilcoxonByCount(xs, ys)}
	for i, name := range []string{"difference", "interval low", "interval high", "t", "df", "p", "Wilcoxon p"} {
		if !near(got[i], want[i], 1e-8) {
			t.Errorf("%s: %.12g, want %.12g", name, got[i], want[i])
		}
	}
	cases := [][2][]float64{
		{{1, 2, 3, 4, 5, 6, 7, 8}, make([]float64, 8)}, // all ahead: 2/2⁸
		{{1, -1, 2, 2, 3, 0}, {0, 0, 1, 0, 0, 0}},      // a tie of magnitudes and a zero
		{{1, -1}, {0, 0}}, // symmetric: 1
	}
	var ws []float64
	significance(t, python, "print(json.dumps([s.wilcoxon(x, y) for x, y in a]))", cases, &ws)
	for i, c := range cases {
		if w := wilcoxonByCount(c[0], c[1]); !near(ws[i], w, 1e-12) {
			t.Errorf("Wilcoxon of %v - %v: %v, counted here %v", c[0], c[1], ws[i], w)
		}
	}
	if !near(ws[0], 2.0/256, 1e-12) {
		t.Errorf("Wilcoxon of 8 positive differences: %v, want 2/256", ws[0])
	}
}

// wilcoxonByCount is the exact two-sided Wilcoxon signed-rank p counted over
// every one of the 2ⁿ sign assignments of the nonzero differences' mean
// ranks.
func wilcoxonByCount(xs, ys []float64) float64 {
	var d []float64
	for i := range xs {
		if xs[i] != ys[i] {
			d = append(d, xs[i]-ys[i])
		}
	}
	if len(d) == 0 {
		return 1
	}
	rank := make([]float64, len(d))
	for i := range d {
		below, same := 0, 0
		for j := range d {
			switch {
			case math.Abs(d[j]) < math.Abs(d[i]):
				below++
			case math.Abs(d[j]) == math.Abs(d[i]):
				same++
			}
		}
		rank[i] = float64(below) + float64(same+1)/2
	}
	w, total := 0.0, 0.0
	for i := range d {
		total += rank[i]
		if d[i] > 0 {
			w += rank[i]
		}
	}
	mid, extreme := total/2, 0
	for signs := 0; signs < 1<<len(d); signs++ {
		s := 0.0
		for i := range d {
			if signs&(1<<i) != 0 {
				s += rank[i]
			}
		}
		if math.Abs(s-mid) >= math.Abs(w-mid)-1e-9 {
			extreme++
		}
	}
	return math.Min(1, float64(extreme)/float64(int(1)<<len(d)))
}

// TestSplitMethods: -methods names methods whose labels hold commas (an
// imported method's, "fixed (kl off, clipped loss)") beside plain ones.
func TestSplitMethods(t *testing.T) {
	python := tomlPython(t)
	known := []string{"pb2", "fixed", "fixed (kl off, clipped loss)", "a,b", "a"}
	cases := map[string][]string{
		"pb2,fixed (kl off, clipped loss)":   {"pb2", "fixed (kl off, clipped loss)"},
		"fixed (kl off, clipped loss),pb2,,": {"fixed (kl off, clipped loss)", "pb2"},
		"a,b,a":                              {"a,b", "a"},
		"fixed (kl off,pb2":                  {"fixed (kl off", "pb2"},
		"":                                   {},
	}
	for text, want := range cases {
		var got []string
		significance(t, python, "print(json.dumps(s.split_methods(a[0], set(a[1]))))", []any{text, known}, &got)
		if len(got) != len(want) || !slices.Equal(got, want) {
			t.Errorf("split_methods(%q) = %q, want %q", text, got, want)
		}
	}
}

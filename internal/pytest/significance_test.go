package pytest

import (
	"encoding/json"
	"math"
	"os/exec"
	"path/filepath"
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

package agent

import (
	"math"
	"testing"
)

// TestAdamMatchesHandComputedSteps checks two steps against the update rule
// written out by hand (PyTorch's Adam with bias correction).
func TestAdamMatchesHandComputedSteps(t *testing.T) {
	p := [][]float32{{1, -2}}
	a := NewAdam(0.1, []int{2})
	grads := [][]float32{{0.5, -4}}
	a.Update(p, grads)
	// Step 1: m̂ = g and v̂ = g², so p −= lr·g/(|g| + ε).
	want := []float64{1 - 0.1*0.5/(0.5+1e-5), -2 + 0.1*4/(4+1e-5)}
	for i := range want {
		if math.Abs(float64(p[0][i])-want[i]) > 1e-6 {
			t.Fatalf("step 1: p = %v, want %v", p[0], want)
		}
	}
	grads = [][]float32{{1, 0}}
	a.Update(p, grads)
	for i, g2 := range []float64{1, 0} {
		g1 := []float64{0.5, -4}[i]
		m := 0.9*0.1*g1 + 0.1*g2
		v := 0.999*0.001*g1*g1 + 0.001*g2*g2
		mhat, vhat := m/(1-0.81), v/(1-0.999*0.999)
		w := want[i] - 0.1*mhat/(math.Sqrt(vhat)+1e-5)
		if math.Abs(float64(p[0][i])-w) > 1e-6 {
			t.Fatalf("step 2, element %d: p = %v, want %v", i, p[0][i], w)
		}
	}
}

func TestAdamFlushesSubnormalMoments(t *testing.T) {
	p := [][]float32{{0}}
	a := NewAdam(1e-3, []int{1})
	a.Update(p, [][]float32{{1e-3}})
	for range 100000 {
		a.Update(p, [][]float32{{0}})
		for _, x := range []float32{a.M[0][0], a.V[0][0]} {
			if x != 0 && math.Abs(float64(x)) < smallestNormal32 {
				t.Fatalf("moment %g is subnormal after %d steps", x, a.Step)
			}
		}
	}
	if a.M[0][0] != 0 || a.V[0][0] != 0 {
		t.Fatalf("moments %v, %v did not decay to zero", a.M[0][0], a.V[0][0])
	}
}

func TestClipGradNormIsGlobal(t *testing.T) {
	g := [][]float32{{3}, {4}} // global norm 5
	if n := clipGradNorm(g, 0.5); math.Abs(n-5) > 1e-12 {
		t.Fatalf("norm before clipping %v, want 5", n)
	}
	if math.Abs(float64(g[0][0])-0.3) > 1e-6 || math.Abs(float64(g[1][0])-0.4) > 1e-6 {
		t.Fatalf("clipped gradients %v, want [0.3] [0.4] (one scale for all tensors)", g)
	}
	small := [][]float32{{0.1}}
	clipGradNorm(small, 0.5)
	if small[0][0] != 0.1 {
		t.Fatalf("a norm below the limit was scaled: %v", small)
	}
}

func TestRunningNormMatchesBatchStatistics(t *testing.T) {
	r := NewRunningNorm(2)
	var all [][2]float64
	for b := range 5 {
		batch := make([]float32, 0, 16)
		for k := range 8 {
			x, y := float64(b*8+k), float64((b*8+k)%3)*10
			all = append(all, [2]float64{x, y})
			batch = append(batch, float32(x), float32(y))
		}
		r.Update(batch)
	}
	for i := range 2 {
		mean, v := 0.0, 0.0
		for _, row := range all {
			mean += row[i]
		}
		mean /= float64(len(all))
		for _, row := range all {
			v += (row[i] - mean) * (row[i] - mean)
		}
		v /= float64(len(all))
		if math.Abs(r.Mean[i]-mean) > 1e-3*math.Max(1, math.Abs(mean)) || math.Abs(r.Var[i]-v) > 1e-3*v {
			t.Fatalf("dim %d: running mean/var %v/%v, batch %v/%v", i, r.Mean[i], r.Var[i], mean, v)
		}
	}
	out := make([]float32, 2)
	r.Normalize(out, []float32{float32(r.Mean[0]), 1e9})
	if math.Abs(float64(out[0])) > 1e-6 || out[1] != obsClip {
		t.Fatalf("normalised %v, want [0 %v]", out, obsClip)
	}
}

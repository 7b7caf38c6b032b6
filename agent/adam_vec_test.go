package agent

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/evolverl/evolve/internal/simd"
)

// TestAdamVectorMatchesScalar checks that the vector kernel leaves
// parameters and moments bit for bit as the scalar loop does, over several steps, for tensors
// of every length modulo 4, gradients of many magnitudes (zeros and tiny
// ones, whose moments are flushed) and a changing learning rate.
func TestAdamVectorMatchesScalar(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	sizes := []int{1, 2, 3, 4, 5, 7, 8, 64, 129, 4096}
	ref, vec := NewAdam(3e-4, sizes), NewAdam(3e-4, sizes)
	var pr, pv [][]float32
	for _, n := range sizes {
		p := make([]float32, n)
		for i := range p {
			p[i] = float32(rng.NormFloat64())
		}
		pr, pv = append(pr, p), append(pv, slices.Clone(p))
	}
	for s := range 30 {
		var gr, gv [][]float32
		for _, n := range sizes {
			g := make([]float32, n)
			for i := range g {
				switch rng.IntN(6) {
				case 0: // stays 0: its moments decay
				case 1: // (1−β1)·g is below float32's smallest normal: m is flushed
					g[i] = float32(rng.NormFloat64() * 1e-37)
				case 2: // (1−β2)·g² is: v is flushed
					g[i] = float32(rng.NormFloat64() * 1e-20)
				default:
					g[i] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(8)-6)))
				}
			}
			gr, gv = append(gr, g), append(gv, slices.Clone(g))
		}
		ref.LR, vec.LR = 3e-4*float64(30-s)/30, 3e-4*float64(30-s)/30
		ref.update(pr, gr, false)
		vec.update(pv, gv, simd.HasAVX2FMA)
		for k := range sizes {
			for i := range pr[k] {
				if math.Float32bits(pr[k][i]) != math.Float32bits(pv[k][i]) ||
					math.Float32bits(ref.M[k][i]) != math.Float32bits(vec.M[k][i]) ||
					math.Float32bits(ref.V[k][i]) != math.Float32bits(vec.V[k][i]) {
					t.Fatalf("step %d, tensor %d [%d]: p %v/%v m %v/%v v %v/%v (scalar/vector)", s, k, i,
						pr[k][i], pv[k][i], ref.M[k][i], vec.M[k][i], ref.V[k][i], vec.V[k][i])
				}
			}
		}
	}
	if ref.Step != vec.Step {
		t.Fatalf("step counts %d and %d", ref.Step, vec.Step)
	}
}

func BenchmarkAdam(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	// The default CartPole agent's tensors.
	sizes := []int{256, 64, 4096, 64, 2048, 32, 2048, 64, 128, 2, 256, 64, 4096, 64, 2048, 32, 2048, 64, 64, 1}
	var ps, gs [][]float32
	for _, n := range sizes {
		p, g := make([]float32, n), make([]float32, n)
		for i := range p {
			p[i], g[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64()*0.01)
		}
		ps, gs = append(ps, p), append(gs, g)
	}
	b.Run("scalar", func(b *testing.B) {
		a := NewAdam(3e-4, sizes)
		for b.Loop() {
			a.update(ps, gs, false)
		}
	})
	b.Run("vector", func(b *testing.B) {
		a := NewAdam(3e-4, sizes)
		for b.Loop() {
			a.update(ps, gs, simd.HasAVX2FMA)
		}
	})
}

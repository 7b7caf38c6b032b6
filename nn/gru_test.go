package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// gruRandomWeights returns weights uniform in ±scale.
func gruRandomWeights(rng *rand.Rand, in, hidden int, scale float64) GRUWeights {
	var w GRUWeights
	fillGates(w.Wih[:], w.Whh[:], w.Bih[:], w.Bhh[:], in, hidden, uniform(rng, scale))
	return w
}

// gruZeroWeights returns zeroed weights of the layer's shapes, for gradients.
func gruZeroWeights(in, hidden int) GRUWeights {
	var w GRUWeights
	fillGates(w.Wih[:], w.Whh[:], w.Bih[:], w.Bhh[:], in, hidden, zeros)
	return w
}

// gruTensors lists the 12 tensors of w gate by gate: Wih, Whh, Bih, Bhh.
func gruTensors(w GRUWeights) (names []string, ts [][]float32) {
	for q, gate := range "rzn" {
		names = append(names, fmt.Sprintf("w_ih.%c", gate), fmt.Sprintf("w_hh.%c", gate), fmt.Sprintf("b_ih.%c", gate), fmt.Sprintf("b_hh.%c", gate))
		ts = append(ts, w.Wih[q], w.Whh[q], w.Bih[q], w.Bhh[q])
	}
	return names, ts
}

// gruForward64 is a naive float64 GRU written from PyTorch's equations, the reference of the
// gradient test: w holds the 12 tensors in gruTensors' order, in our [in, out] layout.
func gruForward64(w [][]float64, in, hidden int, x []float64, steps, batch int, h0, starts []float64) []float64 {
	H := hidden
	h := append([]float64(nil), h0...)
	y := make([]float64, steps*batch*H)
	xi, hh := make([]float64, 3*H), make([]float64, 3*H)
	sigmoid := func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }
	for t := range steps {
		for b := range batch {
			r := t*batch + b
			hb := h[b*H : (b+1)*H]
			if starts[r] != 0 {
				clear(hb)
			}
			for q := range 3 {
				wih, whh, bih, bhh := w[4*q], w[4*q+1], w[4*q+2], w[4*q+3]
				for j := range H {
					si, sh := bih[j], bhh[j]
					for k := range in {
						si += x[r*in+k] * wih[k*H+j]
					}
					for k := range H {
						sh += hb[k] * whh[k*H+j]
					}
					xi[q*H+j], hh[q*H+j] = si, sh
				}
			}
			for j := range H {
				rg, zg := sigmoid(xi[j]+hh[j]), sigmoid(xi[H+j]+hh[H+j])
				n := math.Tanh(xi[2*H+j] + rg*hh[2*H+j])
				hb[j] = (1-zg)*n + zg*hb[j]
				y[r*H+j] = hb[j]
			}
		}
	}
	return y
}

// gruFromTorch returns layer's tensors of a reference in our layout; tensor is the
// reference's param or grad.
func gruFromTorch(t *testing.T, tensor func(*testing.T, string) refTensor, layer int) GRUWeights {
	t.Helper()
	var w GRUWeights
	for q, gate := range "rzn" {
		get := func(kind string) []float32 {
			return tensor(t, fmt.Sprintf("gru.%d.%s.%c", layer, kind, gate)).ourLayout()
		}
		w.Wih[q], w.Whh[q], w.Bih[q], w.Bhh[q] = get("w_ih"), get("w_hh"), get("b_ih"), get("b_hh")
	}
	return w
}

// TestGRUMatchesPyTorch runs torch.nn.GRU's references of testdata (gen_gru.py; float64,
// input 5, hidden 8, 6 steps, batch 3, resets and a nonzero initial state, one and two
// layers) as a stack of GRULayers and checks the top layer's output, every parameter's
// gradient of loss = Σ y·R and the gradient of x within 1e-5 of each tensor's largest
// magnitude: gate order, where r multiplies (after Whn·h + bhn, as PyTorch has it), reset
// semantics and the backward pass through time.
func TestGRUMatchesPyTorch(t *testing.T) {
	for _, name := range []string{"gru_1layer.json", "gru_2layer.json"} {
		t.Run(name, func(t *testing.T) {
			ref := loadOwnRefNet(t, name)
			sz := ref.Sizes
			H, steps, batch, layers := sz.Hidden, sz.Steps, sz.Batch, sz.Layers
			rows := steps * batch
			x, starts, h0 := ref.X.float32s(), ref.Starts.float32s(), ref.H0.float32s()
			ls := make([]*GRULayer, layers)
			ws, gs := make([]GRUWeights, layers), make([]GRUWeights, layers)
			ys := make([][]float32, layers)
			in := sz.Input
			for k := range layers {
				ls[k], ws[k], gs[k] = NewGRULayer(in, H), gruFromTorch(t, ref.param, k), gruZeroWeights(in, H)
				ys[k] = make([]float32, rows*H)
				in = H
			}
			input := x
			for k, l := range ls {
				l.Forward(ys[k], input, steps, batch, h0[k*batch*H:(k+1)*batch*H], starts, nil, ws[k])
				input = ys[k]
			}
			checkClose(t, "y", ys[layers-1], ref.Y.Data, 1e-5, smallScaleFloor)
			dy := ref.R.float32s()
			for k := layers - 1; k >= 0; k-- {
				in, dx := x, make([]float32, rows*ls[k].In)
				if k > 0 {
					in = ys[k-1]
				}
				ls[k].Backward(dx, dy, in, ws[k], gs[k])
				dy = dx
			}
			checkClose(t, "dx", dy, ref.GradX.Data, 1e-5, smallScaleFloor)
			for k := range layers {
				names, got := gruTensors(gs[k])
				_, want := gruTensors(gruFromTorch(t, ref.grad, k))
				for i, n := range names {
					checkClose(t, fmt.Sprintf("gru.%d.%s gradient", k, n), got[i], float64s(want[i]), 1e-5, smallScaleFloor)
				}
			}
		})
	}
}

// TestGRUGradientsMatchFiniteDifferences checks y against a naive float64 GRU and every
// gradient of loss = Σ y·R (each weight tensor and x) against that GRU's central
// differences, with resets inside the sequences, a nonzero initial state and dirty buffers;
// gradients are added to nonzero g, and Backward with dx nil gives the same weight gradients
// bit for bit. The sizes cover the kernels' scalar tail, 8-column blocks and a 64-column one.
func TestGRUGradientsMatchFiniteDifferences(t *testing.T) {
	cases := []struct {
		name                     string
		in, hidden, steps, batch int
		sample                   int // entries checked per tensor, 0 for all
	}{
		{"in3-h5", 3, 5, 6, 3, 0},
		{"in10-h17", 10, 17, 5, 2, 0},
		{"in9-h72", 9, 72, 4, 2, 30},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(13, uint64(tc.hidden)))
			in, H, steps, batch := tc.in, tc.hidden, tc.steps, tc.batch
			rows := steps * batch
			w := gruRandomWeights(rng, in, H, 2/math.Sqrt(float64(H)))
			x, h0 := randomInput(rng, rows*in), randomInput(rng, batch*H)
			starts := lstmStarts(rng, rows)
			starts[batch] = 1 // at least one reset inside a sequence
			R := randomInput(rng, rows*H)

			l := NewGRULayer(in, H)
			y := make([]float32, rows*H)
			l.Forward(y, randomInput(rng, rows*in), steps, batch, randomInput(rng, batch*H), nil, nil, w)
			l.Forward(y, x, steps, batch, h0, starts, nil, w)
			g := gruRandomWeights(rng, in, H, 0.25)
			_, g0 := gruTensors(g)
			g0 = lstmClone(g0)
			dx := make([]float32, rows*in)
			l.Backward(dx, R, x, w, g)

			names, ws := gruTensors(w)
			w64 := make([][]float64, len(ws))
			for i, v := range ws {
				w64[i] = float64s(v)
			}
			x64, R64, h064, s64 := float64s(x), float64s(R), float64s(h0), float64s(starts)
			forward := func() []float64 { return gruForward64(w64, in, H, x64, steps, batch, h064, s64) }
			checkClose(t, "y", y, forward(), 1e-5, smallScaleFloor)
			loss := func() float64 {
				s := 0.0
				for i, v := range forward() {
					s += v * R64[i]
				}
				return s
			}
			_, gs := gruTensors(g)
			for i, name := range names {
				grad := make([]float32, len(gs[i]))
				for k := range grad {
					grad[k] = gs[i][k] - g0[i][k]
				}
				checkCentralDifferences(t, rng, "d"+name, w64[i], grad, tc.sample, loss)
			}
			checkCentralDifferences(t, rng, "dx", x64, dx, tc.sample, loss)

			var g2 GRUWeights
			for q := range 3 {
				g2.Wih[q], g2.Whh[q], g2.Bih[q], g2.Bhh[q] = g0[4*q], g0[4*q+1], g0[4*q+2], g0[4*q+3]
			}
			l.Backward(nil, R, x, w, g2)
			_, g2s := gruTensors(g2)
			for i, name := range names {
				requireSameBits(t, "d"+name+" with dx nil", g2s[i], gs[i])
			}
		})
	}
}

// checkCentralDifferences checks got, the gradient of loss with respect to v, against
// float64 central differences (step 1e-6, error ~1e-10) at every entry of v, or at sample
// entries drawn from rng when sample > 0.
func checkCentralDifferences(t *testing.T, rng *rand.Rand, name string, v []float64, got []float32, sample int, loss func() float64) {
	t.Helper()
	const eps = 1e-6
	idx := make([]int, 0, len(v))
	if sample == 0 || sample >= len(v) {
		for i := range v {
			idx = append(idx, i)
		}
	} else {
		for range sample {
			idx = append(idx, rng.IntN(len(v)))
		}
	}
	sub, want := make([]float32, len(idx)), make([]float64, len(idx))
	for k, i := range idx {
		old := v[i]
		v[i] = old + eps
		lp := loss()
		v[i] = old - eps
		lm := loss()
		v[i] = old
		sub[k], want[k] = got[i], (lp-lm)/(2*eps)
	}
	checkClose(t, name, sub, want, 1e-5, smallScaleFloor)
}

// TestGRURowsDoNotDependOnStepsOrBatch checks that a sequence's outputs and final state are
// bit for bit the same whether the layer runs all steps in one call, one step at a time
// feeding the final state back (the acting loop; hT aliases h0), or each sequence alone:
// acting and training must agree exactly. A nil initial state must equal a zero one.
func TestGRURowsDoNotDependOnStepsOrBatch(t *testing.T) {
	for _, sz := range []struct{ in, hidden int }{{2, 64}, {7, 13}, {16, 96}} {
		t.Run(fmt.Sprintf("in%d-h%d", sz.in, sz.hidden), func(t *testing.T) {
			const steps, batch = 9, 5
			in, H := sz.in, sz.hidden
			rows := steps * batch
			rng := rand.New(rand.NewPCG(17, uint64(H)))
			w := gruRandomWeights(rng, in, H, 1.5/math.Sqrt(float64(H)))
			x, h0 := randomInput(rng, rows*in), randomInput(rng, batch*H)
			starts := lstmStarts(rng, rows)

			l := NewGRULayer(in, H)
			y, hT := make([]float32, rows*H), make([]float32, batch*H)
			l.Forward(y, x, steps, batch, h0, starts, hT, w)

			h, yt := append([]float32(nil), h0...), make([]float32, batch*H)
			for tt := range steps {
				l.Forward(yt, x[tt*batch*in:(tt+1)*batch*in], 1, batch, h, starts[tt*batch:(tt+1)*batch], h, w)
				requireSameBits(t, fmt.Sprintf("step %d alone: y", tt), yt, y[tt*batch*H:(tt+1)*batch*H])
			}
			requireSameBits(t, "step by step: hT", h, hT)

			xs, ss := make([]float32, steps*in), make([]float32, steps)
			ys, hs := make([]float32, steps*H), make([]float32, H)
			for b := range batch {
				for tt := range steps {
					copy(xs[tt*in:(tt+1)*in], x[(tt*batch+b)*in:])
					ss[tt] = starts[tt*batch+b]
				}
				l.Forward(ys, xs, steps, 1, h0[b*H:(b+1)*H], ss, hs, w)
				for tt := range steps {
					requireSameBits(t, fmt.Sprintf("sequence %d alone, step %d: y", b, tt), ys[tt*H:(tt+1)*H], y[(tt*batch+b)*H:(tt*batch+b+1)*H])
				}
				requireSameBits(t, fmt.Sprintf("sequence %d alone: hT", b), hs, hT[b*H:(b+1)*H])
			}

			yz, yn := make([]float32, rows*H), make([]float32, rows*H)
			l.Forward(yz, x, steps, batch, make([]float32, batch*H), starts, nil, w)
			l.Forward(yn, x, steps, batch, nil, starts, nil, w)
			requireSameBits(t, "nil initial state: y", yn, yz)
		})
	}
}

// gruBatch is what the allocation test and the benchmark run (see lstmBatch).
type gruBatch struct {
	l                    *GRULayer
	w, g                 GRUWeights
	x, dy, starts, y, dx []float32
	h                    []float32
}

func newGRUBatch(rng *rand.Rand, in, H, steps, batch int) *gruBatch {
	rows := steps * batch
	s := &gruBatch{l: NewGRULayer(in, H)}
	s.w, s.g = gruRandomWeights(rng, in, H, 0.2), gruZeroWeights(in, H)
	s.x, s.dy = randomInput(rng, rows*in), randomInput(rng, rows*H)
	s.starts = lstmStarts(rng, rows)
	s.y, s.dx, s.h = make([]float32, rows*H), make([]float32, rows*in), make([]float32, batch*H)
	return s
}

// TestGRUNoAllocations checks that training (forward and backward on 256 rows) and acting
// (one step of 8 sequences) allocate nothing once the buffers have grown.
func TestGRUNoAllocations(t *testing.T) {
	const steps, batch = 32, 8
	s := newGRUBatch(rand.New(rand.NewPCG(5, 6)), 2, 64, steps, batch)
	run := func() {
		s.l.Forward(s.y, s.x, steps, batch, s.h, s.starts, nil, s.w)
		s.l.Backward(s.dx, s.dy, s.x, s.w, s.g)
		s.l.Backward(nil, s.dy, s.x, s.w, s.g)
		s.l.Forward(s.y, s.x, 1, batch, s.h, s.starts, s.h, s.w)
	}
	run()
	if n := testing.AllocsPerRun(20, run); n != 0 {
		t.Fatalf("%v allocations per run, want 0", n)
	}
}

// BenchmarkGRULayer measures acting (one step of 8 sequences) and training (32 steps of 8
// sequences, forward and backward with dx) for a CartPole-sized layer (2 inputs, 64 units)
// and RecurrentPPO's default width (256 units). GFLOP/s counts 2 flops per multiply-add of
// the matrix products: forward rows·2·3H·(In+H), backward twice that.
func BenchmarkGRULayer(b *testing.B) {
	for _, H := range []int{64, 256} {
		const in = 2
		for _, mode := range []struct {
			name         string
			steps, batch int
			train        bool
		}{{"act", 1, 8, false}, {"train", 32, 8, true}} {
			b.Run(fmt.Sprintf("h%d/%s", H, mode.name), func(b *testing.B) {
				s := newGRUBatch(rand.New(rand.NewPCG(1, 2)), in, H, mode.steps, mode.batch)
				rows := mode.steps * mode.batch
				flops := float64(rows * 2 * 3 * H * (in + H))
				if mode.train {
					flops *= 3
				}
				b.ReportAllocs()
				for b.Loop() {
					s.l.Forward(s.y, s.x, mode.steps, mode.batch, s.h, s.starts, nil, s.w)
					if mode.train {
						s.l.Backward(s.dx, s.dy, s.x, s.w, s.g)
					}
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// fillGates sets every gate q's tensors of a recurrent layer (the gates' slices of an
// LSTMWeights or GRUWeights) to fill's values, gate by gate: Wih, Whh, Bih, Bhh.
func fillGates(wih, whh, bih, bhh [][]float32, in, hidden int, fill func(n int) []float32) {
	for q := range wih {
		wih[q], whh[q], bih[q], bhh[q] = fill(in*hidden), fill(hidden*hidden), fill(hidden), fill(hidden)
	}
}

// uniform returns a fill of values uniform in ±scale; zeros a fill of zeros.
func uniform(rng *rand.Rand, scale float64) func(n int) []float32 {
	return func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(scale * (2*rng.Float64() - 1))
		}
		return s
	}
}

func zeros(n int) []float32 { return make([]float32, n) }

// lstmRandomWeights returns weights uniform in ±scale.
func lstmRandomWeights(rng *rand.Rand, in, hidden int, scale float64) LSTMWeights {
	var w LSTMWeights
	fillGates(w.Wih[:], w.Whh[:], w.Bih[:], w.Bhh[:], in, hidden, uniform(rng, scale))
	return w
}

// lstmZeroWeights returns zeroed weights of the layer's shapes, for gradients.
func lstmZeroWeights(in, hidden int) LSTMWeights {
	var w LSTMWeights
	fillGates(w.Wih[:], w.Whh[:], w.Bih[:], w.Bhh[:], in, hidden, zeros)
	return w
}

// lstmTensors lists the 16 tensors of w in the order gate by gate: Wih, Whh, Bih, Bhh.
func lstmTensors(w LSTMWeights) (names []string, ts [][]float32) {
	for q, gate := range "ifgo" {
		names = append(names, fmt.Sprintf("w_ih.%c", gate), fmt.Sprintf("w_hh.%c", gate), fmt.Sprintf("b_ih.%c", gate), fmt.Sprintf("b_hh.%c", gate))
		ts = append(ts, w.Wih[q], w.Whh[q], w.Bih[q], w.Bhh[q])
	}
	return names, ts
}

// lstmStarts returns random episode starts over steps·batch rows, about one row in four.
func lstmStarts(rng *rand.Rand, rows int) []float32 {
	s := make([]float32, rows)
	for i := range s {
		if rng.IntN(4) == 0 {
			s[i] = 1
		}
	}
	return s
}

// lstmBatch is what the allocation test and the benchmark run: a layer with weights uniform in
// ±0.2 and zeroed gradients, a random input, output gradient and episode starts for its
// steps·batch rows, and the buffers its passes write.
type lstmBatch struct {
	l                    *LSTMLayer
	w, g                 LSTMWeights
	x, dy, starts, y, dx []float32
	h, c                 []float32 // the state of the batch's sequences
}

// newLSTMBatch returns the lstmBatch of a layer of in inputs and H units for steps of batch
// sequences, drawing from rng.
func newLSTMBatch(rng *rand.Rand, in, H, steps, batch int) *lstmBatch {
	rows := steps * batch
	s := &lstmBatch{l: NewLSTMLayer(in, H)}
	s.w, s.g = lstmRandomWeights(rng, in, H, 0.2), lstmZeroWeights(in, H)
	s.x, s.dy = randomInput(rng, rows*in), randomInput(rng, rows*H)
	s.starts = lstmStarts(rng, rows)
	s.y, s.dx = make([]float32, rows*H), make([]float32, rows*in)
	s.h, s.c = make([]float32, batch*H), make([]float32, batch*H)
	return s
}

// lstmForward64 is a naive float64 LSTM written from PyTorch's equations, the reference of the
// gradient test: w holds the 16 tensors in lstmTensors' order, in our [in, out] layout.
func lstmForward64(w [][]float64, in, hidden int, x []float64, steps, batch int, h0, c0, starts []float64) []float64 {
	H := hidden
	h, c := append([]float64(nil), h0...), append([]float64(nil), c0...)
	y := make([]float64, steps*batch*H)
	z := make([]float64, 4*H)
	sigmoid := func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }
	for t := range steps {
		for b := range batch {
			r := t*batch + b
			hb, cb := h[b*H:(b+1)*H], c[b*H:(b+1)*H]
			if starts[r] != 0 {
				clear(hb)
				clear(cb)
			}
			for q := range 4 {
				wih, whh, bih, bhh := w[4*q], w[4*q+1], w[4*q+2], w[4*q+3]
				for j := range H {
					s := bih[j] + bhh[j]
					for k := range in {
						s += x[r*in+k] * wih[k*H+j]
					}
					for k := range H {
						s += hb[k] * whh[k*H+j]
					}
					z[q*H+j] = s
				}
			}
			for j := range H {
				i, f, g, o := sigmoid(z[j]), sigmoid(z[H+j]), math.Tanh(z[2*H+j]), sigmoid(z[3*H+j])
				cb[j] = f*cb[j] + i*g
				hb[j] = o * math.Tanh(cb[j])
				y[r*H+j] = hb[j]
			}
		}
	}
	return y
}

// TestLSTMGradientsMatchFiniteDifferences checks y against a naive float64 LSTM and every
// gradient of loss = Σ y·R (each weight tensor and x) against that LSTM's central differences,
// with resets inside the sequences and a nonzero initial state, on a layer whose buffers hold
// an earlier pass. The gradients are added to nonzero g (Backward accumulates), and with dx
// nil Backward gives the same weight gradients bit for bit. The sizes cover the kernels'
// scalar tail (5 units), 8-column blocks (17) and the 64-column block plus an 8-column one
// (72), and both ways of computing dx (In < 8 and ≥ 8).
func TestLSTMGradientsMatchFiniteDifferences(t *testing.T) {
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
			rng := rand.New(rand.NewPCG(11, uint64(tc.hidden)))
			in, H, steps, batch := tc.in, tc.hidden, tc.steps, tc.batch
			rows := steps * batch
			w := lstmRandomWeights(rng, in, H, 2/math.Sqrt(float64(H)))
			x := randomInput(rng, rows*in)
			h0, c0 := randomInput(rng, batch*H), randomInput(rng, batch*H)
			starts := lstmStarts(rng, rows)
			starts[batch] = 1 // at least one reset inside a sequence
			R := randomInput(rng, rows*H)

			l := NewLSTMLayer(in, H)
			y := make([]float32, rows*H)
			// A first pass on other data leaves the buffers dirty, as in training.
			l.Forward(y, randomInput(rng, rows*in), steps, batch, randomInput(rng, batch*H), randomInput(rng, batch*H), nil, nil, nil, w)
			l.Forward(y, x, steps, batch, h0, c0, starts, nil, nil, w)
			g := lstmRandomWeights(rng, in, H, 0.25)
			_, g0 := lstmTensors(g)
			g0 = lstmClone(g0)
			dx := make([]float32, rows*in)
			l.Backward(dx, R, x, w, g)

			names, ws := lstmTensors(w)
			w64 := make([][]float64, len(ws))
			for i, v := range ws {
				w64[i] = float64s(v)
			}
			x64, R64 := float64s(x), float64s(R)
			h064, c064, s64 := float64s(h0), float64s(c0), float64s(starts)
			loss := func() float64 {
				y := lstmForward64(w64, in, H, x64, steps, batch, h064, c064, s64)
				s := 0.0
				for i, v := range y {
					s += v * R64[i]
				}
				return s
			}
			checkClose(t, "y", y, lstmForward64(w64, in, H, x64, steps, batch, h064, c064, s64), 1e-5, smallScaleFloor)

			// fd returns the float64 central difference of the loss in v[i] (error ~1e-10).
			const eps = 1e-6
			fd := func(v []float64, i int) float64 {
				old := v[i]
				v[i] = old + eps
				lp := loss()
				v[i] = old - eps
				lm := loss()
				v[i] = old
				return (lp - lm) / (2 * eps)
			}
			check := func(name string, v []float64, got []float32) {
				idx := make([]int, 0, len(v))
				if tc.sample == 0 || tc.sample >= len(v) {
					for i := range v {
						idx = append(idx, i)
					}
				} else {
					for range tc.sample {
						idx = append(idx, rng.IntN(len(v)))
					}
				}
				sub, want := make([]float32, len(idx)), make([]float64, len(idx))
				for k, i := range idx {
					sub[k], want[k] = got[i], fd(v, i)
				}
				checkClose(t, name, sub, want, 1e-5, smallScaleFloor)
			}
			_, gs := lstmTensors(g)
			for i, name := range names {
				grad := make([]float32, len(gs[i]))
				for k := range grad {
					grad[k] = gs[i][k] - g0[i][k]
				}
				check("d"+name, w64[i], grad)
			}
			check("dx", x64, dx)

			// Without dx, the same weight gradients again, bit for bit.
			var g2 LSTMWeights
			for q := range 4 {
				g2.Wih[q], g2.Whh[q], g2.Bih[q], g2.Bhh[q] = g0[4*q], g0[4*q+1], g0[4*q+2], g0[4*q+3]
			}
			l.Backward(nil, R, x, w, g2)
			_, g2s := lstmTensors(g2)
			for i, name := range names {
				requireSameBits(t, "d"+name+" with dx nil", g2s[i], gs[i])
			}
		})
	}
}

func lstmClone(ts [][]float32) [][]float32 {
	o := make([][]float32, len(ts))
	for i, v := range ts {
		o[i] = append([]float32(nil), v...)
	}
	return o
}

// TestLSTMRowsDoNotDependOnStepsOrBatch checks that a sequence's outputs and final state are
// bit for bit the same whether the layer runs all steps in one call, one step at a time
// feeding the final state back as the initial one (the acting loop; hT, cT alias h0, c0), or
// each sequence alone or in another batch: acting and re-computing the same steps in training
// must agree exactly, so PPO's first probability ratio is exactly 1. A nil initial state must
// equal an explicit zero one.
func TestLSTMRowsDoNotDependOnStepsOrBatch(t *testing.T) {
	for _, sz := range []struct{ in, hidden int }{{2, 64}, {7, 13}, {16, 96}} {
		t.Run(fmt.Sprintf("in%d-h%d", sz.in, sz.hidden), func(t *testing.T) {
			const steps, batch = 9, 5
			in, H := sz.in, sz.hidden
			rows := steps * batch
			rng := rand.New(rand.NewPCG(7, uint64(H)))
			w := lstmRandomWeights(rng, in, H, 1.5/math.Sqrt(float64(H)))
			x := randomInput(rng, rows*in)
			h0, c0 := randomInput(rng, batch*H), randomInput(rng, batch*H)
			starts := lstmStarts(rng, rows)

			l := NewLSTMLayer(in, H) // one layer for every call: buffers shrink and grow
			y, hT, cT := make([]float32, rows*H), make([]float32, batch*H), make([]float32, batch*H)
			l.Forward(y, x, steps, batch, h0, c0, starts, hT, cT, w)

			// One step at a time.
			h, c := append([]float32(nil), h0...), append([]float32(nil), c0...)
			yt := make([]float32, batch*H)
			for tt := range steps {
				l.Forward(yt, x[tt*batch*in:(tt+1)*batch*in], 1, batch, h, c, starts[tt*batch:(tt+1)*batch], h, c, w)
				requireSameBits(t, fmt.Sprintf("step %d alone: y", tt), yt, y[tt*batch*H:(tt+1)*batch*H])
			}
			requireSameBits(t, "step by step: hT", h, hT)
			requireSameBits(t, "step by step: cT", c, cT)

			// Each sequence alone, and all of them in reverse order with a
			// sequence of other data in between.
			xs, ss := make([]float32, steps*in), make([]float32, steps)
			ys, hs, cs := make([]float32, steps*H), make([]float32, H), make([]float32, H)
			const batch2 = batch + 1
			x2, s2 := make([]float32, steps*batch2*in), make([]float32, steps*batch2)
			h02, c02 := randomInput(rng, batch2*H), randomInput(rng, batch2*H)
			xOther := randomInput(rng, steps*in)
			for b := range batch {
				b2 := batch - 1 - b
				if b2 >= 2 {
					b2++ // sequence 2 of the second batch is the other one
				}
				for tt := range steps {
					copy(xs[tt*in:(tt+1)*in], x[(tt*batch+b)*in:])
					ss[tt] = starts[tt*batch+b]
					copy(x2[(tt*batch2+b2)*in:(tt*batch2+b2+1)*in], x[(tt*batch+b)*in:])
					s2[tt*batch2+b2] = ss[tt]
					copy(x2[(tt*batch2+2)*in:(tt*batch2+3)*in], xOther[tt*in:])
				}
				copy(h02[b2*H:(b2+1)*H], h0[b*H:])
				copy(c02[b2*H:(b2+1)*H], c0[b*H:])
				l.Forward(ys, xs, steps, 1, h0[b*H:(b+1)*H], c0[b*H:(b+1)*H], ss, hs, cs, w)
				for tt := range steps {
					requireSameBits(t, fmt.Sprintf("sequence %d alone, step %d: y", b, tt), ys[tt*H:(tt+1)*H], y[(tt*batch+b)*H:(tt*batch+b+1)*H])
				}
				requireSameBits(t, fmt.Sprintf("sequence %d alone: hT", b), hs, hT[b*H:(b+1)*H])
				requireSameBits(t, fmt.Sprintf("sequence %d alone: cT", b), cs, cT[b*H:(b+1)*H])
			}
			y2 := make([]float32, steps*batch2*H)
			l.Forward(y2, x2, steps, batch2, h02, c02, s2, nil, nil, w)
			for b := range batch {
				b2 := batch - 1 - b
				if b2 >= 2 {
					b2++
				}
				for tt := range steps {
					requireSameBits(t, fmt.Sprintf("sequence %d in another batch, step %d: y", b, tt),
						y2[(tt*batch2+b2)*H:(tt*batch2+b2+1)*H], y[(tt*batch+b)*H:(tt*batch+b+1)*H])
				}
			}

			// A nil initial state is zeros.
			zeros := make([]float32, batch*H)
			yz, yn := make([]float32, rows*H), make([]float32, rows*H)
			l.Forward(yz, x, steps, batch, zeros, zeros, starts, nil, nil, w)
			l.Forward(yn, x, steps, batch, nil, nil, starts, nil, nil, w)
			requireSameBits(t, "nil initial state: y", yn, yz)
		})
	}
}

// TestLSTMNoAllocations checks that training (forward and backward on 256 rows) and acting
// (one step of 8 sequences) allocate nothing once the buffers have grown.
func TestLSTMNoAllocations(t *testing.T) {
	const steps, batch = 32, 8
	s := newLSTMBatch(rand.New(rand.NewPCG(5, 5)), 2, 64, steps, batch)
	run := func() {
		s.l.Forward(s.y, s.x, steps, batch, s.h, s.c, s.starts, nil, nil, s.w)
		s.l.Backward(s.dx, s.dy, s.x, s.w, s.g)
		s.l.Backward(nil, s.dy, s.x, s.w, s.g)
		s.l.Forward(s.y, s.x, 1, batch, s.h, s.c, s.starts, s.h, s.c, s.w)
	}
	run()
	if n := testing.AllocsPerRun(20, run); n != 0 {
		t.Fatalf("%v allocations per run, want 0", n)
	}
}

// lstmFromTorch returns layer's tensors of a reference in our layout (the weights transposed
// from PyTorch's [out, in]); tensor is the reference's param or grad.
func lstmFromTorch(t *testing.T, tensor func(*testing.T, string) refTensor, layer int) LSTMWeights {
	t.Helper()
	get := func(kind string, gate rune) []float32 {
		return tensor(t, fmt.Sprintf("lstm.%d.%s.%c", layer, kind, gate)).ourLayout()
	}
	var w LSTMWeights
	for q, gate := range "ifgo" {
		w.Wih[q], w.Whh[q] = get("w_ih", gate), get("w_hh", gate)
		w.Bih[q], w.Bhh[q] = get("b_ih", gate), get("b_hh", gate)
	}
	return w
}

// TestLSTMMatchesPyTorch runs the stacked LSTMs of ../shared/testdata/nets (PyTorch, float64;
// input 5, hidden 8, 6 steps, batch 3, with resets and a nonzero initial state) as a stack of
// LSTMLayers, and checks the top layer's output, every parameter's gradient of
// loss = Σ y·R and the gradient of x within 1e-5 of each tensor's largest magnitude: gate
// order, bias handling, reset semantics and the backward pass through time as PyTorch has them.
func TestLSTMMatchesPyTorch(t *testing.T) {
	for _, name := range []string{"lstm_1layer.json", "lstm_2layer.json"} {
		t.Run(name, func(t *testing.T) {
			ref := loadRefNet(t, name)
			sz := ref.Sizes
			H, steps, batch, layers := sz.Hidden, sz.Steps, sz.Batch, sz.Layers
			rows := steps * batch
			x, starts := ref.X.float32s(), ref.Starts.float32s()
			h0, c0 := ref.H0.float32s(), ref.C0.float32s()

			ls := make([]*LSTMLayer, layers)
			ws, gs := make([]LSTMWeights, layers), make([]LSTMWeights, layers)
			ys := make([][]float32, layers)
			in := sz.Input
			for k := range layers {
				ls[k] = NewLSTMLayer(in, H)
				ws[k] = lstmFromTorch(t, ref.param, k)
				gs[k] = lstmZeroWeights(in, H)
				ys[k] = make([]float32, rows*H)
				in = H
			}
			input := x
			for k, l := range ls {
				st := k * batch * H
				l.Forward(ys[k], input, steps, batch, h0[st:st+batch*H], c0[st:st+batch*H], starts, nil, nil, ws[k])
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
				want := lstmFromTorch(t, ref.grad, k)
				names, got := lstmTensors(gs[k])
				_, wt := lstmTensors(want)
				for i, n := range names {
					checkClose(t, fmt.Sprintf("lstm.%d.%s gradient", k, n), got[i], float64s(wt[i]), 1e-5, smallScaleFloor)
				}
			}
		})
	}
}

// BenchmarkLSTMLayer measures acting (one step of 8 sequences, forward only) and training
// (32 steps of 8 sequences, forward and backward with dx) for a CartPole-sized layer: 2
// inputs, 64 units; and sb3-contrib RecurrentPPO's default 256-unit LSTM on CartPoleNoVel
// (4 inputs) trained on one 128-step sequence per minibatch, as its defaults make it, and
// on 8 sequences of 16 steps. GFLOP/s counts 2 flops per multiply-add of the matrix
// products: the forward pass rows·2·4H·(In+H), the backward pass twice that (dW and dx,
// dh).
func BenchmarkLSTMLayer(b *testing.B) {
	for _, bc := range []struct {
		name                     string
		in, hidden, steps, batch int
		backward                 bool
	}{
		{"act/in2-h64-steps1-batch8", 2, 64, 1, 8, false},
		{"train/in2-h64-steps32-batch8", 2, 64, 32, 8, true},
		{"train/in4-h256-steps128-batch1", 4, 256, 128, 1, true},
		{"train/in4-h256-steps16-batch8", 4, 256, 16, 8, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			in, H, steps, batch := bc.in, bc.hidden, bc.steps, bc.batch
			s := newLSTMBatch(rand.New(rand.NewPCG(1, 2)), in, H, steps, batch)
			flops := float64(steps * batch * 2 * 4 * H * (in + H))
			if bc.backward {
				flops *= 3
			}
			s.l.Forward(s.y, s.x, steps, batch, s.h, s.c, s.starts, s.h, s.c, s.w) // grow the buffers
			b.ReportAllocs()
			for b.Loop() {
				s.l.Forward(s.y, s.x, steps, batch, s.h, s.c, s.starts, s.h, s.c, s.w)
				if bc.backward {
					s.l.Backward(s.dx, s.dy, s.x, s.w, s.g)
				}
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

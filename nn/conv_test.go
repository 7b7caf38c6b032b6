package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// convShape is one Conv2d configuration and batch size of the tests.
type convShape struct {
	in, out, k, s, h, w, n int
}

func (c convShape) String() string {
	return fmt.Sprintf("in%d_out%d_k%d_s%d_%dx%d_n%d", c.in, c.out, c.k, c.s, c.h, c.w, c.n)
}

// convShapes covers stride 1, 2 and 3, kernel 1, a kernel as large as the input, non-square
// inputs, one input channel, one sample, a batch spanning several groups with a partial last
// one, and both ways of computing the forward pass: across a group for small images, straight
// into y, sample by sample, for a multiple of 8 pixels from 64 on.
var convShapes = []convShape{
	{in: 1, out: 3, k: 3, s: 1, h: 5, w: 5, n: 1},
	{in: 3, out: 4, k: 3, s: 2, h: 11, w: 11, n: 5},
	{in: 2, out: 5, k: 1, s: 1, h: 4, w: 6, n: 5},
	{in: 3, out: 2, k: 4, s: 1, h: 4, w: 4, n: 5},
	{in: 2, out: 3, k: 5, s: 2, h: 5, w: 9, n: 1},
	{in: 2, out: 3, k: 2, s: 2, h: 7, w: 9, n: 5},
	{in: 2, out: 3, k: 3, s: 3, h: 10, w: 8, n: 5},
	{in: 1, out: 50, k: 3, s: 1, h: 10, w: 5, n: 5},
	{in: 4, out: 16, k: 3, s: 1, h: 10, w: 10, n: 5},
	{in: 2, out: 3, k: 3, s: 2, h: 7, w: 7, n: 130},
	{in: 2, out: 3, k: 2, s: 1, h: 10, w: 10, n: 5}, // 81 pixels
	{in: 2, out: 4, k: 3, s: 2, h: 17, w: 17, n: 3}, // 64 pixels with stride 2
	{in: 2, out: 3, k: 5, s: 1, h: 12, w: 20, n: 3}, // two tiles of 64 pixels
	{in: 3, out: 4, k: 3, s: 1, h: 40, w: 40, n: 3}, // one sample per group
}

// convRandom returns the layer of shape c with random input, weights, bias and output
// gradient.
func convRandom(c convShape, seed uint64) (l *Conv2d, x, w, b, dy []float32) {
	rng := rand.New(rand.NewPCG(seed, 7))
	l = NewConv2d(c.in, c.out, c.k, c.s, c.h, c.w)
	x = randomInput(rng, c.n*c.in*c.h*c.w)
	w = randomInput(rng, c.out*c.in*c.k*c.k)
	b = randomInput(rng, c.out)
	dy = randomInput(rng, c.n*c.out*l.OH*l.OW)
	return l, x, w, b, dy
}

// convForward returns the output of l.Forward on n samples x, in a new slice.
func convForward(l *Conv2d, x, w, b []float32, n int) []float32 {
	y := make([]float32, n*l.Out*l.OH*l.OW)
	l.Forward(y, x, w, b, n)
	return y
}

// convDirect is the definition of the convolution as direct loops in float64: it returns y
// and, for each output, the sum of the absolute values of its terms (a bound on the rounding
// error of any order of summation).
func convDirect(l *Conv2d, x, w, b []float32, n int) (y, mag []float64) {
	y = make([]float64, n*l.Out*l.OH*l.OW)
	mag = make([]float64, len(y))
	for s := range n {
		for o := range l.Out {
			for i := range l.OH {
				for j := range l.OW {
					sum, abs := float64(b[o]), math.Abs(float64(b[o]))
					for c := range l.In {
						for u := range l.Kernel {
							for v := range l.Kernel {
								t := float64(w[((o*l.In+c)*l.Kernel+u)*l.Kernel+v]) *
									float64(x[((s*l.In+c)*l.H+i*l.Stride+u)*l.W+j*l.Stride+v])
								sum += t
								abs += math.Abs(t)
							}
						}
					}
					k := ((s*l.Out+o)*l.OH+i)*l.OW + j
					y[k], mag[k] = sum, abs
				}
			}
		}
	}
	return y, mag
}

// convDirectBackward returns the gradients of Σ y·dy with respect to x, w and b by the
// same direct loops in float64: each term w·x of the forward sum sends dy·x to w and dy·w
// to x.
func convDirectBackward(l *Conv2d, dy, x, w []float32, n int) (dx, dw, db []float64) {
	dx = make([]float64, n*l.In*l.H*l.W)
	dw = make([]float64, l.Out*l.In*l.Kernel*l.Kernel)
	db = make([]float64, l.Out)
	for s := range n {
		for o := range l.Out {
			for i := range l.OH {
				for j := range l.OW {
					g := float64(dy[((s*l.Out+o)*l.OH+i)*l.OW+j])
					db[o] += g
					for c := range l.In {
						for u := range l.Kernel {
							for v := range l.Kernel {
								wi := ((o*l.In+c)*l.Kernel+u)*l.Kernel + v
								xi := ((s*l.In+c)*l.H+i*l.Stride+u)*l.W + j*l.Stride + v
								dw[wi] += g * float64(x[xi])
								dx[xi] += g * float64(w[wi])
							}
						}
					}
				}
			}
		}
	}
	return dx, dw, db
}

// TestConv2dOutputSize checks OH and OW against PyTorch's (H−K)/S + 1 without padding,
// including strides that leave input rows unused.
func TestConv2dOutputSize(t *testing.T) {
	for _, c := range []struct{ k, s, h, w, oh, ow int }{
		{3, 1, 10, 5, 8, 3}, {3, 2, 11, 11, 5, 5}, {3, 2, 10, 10, 4, 4}, {4, 4, 4, 4, 1, 1}, {1, 3, 7, 8, 3, 3},
	} {
		l := NewConv2d(2, 3, c.k, c.s, c.h, c.w)
		if l.OH != c.oh || l.OW != c.ow {
			t.Errorf("kernel %d, stride %d on %d×%d: output %d×%d, want %d×%d", c.k, c.s, c.h, c.w, l.OH, l.OW, c.oh, c.ow)
		}
	}
}

// TestNewConv2dPanicsOnBadSizes checks that a kernel larger than the input, or a size that
// is not positive, is refused with a panic prefixed "nn: ".
func TestNewConv2dPanicsOnBadSizes(t *testing.T) {
	for _, c := range []convShape{
		{in: 1, out: 1, k: 4, s: 1, h: 3, w: 5}, {in: 1, out: 1, k: 4, s: 1, h: 5, w: 3},
		{in: 0, out: 1, k: 1, s: 1, h: 3, w: 3}, {in: 1, out: 1, k: 1, s: 0, h: 3, w: 3},
	} {
		func() {
			defer func() {
				msg, _ := recover().(string)
				if !strings.HasPrefix(msg, "nn: ") {
					t.Errorf("NewConv2d(%v): panic %q, want one prefixed \"nn: \"", c, msg)
				}
			}()
			NewConv2d(c.in, c.out, c.k, c.s, c.h, c.w)
		}()
	}
}

// TestConv2dForwardMatchesDirectLoops compares Forward with the definition evaluated in
// float64, within the worst-case rounding error of a float32 sum of m terms in any order,
// m·2⁻²⁴·Σ|term|.
func TestConv2dForwardMatchesDirectLoops(t *testing.T) {
	for i, c := range convShapes {
		t.Run(c.String(), func(t *testing.T) {
			l, x, w, b, _ := convRandom(c, uint64(i))
			y := convForward(l, x, w, b, c.n)
			want, mag := convDirect(l, x, w, b, c.n)
			checkWithinBounds(t, "y", y, want, mag, float64(c.in*c.k*c.k+1)*0x1p-24)
		})
	}
}

// TestConv2dBackwardMatchesDirectLoops compares the three gradients with the direct loops in
// float64, and checks that dw and db are added to while dx is overwritten (and may be nil).
func TestConv2dBackwardMatchesDirectLoops(t *testing.T) {
	for i, c := range convShapes {
		t.Run(c.String(), func(t *testing.T) {
			l, x, w, b, dy := convRandom(c, uint64(i))
			convForward(l, x, w, b, c.n)
			wantDx, wantDw, wantDb := convDirectBackward(l, dy, x, w, c.n)
			// Start dw and db from 1 and dx from garbage.
			dx, dw, db := filled(len(x), float32(math.NaN())), filled(len(w), 1), filled(len(b), 1)
			for i := range wantDw {
				wantDw[i]++
			}
			for i := range wantDb {
				wantDb[i]++
			}
			l.Backward(dx, dw, db, dy, x, w, c.n)
			checkClose(t, "dx", dx, wantDx, 1e-5, noScaleFloor)
			checkClose(t, "dw", dw, wantDw, 1e-5, noScaleFloor)
			checkClose(t, "db", db, wantDb, 1e-5, noScaleFloor)

			// Without dx the parameter gradients are the same.
			dw2, db2 := filled(len(w), 1), filled(len(b), 1)
			l.Backward(nil, dw2, db2, dy, x, w, c.n)
			if !sameBits(dw, dw2) || !sameBits(db, db2) {
				t.Error("Backward without dx: dw or db differ from those with dx")
			}
		})
	}
}

// TestConv2dGradientsMatchFiniteDifferences checks Backward against central differences of
// the loss L = Σ y·R, for every element of w, b and x. L is linear in each of them, so the
// difference quotient is exact up to the float32 rounding of y.
func TestConv2dGradientsMatchFiniteDifferences(t *testing.T) {
	c := convShape{in: 2, out: 3, k: 3, s: 2, h: 7, w: 6, n: 2}
	l, x, w, b, r := convRandom(c, 99)
	y := make([]float32, c.n*c.out*l.OH*l.OW)
	loss := func() float64 {
		l.Forward(y, x, w, b, c.n)
		return dot64(y, r)
	}
	dx, dw, db := make([]float32, len(x)), make([]float32, len(w)), make([]float32, len(b))
	l.Backward(dx, dw, db, r, x, w, c.n)
	const eps = 1e-2
	for _, p := range []struct {
		name       string
		param, got []float32
	}{{"w", w, dw}, {"b", b, db}, {"x", x, dx}} {
		num := make([]float64, len(p.param))
		for i, v := range p.param {
			p.param[i] = v + eps
			plus := loss()
			p.param[i] = v - eps
			minus := loss()
			p.param[i] = v
			// The step actually taken is the float32 difference of the two points.
			num[i] = (plus - minus) / (float64(v+eps) - float64(v-eps))
		}
		checkClose(t, "d"+p.name, p.got, num, 1e-3, noScaleFloor)
	}
}

// TestConv2dSamplesDoNotDependOnBatch checks that a sample's output and input gradient are
// bit-identical whether it runs alone, in a batch of 37 (several groups for the small
// images) or in sub-batches at other positions, so acting and training agree exactly.
func TestConv2dSamplesDoNotDependOnBatch(t *testing.T) {
	for i, c := range []convShape{
		{in: 1, out: 50, k: 3, s: 1, h: 10, w: 5, n: 37},
		{in: 4, out: 16, k: 3, s: 1, h: 10, w: 10, n: 37},
		{in: 2, out: 3, k: 3, s: 2, h: 7, w: 7, n: 131},
		{in: 3, out: 5, k: 2, s: 1, h: 3, w: 4, n: 301},
		{in: 2, out: 4, k: 3, s: 2, h: 17, w: 17, n: 20},
	} {
		t.Run(c.String(), func(t *testing.T) {
			l, x, w, b, dy := convRandom(c, uint64(100+i))
			xs, ys := c.in*c.h*c.w, c.out*l.OH*l.OW
			y := make([]float32, c.n*ys)
			dx := make([]float32, c.n*xs)
			dw, db := make([]float32, len(w)), make([]float32, len(b))
			l.Forward(y, x, w, b, c.n)
			l.Backward(dx, dw, db, dy, x, w, c.n)
			// A fresh layer for the sub-batches, and the same one, whose buffers are
			// laid out for the full batch.
			for _, sub := range []*Conv2d{NewConv2d(c.in, c.out, c.k, c.s, c.h, c.w), l} {
				for _, m := range []int{1, 3, 8, 29} {
					for s0 := 0; s0+m <= c.n; s0 += m + 2 {
						y2 := make([]float32, m*ys)
						dx2 := make([]float32, m*xs)
						sub.Forward(y2, x[s0*xs:(s0+m)*xs], w, b, m)
						sub.Backward(dx2, dw, db, dy[s0*ys:(s0+m)*ys], x[s0*xs:(s0+m)*xs], w, m)
						if !sameBits(y2, y[s0*ys:(s0+m)*ys]) {
							t.Fatalf("y of samples %d..%d run as a batch of %d differs from the batch of %d", s0, s0+m-1, m, c.n)
						}
						if !sameBits(dx2, dx[s0*xs:(s0+m)*xs]) {
							t.Fatalf("dx of samples %d..%d run as a batch of %d differs from the batch of %d", s0, s0+m-1, m, c.n)
						}
					}
				}
			}
		})
	}
}

// TestConv2dDoesNotAllocate checks that once the buffers have grown for the largest batch,
// neither pass allocates, at that size or a smaller one.
func TestConv2dDoesNotAllocate(t *testing.T) {
	c := convShape{in: 4, out: 16, k: 3, s: 1, h: 10, w: 10, n: 64}
	l, x, w, b, dy := convRandom(c, 5)
	y := make([]float32, c.n*c.out*l.OH*l.OW)
	dx, dw, db := make([]float32, len(x)), make([]float32, len(w)), make([]float32, len(b))
	l.Forward(y, x, w, b, c.n)
	l.Backward(dx, dw, db, dy, x, w, c.n)
	for _, n := range []int{c.n, 3} {
		if a := testing.AllocsPerRun(10, func() {
			l.Forward(y, x, w, b, n)
			l.Backward(dx, dw, db, dy, x, w, n)
			l.Backward(nil, dw, db, dy, x, w, n)
		}); a != 0 {
			t.Errorf("n = %d: %v allocations per forward and backward pass, want 0", n, a)
		}
	}
}

// TestConv2dMatchesPyTorch runs PyTorch's reference CNN (../shared/testdata/nets/cnn.json:
// conv 3→4 k3 s2, ReLU, conv 4→8 k3 s1, ReLU, flatten, linear 72→6 on x [2,3,11,11]) with two
// Conv2d layers and an inline ReLU and linear, and compares the output, the gradients of
// every parameter and the input gradient for the loss Σ y·R within 1e-5 of each tensor's
// largest value. This pins the weight layout [out, in, kh, kw] and PyTorch's conventions,
// which the direct loops of the other tests only restate.
func TestConv2dMatchesPyTorch(t *testing.T) {
	ref := loadRefNet(t, "cnn.json")
	param := func(name string) []float32 { return ref.param(t, name).float32s() }
	n := ref.X.Shape[0]
	conv0 := NewConv2d(3, 4, 3, 2, 11, 11)
	conv1 := NewConv2d(4, 8, 3, 1, conv0.OH, conv0.OW)
	hidden := conv1.Out * conv1.OH * conv1.OW // 72
	const outs = 6
	x, w0, b0, w1, b1 := ref.X.float32s(), param("conv.0.weight"), param("conv.0.bias"), param("conv.1.weight"), param("conv.1.bias")
	lw, lb := param("linear.weight"), param("linear.bias") // PyTorch's [out, in]
	r := ref.R.float32s()

	relu := func(v []float32) {
		for i := range v {
			v[i] = max(v[i], 0)
		}
	}
	h0 := make([]float32, n*conv0.Out*conv0.OH*conv0.OW)
	conv0.Forward(h0, x, w0, b0, n)
	relu(h0)
	h1 := make([]float32, n*hidden)
	conv1.Forward(h1, h0, w1, b1, n)
	relu(h1)
	y := make([]float32, n*outs)
	for s := range n {
		for j := range outs {
			sum := lb[j]
			for i := range hidden {
				sum += lw[j*hidden+i] * h1[s*hidden+i]
			}
			y[s*outs+j] = sum
		}
	}

	// Backward: dy = R; the linear layer's gradients; then the ReLUs pass the gradient where
	// their output is positive.
	dlw, dlb := make([]float32, len(lw)), make([]float32, len(lb))
	dh1 := make([]float32, len(h1))
	for s := range n {
		for j := range outs {
			g := r[s*outs+j]
			dlb[j] += g
			for i := range hidden {
				dlw[j*hidden+i] += g * h1[s*hidden+i]
				dh1[s*hidden+i] += g * lw[j*hidden+i]
			}
		}
	}
	reluGrad := func(d, h []float32) {
		for i := range d {
			if h[i] <= 0 {
				d[i] = 0
			}
		}
	}
	reluGrad(dh1, h1)
	dw1, db1, dh0 := make([]float32, len(w1)), make([]float32, len(b1)), make([]float32, len(h0))
	conv1.Backward(dh0, dw1, db1, dh1, h0, w1, n)
	reluGrad(dh0, h0)
	dw0, db0, dx := make([]float32, len(w0)), make([]float32, len(b0)), make([]float32, len(x))
	conv0.Backward(dx, dw0, db0, dh0, x, w0, n)

	const tol = 1e-5
	checkClose(t, "y", y, ref.Y.Data, tol, noScaleFloor)
	for _, g := range []struct {
		name string
		got  []float32
	}{
		{"conv.0.weight", dw0}, {"conv.0.bias", db0}, {"conv.1.weight", dw1}, {"conv.1.bias", db1},
		{"linear.weight", dlw}, {"linear.bias", dlb},
	} {
		checkClose(t, "grad "+g.name, g.got, ref.grad(t, g.name).Data, tol, noScaleFloor)
	}
	checkClose(t, "grad x", dx, ref.GradX.Data, tol, noScaleFloor)
}

// BenchmarkConv2d times the layers of the Catch and MinAtar networks (Breakout's 4 channels,
// Seaquest's 10 with the shipped 3×3 kernel and a 5×5 one evolution picked) for a training
// minibatch (forward, and forward plus backward with the input gradient) and for acting on 8
// environments (forward). GFLOP/s counts two flops per multiply-add of the products: 2·n·Out·
// In·K²·OH·OW for the forward pass, three times that for forward plus backward (dw and dx
// cost as much as y).
func BenchmarkConv2d(b *testing.B) {
	for _, c := range []struct {
		name string
		convShape
		backward bool
	}{
		{"catch/n=256/forward", convShape{in: 1, out: 50, k: 3, s: 1, h: 10, w: 5, n: 256}, false},
		{"catch/n=256/forward+backward", convShape{in: 1, out: 50, k: 3, s: 1, h: 10, w: 5, n: 256}, true},
		{"catch/n=8/forward", convShape{in: 1, out: 50, k: 3, s: 1, h: 10, w: 5, n: 8}, false},
		{"minatar/n=256/forward", convShape{in: 4, out: 16, k: 3, s: 1, h: 10, w: 10, n: 256}, false},
		{"minatar/n=256/forward+backward", convShape{in: 4, out: 16, k: 3, s: 1, h: 10, w: 10, n: 256}, true},
		{"minatar/n=8/forward", convShape{in: 4, out: 16, k: 3, s: 1, h: 10, w: 10, n: 8}, false},
		{"seaquest/n=256/forward+backward", convShape{in: 10, out: 16, k: 3, s: 1, h: 10, w: 10, n: 256}, true},
		{"seaquest-k5/n=256/forward+backward", convShape{in: 10, out: 32, k: 5, s: 1, h: 10, w: 10, n: 256}, true},
		{"seaquest-k5/n=16/forward", convShape{in: 10, out: 32, k: 5, s: 1, h: 10, w: 10, n: 16}, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			l, x, w, bias, dy := convRandom(c.convShape, 1)
			y := make([]float32, len(dy))
			dx, dw, db := make([]float32, len(x)), make([]float32, len(w)), make([]float32, len(bias))
			flops := 2 * float64(c.n*c.out*c.in*c.k*c.k*l.OH*l.OW)
			if c.backward {
				flops *= 3
			}
			// Grow the buffers before timing, as in training.
			l.Forward(y, x, w, bias, c.n)
			l.Backward(dx, dw, db, dy, x, w, c.n)
			b.ReportAllocs()
			for b.Loop() {
				l.Forward(y, x, w, bias, c.n)
				if c.backward {
					l.Backward(dx, dw, db, dy, x, w, c.n)
				}
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

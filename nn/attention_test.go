package nn

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// transformerRef is testdata/transformer_layer.json (gen_transformer.py).
type transformerRef struct {
	Sizes struct {
		Width, Heads, MLP, K, Windows int
	}
	First      []int
	X, R, Z    refTensor
	Params     map[string]refTensor `json:"params"`
	GradParams map[string]refTensor `json:"grad_params"`
	GradX      refTensor            `json:"grad_x"`
}

// transformerFromTorch returns PyTorch's TransformerEncoderLayer tensors in our layout:
// matrices transposed to [in, out], in_proj split into Wq, Wk, Wv.
func transformerFromTorch(m map[string]refTensor, D int) TransformerWeights {
	in := m["self_attn.in_proj_weight"]
	part := func(q int) []float32 {
		t := refTensor{Shape: []int{D, D}, Data: in.Data[q*D*D : (q+1)*D*D]}
		return t.ourLayout()
	}
	bias := m["self_attn.in_proj_bias"].float32s()
	return TransformerWeights{
		Norm1W: m["norm1.weight"].float32s(), Norm1B: m["norm1.bias"].float32s(),
		Norm2W: m["norm2.weight"].float32s(), Norm2B: m["norm2.bias"].float32s(),
		Wq: part(0), Wk: part(1), Wv: part(2), Wo: m["self_attn.out_proj.weight"].ourLayout(),
		Bq: bias[:D], Bk: bias[D : 2*D], Bv: bias[2*D:], Bo: m["self_attn.out_proj.bias"].float32s(),
		W1: m["linear1.weight"].ourLayout(), B1: m["linear1.bias"].float32s(),
		W2: m["linear2.weight"].ourLayout(), B2: m["linear2.bias"].float32s(),
	}
}

// transformerTensors lists the 16 tensors of w with names.
func transformerTensors(w TransformerWeights) ([]string, [][]float32) {
	return []string{"norm1.w", "norm1.b", "norm2.w", "norm2.b", "wq", "wk", "wv", "wo", "bq", "bk", "bv", "bo", "w1", "b1", "w2", "b2"},
		[][]float32{w.Norm1W, w.Norm1B, w.Norm2W, w.Norm2B, w.Wq, w.Wk, w.Wv, w.Wo, w.Bq, w.Bk, w.Bv, w.Bo, w.W1, w.B1, w.W2, w.B2}
}

// transformerZeros returns zeroed weights of the layer's shapes, for gradients.
func transformerZeros(D, F int) TransformerWeights {
	return TransformerWeights{Norm1W: zeros(D), Norm1B: zeros(D), Norm2W: zeros(D), Norm2B: zeros(D),
		Wq: zeros(D * D), Wk: zeros(D * D), Wv: zeros(D * D), Wo: zeros(D * D),
		Bq: zeros(D), Bk: zeros(D), Bv: zeros(D), Bo: zeros(D), W1: zeros(D * F), B1: zeros(F), W2: zeros(F * D), B2: zeros(D)}
}

// transformerRandom returns weights uniform in ±scale, LayerNorm scales around 1.
func transformerRandom(rng *rand.Rand, D, F int, scale float64) TransformerWeights {
	u := uniform(rng, scale)
	w := TransformerWeights{Norm1W: u(D), Norm1B: u(D), Norm2W: u(D), Norm2B: u(D),
		Wq: u(D * D), Wk: u(D * D), Wv: u(D * D), Wo: u(D * D),
		Bq: u(D), Bk: u(D), Bv: u(D), Bo: u(D), W1: u(D * F), B1: u(F), W2: u(F * D), B2: u(D)}
	for i := range D {
		w.Norm1W[i]++
		w.Norm2W[i]++
	}
	return w
}

// TestTransformerLayerMatchesPyTorch runs torch.nn.TransformerEncoderLayer's reference
// (testdata/transformer_layer.json: float64, pre-LayerNorm, ReLU, width 8, 2 heads, MLP 12,
// 3 windows of 5 positions whose first valid positions are 0, 2 and 1) and checks the
// output, every parameter's gradient of loss = Σ z·R and the gradient of x within 1e-5 of
// each tensor's largest magnitude: the in_proj layout, the 1/√(D/H) scale, the causal and
// episode-start masks, pre-LN residuals and the backward pass.
func TestTransformerLayerMatchesPyTorch(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "transformer_layer.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref transformerRef
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	s := ref.Sizes
	D, F, K, W := s.Width, s.MLP, s.K, s.Windows
	l := NewTransformerLayer(D, s.Heads, F)
	w := transformerFromTorch(ref.Params, D)
	x := ref.X.float32s()
	z := make([]float32, W*K*D)
	l.Forward(z, x, W, K, ref.First, w)
	for b, f := range ref.First { // the rows before a window's first are not compared
		clear(z[b*K*D : (b*K+f)*D])
	}
	checkClose(t, "z", z, ref.Z.Data, 1e-5, smallScaleFloor)
	g := transformerZeros(D, F)
	dx := make([]float32, len(x))
	l.Backward(dx, ref.R.float32s(), x, w, g)
	checkClose(t, "dx", dx, ref.GradX.Data, 1e-5, smallScaleFloor)
	names, got := transformerTensors(g)
	_, want := transformerTensors(transformerFromTorch(ref.GradParams, D))
	for i, n := range names {
		checkClose(t, n+" gradient", got[i], float64s(want[i]), 1e-5, gradFloor(n))
	}
}

// gradFloor is checkClose's floor for the gradient of tensor name: the key bias's is 0
// exactly (a shift of every key by b adds q·b to all of a query's scores, which the
// softmax ignores), so the float32 pass leaves rounding noise of ~1e-7 that only an
// absolute tolerance (1e-5) can hold.
func gradFloor(name string) float64 {
	if name == "bk" {
		return 1
	}
	return smallScaleFloor
}

// transformerForward64 is a naive float64 pre-LN Transformer layer written from the
// equations, the reference of the gradient test; w holds the 16 tensors in
// transformerTensors' order.
func transformerForward64(w [][]float64, D, H, F int, x []float64, windows, K int, first []int) []float64 {
	ln := func(v []float64, g, b []float64) []float64 {
		m, s := 0.0, 0.0
		for _, e := range v {
			m += e
		}
		m /= float64(len(v))
		for _, e := range v {
			s += (e - m) * (e - m)
		}
		r := 1 / math.Sqrt(s/float64(len(v))+1e-5)
		out := make([]float64, len(v))
		for i, e := range v {
			out[i] = (e-m)*r*g[i] + b[i]
		}
		return out
	}
	lin := func(v, W, b []float64, out int) []float64 {
		o := append([]float64(nil), b...)
		for i, e := range v {
			for j := range out {
				o[j] += e * W[i*out+j]
			}
		}
		return o
	}
	z := make([]float64, windows*K*D)
	dh := D / H
	for b := range windows {
		var q, k, v, y [][]float64
		for i := range K {
			a := ln(x[(b*K+i)*D:(b*K+i+1)*D], w[0], w[1])
			q, k, v = append(q, lin(a, w[4], w[8], D)), append(k, lin(a, w[5], w[9], D)), append(v, lin(a, w[6], w[10], D))
		}
		for i := range K {
			o := make([]float64, D)
			for h := 0; i >= first[b] && h < H; h++ {
				var sc []float64
				top := math.Inf(-1)
				for j := first[b]; j <= i; j++ {
					s := 0.0
					for e := h * dh; e < (h+1)*dh; e++ {
						s += q[i][e] * k[j][e]
					}
					sc = append(sc, s/math.Sqrt(float64(dh)))
					top = max(top, sc[len(sc)-1])
				}
				sum := 0.0
				for n := range sc {
					sc[n] = math.Exp(sc[n] - top)
					sum += sc[n]
				}
				for n, j := 0, first[b]; j <= i; n, j = n+1, j+1 {
					for e := h * dh; e < (h+1)*dh; e++ {
						o[e] += sc[n] / sum * v[j][e]
					}
				}
			}
			yi := lin(o, w[7], w[11], D)
			for e := range yi {
				yi[e] += x[(b*K+i)*D+e]
			}
			y = append(y, yi)
		}
		for i := range K {
			u := lin(ln(y[i], w[2], w[3]), w[12], w[13], F)
			for e := range u {
				u[e] = max(u[e], 0)
			}
			m := lin(u, w[14], w[15], D)
			for e := range m {
				z[(b*K+i)*D+e] = y[i][e] + m[e]
			}
		}
	}
	return z
}

// TestTransformerLayerGradientsMatchFiniteDifferences checks z against the naive float64
// layer and every gradient (each tensor, sampled, and x) against its central differences,
// with windows cut at different first positions, dirty buffers and gradients added into
// nonzero g; Backward with dx nil gives the same weight gradients bit for bit.
func TestTransformerLayerGradientsMatchFiniteDifferences(t *testing.T) {
	for _, c := range []struct{ D, H, F, K, W int }{{8, 2, 12, 5, 3}, {12, 3, 16, 4, 2}, {16, 1, 8, 6, 2}} {
		t.Run(fmt.Sprintf("d%d-h%d-f%d-k%d", c.D, c.H, c.F, c.K), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(21, uint64(c.D)))
			D, F, K, W := c.D, c.F, c.K, c.W
			rows := W * K
			w := transformerRandom(rng, D, F, 0.4)
			x := randomInput(rng, rows*D)
			R := randomInput(rng, rows*D)
			first := make([]int, W)
			for b := range first {
				first[b] = b % K
			}
			for b, f := range first { // rows before a window's first are not read
				clear(R[b*K*D : (b*K+f)*D])
			}
			l := NewTransformerLayer(D, c.H, F)
			z := make([]float32, rows*D)
			l.Forward(z, randomInput(rng, rows*D), W, K, nil, w)
			l.Forward(z, x, W, K, first, w)
			g := transformerRandom(rng, D, F, 0.25)
			_, g0 := transformerTensors(g)
			g0 = lstmClone(g0)
			dx := make([]float32, rows*D)
			l.Backward(dx, R, x, w, g)

			names, ws := transformerTensors(w)
			w64 := make([][]float64, len(ws))
			for i, v := range ws {
				w64[i] = float64s(v)
			}
			x64, R64 := float64s(x), float64s(R)
			forward := func() []float64 { return transformerForward64(w64, D, c.H, F, x64, W, K, first) }
			want := forward()
			for b, f := range first {
				clear(z[b*K*D : (b*K+f)*D])
				clear(want[b*K*D : (b*K+f)*D])
			}
			checkClose(t, "z", z, want, 1e-5, smallScaleFloor)
			loss := func() float64 {
				s := 0.0
				for i, v := range forward() {
					s += v * R64[i]
				}
				return s
			}
			_, gs := transformerTensors(g)
			for i, name := range names {
				grad := make([]float32, len(gs[i]))
				for k := range grad {
					grad[k] = gs[i][k] - g0[i][k]
				}
				if name == "bk" { // its true gradient is 0, see gradFloor
					checkClose(t, "dbk", grad, make([]float64, len(grad)), 1e-5, gradFloor(name))
					continue
				}
				checkCentralDifferences(t, rng, "d"+name, w64[i], grad, 24, loss)
			}
			checkCentralDifferences(t, rng, "dx", x64, dx, 40, loss)

			g2 := transformerRandom(rng, D, F, 0)
			_, g2s := transformerTensors(g2)
			for i := range g2s {
				copy(g2s[i], g0[i])
			}
			l.Backward(nil, R, x, w, g2)
			for i, name := range names {
				requireSameBits(t, "d"+name+" with dx nil", g2s[i], gs[i])
			}
		})
	}
}

// TestTransformerWindowsDoNotDependOnTheBatch: a window's outputs are bit for bit the same
// computed alone or among others, and nothing allocates once the buffers have grown.
func TestTransformerWindowsDoNotDependOnTheBatch(t *testing.T) {
	const D, H, F, K, W = 16, 4, 32, 8, 5
	rng := rand.New(rand.NewPCG(4, 4))
	w := transformerRandom(rng, D, F, 0.3)
	x := randomInput(rng, W*K*D)
	first := []int{0, 3, 7, 1, 0}
	l := NewTransformerLayer(D, H, F)
	z := make([]float32, W*K*D)
	l.Forward(z, x, W, K, first, w)
	one := make([]float32, K*D)
	for b := range W {
		l.Forward(one, x[b*K*D:(b+1)*K*D], 1, K, first[b:b+1], w)
		requireSameBits(t, fmt.Sprintf("window %d alone", b), one[first[b]*D:], z[(b*K+first[b])*D:(b+1)*K*D])
	}
	g := transformerZeros(D, F)
	dx, dz := make([]float32, len(x)), randomInput(rng, len(x))
	run := func() {
		l.Forward(z, x, W, K, first, w)
		l.Backward(dx, dz, x, w, g)
		l.Forward(one, x[:K*D], 1, K, first[:1], w)
	}
	run()
	if n := testing.AllocsPerRun(10, run); n != 0 {
		t.Fatalf("%v allocations per run, want 0", n)
	}
}

// TestTransformerForwardLastIsForwardsLastRows: ForwardLast gives each window's last row
// of Forward bit for bit, and its Backward, from the gradient of those rows, the weight
// gradients and dx of Forward's Backward with zeros on every other row. The two may differ
// only in the sign of a zero (Forward's adds the zero terms that ForwardLast leaves out,
// and +0 + −0 is +0), so values are compared with ==, which does not tell zeros apart. It
// also checks that ForwardLast then Forward on one layer reuse its buffers without
// allocating.
func TestTransformerForwardLastIsForwardsLastRows(t *testing.T) {
	const D, H, F, K, W = 16, 4, 32, 8, 5
	rng := rand.New(rand.NewPCG(6, 7))
	w := transformerRandom(rng, D, F, 0.3)
	x := randomInput(rng, W*K*D)
	for _, first := range [][]int{nil, {0, 3, 7, 1, 0}} {
		full, last := NewTransformerLayer(D, H, F), NewTransformerLayer(D, H, F)
		z, zl := make([]float32, W*K*D), make([]float32, W*D)
		full.Forward(z, x, W, K, first, w)
		last.ForwardLast(zl, x, W, K, first, w)
		dzl := randomInput(rng, W*D)
		dz := make([]float32, W*K*D)
		for b := range W {
			requireSameBits(t, fmt.Sprintf("first %v: window %d's last row", first, b), zl[b*D:(b+1)*D], z[(b*K+K-1)*D:(b*K+K)*D])
			copy(dz[(b*K+K-1)*D:], dzl[b*D:(b+1)*D])
		}
		g, gl := transformerZeros(D, F), transformerZeros(D, F)
		dx, dxl := make([]float32, len(x)), make([]float32, len(x))
		full.Backward(dx, dz, x, w, g)
		last.Backward(dxl, dzl, x, w, gl)
		names, gs := transformerTensors(g)
		_, gls := transformerTensors(gl)
		for i, name := range append(names, "x") {
			got, want := append(gls, dxl), append(gs, dx)
			for j := range want[i] {
				if got[i][j] != want[i][j] {
					t.Fatalf("first %v: d%s[%d] = %v after ForwardLast, %v after Forward", first, name, j, got[i][j], want[i][j])
				}
			}
		}
	}
	l := NewTransformerLayer(D, H, F)
	z, dx, g := make([]float32, W*K*D), make([]float32, W*K*D), transformerZeros(D, F)
	run := func() {
		l.ForwardLast(z, x, W, K, nil, w)
		l.Backward(dx, z[:W*D], x, w, g)
		l.Forward(z, x, W, K, nil, w)
		l.Backward(dx, z, x, w, g)
	}
	run()
	if n := testing.AllocsPerRun(10, run); n != 0 {
		t.Fatalf("%v allocations per run, want 0", n)
	}
}

// TestTransformerLayersStackMatchFiniteDifferences: two layers, the second reading the
// first's output, as an encoder stacks them: the gradients of the first layer's weights
// and of x through both match the naive float64 stack's central differences.
func TestTransformerLayersStackMatchFiniteDifferences(t *testing.T) {
	const D, H, F, K, W = 6, 2, 8, 4, 2
	rng := rand.New(rand.NewPCG(8, 9))
	w0, w1 := transformerRandom(rng, D, F, 0.5), transformerRandom(rng, D, F, 0.5)
	x, R := randomInput(rng, W*K*D), randomInput(rng, W*K*D)
	first := []int{1, 0}
	clear(R[:D]) // window 0's position 0 is before its first
	l0, l1 := NewTransformerLayer(D, H, F), NewTransformerLayer(D, H, F)
	h, z := make([]float32, len(x)), make([]float32, len(x))
	l0.Forward(h, x, W, K, first, w0)
	l1.Forward(z, h, W, K, first, w1)
	g0, g1 := transformerZeros(D, F), transformerZeros(D, F)
	dh, dx := make([]float32, len(x)), make([]float32, len(x))
	l1.Backward(dh, R, h, w1, g1)
	l0.Backward(dx, dh, x, w0, g0)

	_, t0 := transformerTensors(w0)
	_, t1 := transformerTensors(w1)
	w064, w164 := make([][]float64, len(t0)), make([][]float64, len(t1))
	for i := range t0 {
		w064[i], w164[i] = float64s(t0[i]), float64s(t1[i])
	}
	x64, R64 := float64s(x), float64s(R)
	loss := func() float64 {
		z := transformerForward64(w164, D, H, F, transformerForward64(w064, D, H, F, x64, W, K, first), W, K, first)
		s := 0.0
		for i, v := range z {
			s += v * R64[i]
		}
		return s
	}
	names, gs := transformerTensors(g0)
	for i, name := range names {
		if name != "bk" {
			checkCentralDifferences(t, rng, "layer 0 d"+name, w064[i], gs[i], 0, loss)
		}
	}
	checkCentralDifferences(t, rng, "dx", x64, dx, 0, loss)
}

// BenchmarkTransformerLayer measures acting (8 windows, forward only) and training (256
// windows, forward and backward with dx) of a layer of width 64, 4 heads, MLP 128 over a
// context of 16. GFLOP/s counts 2 flops per multiply-add of the products: per position
// 2·(4·D² + 2·D·F) for the projections and MLP plus 2·2·K·D for the attention (an upper
// bound: causal windows use about half), the backward pass twice the forward.
func BenchmarkTransformerLayer(b *testing.B) {
	const D, H, F, K = 64, 4, 128, 16
	for _, m := range []struct {
		name    string
		windows int
		train   bool
		last    bool // ForwardLast, as an encoder's top layer
	}{{"act", 8, false, false}, {"train", 256, true, false}, {"act-last", 8, false, true}, {"train-last", 256, true, true}} {
		b.Run(m.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			w, g := transformerRandom(rng, D, F, 0.2), transformerZeros(D, F)
			x, dz := randomInput(rng, m.windows*K*D), randomInput(rng, m.windows*K*D)
			z, dx := make([]float32, len(x)), make([]float32, len(x))
			l := NewTransformerLayer(D, H, F)
			// Per position: 4 D×D projections, the MLP and the attention (a query
			// against K keys and values, counted without the causal mask).
			flops := float64(m.windows*K) * 2 * float64(4*D*D+2*D*F+2*K*D)
			forward := l.Forward
			if m.last {
				// The keys and values at every position, the rest at the last.
				flops = float64(m.windows) * 2 * float64(K*2*D*D+2*D*D+2*D*F+2*K*D)
				forward = l.ForwardLast
			}
			if m.train {
				flops *= 3
			}
			b.ReportAllocs()
			for b.Loop() {
				forward(z, x, m.windows, K, nil, w)
				if m.train {
					l.Backward(dx, dz, x, w, g)
				}
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

package nn

import (
	"fmt"
	"math"

	"github.com/evolverl/evolve/internal/bufs"
	"github.com/evolverl/evolve/internal/simd"
)

// TransformerWeights are one pre-LayerNorm Transformer encoder layer's parameters, matrices
// stored [in, out] as the other layers' (PyTorch's in_proj_weight holds Wq, Wk, Wv
// transposed and stacked, out_proj.weight Woᵀ, linear1.weight W1ᵀ, linear2.weight W2ᵀ):
//
//	Norm1W, Norm1B, Norm2W, Norm2B [D]     LayerNorm scales and shifts
//	Wq, Wk, Wv, Wo [D, D]   Bq, Bk, Bv, Bo [D]
//	W1 [D, F]   B1 [F]   W2 [F, D]   B2 [D]
//
// The same type holds the gradients.
type TransformerWeights struct {
	Norm1W, Norm1B, Norm2W, Norm2B []float32
	Wq, Wk, Wv, Wo                 []float32
	Bq, Bk, Bv, Bo                 []float32
	W1, B1, W2, B2                 []float32
}

// TransformerLayer is one layer of a causal Transformer encoder over windows of K steps,
// PyTorch's TransformerEncoderLayer with norm_first = True, ReLU and no dropout:
//
//	y = x + MHA(LN1(x)),   z = y + W2ᵀ·relu(W1ᵀ·LN2(y) + b1) + b2
//
// where the multi-head self-attention (Heads heads of D/Heads units, scores scaled by
// 1/√(D/Heads)) lets position i of a window attend to the positions j ≤ i of that window
// from its first valid one on: an episode's start cuts the window, and no position attends
// across it or into the future. A position before the first valid one attends to nothing
// (its attention output is zero); the rows after it never read it.
//
// Rows are window-major: position j of window b is row b·K + j. Every window is computed
// by the same float32 operations in the same order whatever the other windows of the call,
// so a window's outputs do not depend on the batch. Buffers grow to the largest call and
// are reused: after a warm-up no call allocates. Not safe for concurrent use.
type TransformerLayer struct {
	Width, Heads, MLP int // D, the heads (dividing D) and F

	windows, k int // shape of the last Forward
	nq         int // query positions per window: k, or 1 after ForwardLast
	first      []int

	// Per row (position) of the last Forward: the layer norm before the attention and
	// the keys and values.
	xhat1, a1, kk, v []float32 // [rows, D]
	rstd1            []float32 // [rows]
	// Per query row, the last nq positions of each window: row b·nq + i − (k − nq) for
	// position i of window b.
	q, o, y, xhat2, c []float32 // [windows·nq, D]
	u, r              []float32 // [windows·nq, F]: W1ᵀ·c + b1 and its ReLU
	rstd2             []float32 // [windows·nq]
	p                 []float32 // [windows, Heads, nq, K]: attention probabilities

	// Scratch of Backward.
	dy, da, dq, dk, dv, do, dr []float32
	ds                         []float32 // [K]: one query's score gradients
	ones                       []float32
	wT                         []float32 // a transposed matrix
}

// NewTransformerLayer returns a layer of model width d, heads heads (dividing d) and MLP
// width f; its buffers grow on the first Forward.
func NewTransformerLayer(d, heads, f int) *TransformerLayer {
	if d < 1 || heads < 1 || f < 1 || d%heads != 0 {
		panic(fmt.Sprintf("nn: NewTransformerLayer(%d, %d, %d): sizes must be positive and heads divide the width", d, heads, f))
	}
	return &TransformerLayer{Width: d, Heads: heads, MLP: f}
}

// Forward runs windows windows of k positions: x and z are [windows·k, D]. first, if not
// nil, holds per window its first valid position (0 to k−1); nil means every position is
// valid. The weights are read in place; x and first are kept for Backward.
func (l *TransformerLayer) Forward(z, x []float32, windows, k int, first []int, w TransformerWeights) {
	l.forward(z, x, windows, k, k, first, w)
}

// ForwardLast is Forward for the last position of each window only, which is all a top
// layer's reader needs: z is [windows, D] and gets the bits that row b·k + k − 1 of
// Forward's z would. Every position's keys and values are still computed, but the
// queries, the attention's output, the MLP and their gradients in Backward only for the
// last positions: about a third of Forward's work for 1 layer of width 16, MLP 32 and 8
// positions.
func (l *TransformerLayer) ForwardLast(z, x []float32, windows, k int, first []int, w TransformerWeights) {
	l.forward(z, x, windows, k, 1, first, w)
}

// forward is Forward with queries at the last nq (1 or k) positions of each window.
func (l *TransformerLayer) forward(z, x []float32, windows, k, nq int, first []int, w TransformerWeights) {
	D, F := l.Width, l.MLP
	rows, qrows := windows*k, windows*nq
	l.check("Forward", w)
	switch {
	case windows < 1 || k < 1:
		panic(fmt.Sprintf("nn: TransformerLayer.Forward: %d windows of %d positions", windows, k))
	case len(x) < rows*D || len(z) < qrows*D:
		panic(fmt.Sprintf("nn: TransformerLayer.Forward: x has %d values, z %d, want %d·%d and %d·%d", len(x), len(z), rows, D, qrows, D))
	case first != nil && len(first) < windows:
		panic(fmt.Sprintf("nn: TransformerLayer.Forward: %d first positions for %d windows", len(first), windows))
	}
	l.grow(rows, windows, k, nq)
	l.windows, l.k, l.nq, l.first = windows, k, nq, first
	xs, q0 := l.queryRows()

	layerNormForward(x, l.xhat1, l.rstd1, l.a1, w.Norm1W, w.Norm1B, rows, D)
	// The queries' rows of a1 are every row, or every k-th from the last.
	for r := range qrows {
		copy(l.q[r*D:(r+1)*D], w.Bq)
	}
	simd.MatMulAdd(l.q, D, l.a1[q0:], xs, 1, w.Wq, D, qrows, D, D)
	project(l.kk, l.a1, w.Wk, w.Bk, rows, D, D)
	project(l.v, l.a1, w.Wv, w.Bv, rows, D, D)
	for b := range windows {
		l.attend(b)
	}
	// y = x + o·Wo + bo
	for r := range qrows {
		copy(l.y[r*D:(r+1)*D], w.Bo)
	}
	simd.MatMulAdd(l.y, D, l.o, D, 1, w.Wo, D, qrows, D, D)
	for r := range qrows {
		yr, xr := l.y[r*D:(r+1)*D], x[q0+r*xs:q0+r*xs+D]
		for i := range yr {
			yr[i] += xr[i]
		}
	}
	layerNormForward(l.y, l.xhat2, l.rstd2, l.c, w.Norm2W, w.Norm2B, qrows, D)
	project(l.u, l.c, w.W1, w.B1, qrows, D, F)
	for i, v := range l.u[:qrows*F] {
		l.r[i] = max(v, 0)
	}
	project(z, l.r, w.W2, w.B2, qrows, F, D)
	for i := range qrows * D {
		z[i] += l.y[i]
	}
}

// queryRows returns where the query rows of a [windows·k, D] buffer are: the stride
// between them and the first one's offset (D and 0 when every position queries).
func (l *TransformerLayer) queryRows() (stride, offset int) {
	D := l.Width
	if l.nq == l.k {
		return D, 0
	}
	return l.k * D, (l.k - 1) * D
}

// project writes dst [rows, out] = x [rows, in]·W [in, out] + b.
func project(dst, x, W, b []float32, rows, in, out int) {
	for r := range rows {
		copy(dst[r*out:(r+1)*out], b)
	}
	simd.MatMulAdd(dst, out, x, in, 1, W, out, rows, out, in)
}

// firstOf is window b's first valid position.
func (l *TransformerLayer) firstOf(b int) int {
	if l.first == nil {
		return 0
	}
	return l.first[b]
}

// attend computes window b's attention probabilities and outputs o, head by head, for its
// query positions.
func (l *TransformerLayer) attend(b int) {
	D, H, K, nq := l.Width, l.Heads, l.k, l.nq
	dh := D / H
	scale := float32(1 / math.Sqrt(float64(dh)))
	f := l.firstOf(b)
	for h := range H {
		p := l.p[((b*H)+h)*nq*K : ((b*H)+h+1)*nq*K]
		clear(p)
		for iq := range nq {
			i := K - nq + iq // the query's position
			oi := l.o[(b*nq+iq)*D+h*dh : (b*nq+iq)*D+(h+1)*dh]
			clear(oi)
			if i < f {
				continue
			}
			qi := l.q[(b*nq+iq)*D+h*dh : (b*nq+iq)*D+(h+1)*dh]
			pi := p[iq*K : (iq+1)*K]
			top := float32(math.Inf(-1))
			for j := f; j <= i; j++ {
				pi[j] = simd.Dot(qi, l.kk[(b*K+j)*D+h*dh:(b*K+j)*D+(h+1)*dh]) * scale
				top = max(top, pi[j])
			}
			sum := float32(0)
			for j := f; j <= i; j++ {
				pi[j] = float32(math.Exp(float64(pi[j] - top)))
				sum += pi[j]
			}
			for j := f; j <= i; j++ {
				pi[j] /= sum
				vj := l.v[(b*K+j)*D+h*dh : (b*K+j)*D+(h+1)*dh]
				for e, x := range vj {
					oi[e] += pi[j] * x
				}
			}
		}
	}
}

// Backward, after Forward or ForwardLast, takes dz, the gradient of z ([windows·k, D], or
// [windows, D] after ForwardLast), adds the gradient of every weight into g (laid out like
// w) and writes the gradient of x [windows·k, D] into dx unless dx is nil. x and w are
// those of the Forward.
func (l *TransformerLayer) Backward(dx, dz, x []float32, w, g TransformerWeights) {
	D, F := l.Width, l.MLP
	rows, qrows := l.windows*l.k, l.windows*l.nq
	l.check("Backward", w)
	l.check("Backward (gradient)", g)
	switch {
	case rows == 0:
		panic("nn: TransformerLayer.Backward: no Forward before")
	case len(dz) < qrows*D || len(x) < rows*D || dx != nil && len(dx) < rows*D:
		panic(fmt.Sprintf("nn: TransformerLayer.Backward: dz has %d values, x %d, dx %d, want %d·%d and %d·%d", len(dz), len(x), len(dx), qrows, D, rows, D))
	}
	xs, q0 := l.queryRows()
	// The MLP: z = y + r·W2 + b2, r = relu(u), u = c·W1 + b1.
	copy(l.dy, dz[:qrows*D])
	l.linearBackward(g.W2, g.B2, l.dr, w.W2, l.r, dz, qrows, F, D)
	for i, u := range l.u[:qrows*F] {
		if u <= 0 {
			l.dr[i] = 0
		}
	}
	l.linearBackward(g.W1, g.B1, l.da, w.W1, l.c, l.dr, qrows, D, F)
	layerNormBackward(l.da, l.xhat2, l.rstd2, w.Norm2W, g.Norm2W, g.Norm2B, qrows, D)
	for i := range qrows * D {
		l.dy[i] += l.da[i]
	}
	// The attention: y = x + o·Wo + bo.
	l.linearBackward(g.Wo, g.Bo, l.do, w.Wo, l.o, l.dy, qrows, D, D)
	clear(l.dq[:qrows*D])
	clear(l.dk[:rows*D])
	clear(l.dv[:rows*D])
	for b := range l.windows {
		l.attendBackward(b)
	}
	// a1 feeds q (at the query rows), k and v: da = dq·Wqᵀ + dk·Wkᵀ + dv·Wvᵀ. The rows
	// without a query get no dq term: the zeros that Forward's would add.
	clear(l.da[:rows*D])
	simd.MatMulAdd(g.Wq, D, l.a1[q0:], 1, xs, l.dq, D, D, D, qrows)
	simd.VecMatAdd(g.Bq, l.ones[:qrows], l.dq, D)
	l.wT = bufs.Grow(l.wT, D*D)
	transpose(l.wT, w.Wq, D, D)
	simd.MatMulAdd(l.da[q0:], xs, l.dq, D, 1, l.wT, D, qrows, D, D)
	l.linearBackwardAdd(g.Wk, g.Bk, l.da, w.Wk, l.a1, l.dk, rows, D, D)
	l.linearBackwardAdd(g.Wv, g.Bv, l.da, w.Wv, l.a1, l.dv, rows, D, D)
	layerNormBackward(l.da, l.xhat1, l.rstd1, w.Norm1W, g.Norm1W, g.Norm1B, rows, D)
	if dx == nil {
		return
	}
	copy(dx[:rows*D], l.da[:rows*D])
	for r := range qrows {
		dxr, dyr := dx[q0+r*xs:q0+r*xs+D], l.dy[r*D:(r+1)*D]
		for i := range dxr {
			dxr[i] = dyr[i] + dxr[i]
		}
	}
}

// linearBackward, for out = in·W + b over rows, adds inᵀ·dOut into dW and the column sums
// of dOut into db, and writes dIn = dOut·Wᵀ.
func (l *TransformerLayer) linearBackward(dW, db, dIn, W, in, dOut []float32, rows, nIn, nOut int) {
	clear(dIn[:rows*nIn])
	l.linearBackwardAdd(dW, db, dIn, W, in, dOut, rows, nIn, nOut)
}

// linearBackwardAdd is linearBackward adding dOut·Wᵀ into dIn.
func (l *TransformerLayer) linearBackwardAdd(dW, db, dIn, W, in, dOut []float32, rows, nIn, nOut int) {
	simd.MatMulAdd(dW, nOut, in, 1, nIn, dOut, nOut, nIn, nOut, rows)
	simd.VecMatAdd(db, l.ones[:rows], dOut, nOut)
	l.wT = bufs.Grow(l.wT, nIn*nOut)
	transpose(l.wT, W, nIn, nOut)
	simd.MatMulAdd(dIn, nIn, dOut, nOut, 1, l.wT, nIn, rows, nIn, nOut)
}

// attendBackward adds window b's gradients of q, k and v from that of its attention
// output: for each head and query i, dp_j = do_i·v_j, ds_j = p_j·(dp_j − Σ p·dp), then
// dq_i += Σ ds_j·k_j/√dh, dk_j += ds_j·q_i/√dh, dv_j += p_j·do_i.
func (l *TransformerLayer) attendBackward(b int) {
	D, H, K, nq := l.Width, l.Heads, l.k, l.nq
	dh := D / H
	scale := float32(1 / math.Sqrt(float64(dh)))
	f := l.firstOf(b)
	ds := l.ds[:K]
	for h := range H {
		p := l.p[((b*H)+h)*nq*K : ((b*H)+h+1)*nq*K]
		for iq := range nq {
			i := K - nq + iq
			if i < f {
				continue
			}
			row := (b*nq+iq)*D + h*dh
			doi, qi, dqi := l.do[row:row+dh], l.q[row:row+dh], l.dq[row:row+dh]
			pi := p[iq*K : (iq+1)*K]
			dot := float32(0)
			for j := f; j <= i; j++ {
				ds[j] = simd.Dot(doi, l.v[(b*K+j)*D+h*dh:(b*K+j)*D+(h+1)*dh])
				dot += pi[j] * ds[j]
			}
			for j := f; j <= i; j++ {
				col := (b*K+j)*D + h*dh
				s := pi[j] * (ds[j] - dot) * scale
				kj, dkj, dvj := l.kk[col:col+dh], l.dk[col:col+dh], l.dv[col:col+dh]
				for e := range dh {
					dqi[e] += s * kj[e]
					dkj[e] += s * qi[e]
					dvj[e] += pi[j] * doi[e]
				}
			}
		}
	}
}

// check panics unless w has the layer's shapes.
func (l *TransformerLayer) check(call string, w TransformerWeights) {
	D, F := l.Width, l.MLP
	for _, t := range []struct {
		v    []float32
		want int
	}{{w.Norm1W, D}, {w.Norm1B, D}, {w.Norm2W, D}, {w.Norm2B, D}, {w.Wq, D * D}, {w.Wk, D * D}, {w.Wv, D * D}, {w.Wo, D * D},
		{w.Bq, D}, {w.Bk, D}, {w.Bv, D}, {w.Bo, D}, {w.W1, D * F}, {w.B1, F}, {w.W2, F * D}, {w.B2, D}} {
		if len(t.v) != t.want {
			panic(fmt.Sprintf("nn: TransformerLayer.%s: a weight of %d values, want %d (width %d, MLP %d)", call, len(t.v), t.want, D, F))
		}
	}
}

// grow sizes the buffers for windows windows of k positions, nq of them queries.
func (l *TransformerLayer) grow(rows, windows, k, nq int) {
	D, F := l.Width, l.MLP
	qrows := windows * nq
	for _, b := range []*[]float32{&l.xhat1, &l.a1, &l.kk, &l.v, &l.da, &l.dk, &l.dv} {
		*b = bufs.Grow(*b, rows*D)
	}
	for _, b := range []*[]float32{&l.q, &l.o, &l.y, &l.xhat2, &l.c, &l.dy, &l.dq, &l.do} {
		*b = bufs.Grow(*b, qrows*D)
	}
	l.u, l.r, l.dr = bufs.Grow(l.u, qrows*F), bufs.Grow(l.r, qrows*F), bufs.Grow(l.dr, qrows*F)
	l.ds = bufs.Grow(l.ds, k)
	l.rstd1, l.rstd2 = bufs.Grow(l.rstd1, rows), bufs.Grow(l.rstd2, qrows)
	l.p = bufs.Grow(l.p, windows*l.Heads*nq*k)
	for len(l.ones) < rows {
		l.ones = append(l.ones, 1)
	}
}

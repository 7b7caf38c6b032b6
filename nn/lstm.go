package nn

import (
	"fmt"

	"github.com/evolverl/evolve/internal/bufs"
	"github.com/evolverl/evolve/internal/simd"
)

// LSTMWeights are one LSTM layer's parameters, per gate q in PyTorch's order i, f, g, o:
//
//	Wih[q] [In, Hidden]      Whh[q] [Hidden, Hidden]      Bih[q], Bhh[q] [Hidden]
//
// stored [in, out] as the project stores Linear weights, so gate q's pre-activation of a row
// is x·Wih[q] + Bih[q] + h·Whh[q] + Bhh[q] with no transpose (PyTorch's weight_ih_l0 holds
// the transposes, stacked). The same type holds the gradients.
type LSTMWeights struct {
	Wih, Whh, Bih, Bhh [4][]float32
}

// LSTMLayer is one layer of a stacked LSTM, with PyTorch's equations for each row:
//
//	i = σ(x·Wii + bii + h·Whi + bhi)    f = σ(…)    g = tanh(…)    o = σ(…)
//	c' = f∘c + i∘g                      h' = o∘tanh(c')
//
// over time-major sequences with resets (see Forward), and the backward pass through time.
// A layer keeps every step's gates and states in buffers that grow to the largest
// steps·batch seen and are reused, so after a warm-up no call allocates. It is not safe for
// concurrent use; a stack of layers is a stack of LSTMLayers, each layer's y the next one's x.
//
// Every row is computed by the same float32 operations in the same order whatever the batch
// and the number of steps of the call: pre-activations are ((bih + bhh) + x·Wih) + h·Whh,
// each product summed over its inputs in order by the simd kernels. So one step at a time
// (acting) and a whole sequence at once (training) give bit-identical outputs, and a
// sequence's outputs do not depend on the other sequences of its batch.
type LSTMLayer struct {
	In, Hidden int // sizes of an input row and of the state h (and c)

	steps, batch int // shape of the last Forward; 0 before the first

	// Per row r = t·batch + b of the last Forward (G = 4·Hidden, H = Hidden):
	gates  []float32 // [rows, G]: pre-activations, then the gates i, f, g, o (H each, in this order)
	hp, cp []float32 // [rows, H]: h and c entering the step, after any reset
	c, tc  []float32 // [rows, H]: the cell after the step and its tanh
	reset  []bool    // [rows]: whether the state was zeroed before the step
	bias   []float32 // [G]: bih + bhh, added first so every row starts from the same sum

	// Scratch of Backward.
	dz     []float32 // [rows, G]: gradient of the pre-activations
	dh, dc []float32 // [batch, H]: gradient flowing into h and c of the step being done
	db     []float32 // [G]: bias gradient, the same for bih and bhh
	ones   []float32 // [rows] ones: db = ones·dz in the kernel
	whhT   []float32 // [G, H]: the Whh[q]ᵀ stacked, so dh = dz·whhT is one product
	wihT   []float32 // [G, In]: likewise for dx (wide inputs only, see Backward)
}

// NewLSTMLayer returns a layer with in inputs and hidden units; its buffers grow on the first
// Forward.
func NewLSTMLayer(in, hidden int) *LSTMLayer {
	if in < 1 || hidden < 1 {
		panic(fmt.Sprintf("nn: NewLSTMLayer(%d, %d): sizes must be positive", in, hidden))
	}
	return &LSTMLayer{In: in, Hidden: hidden}
}

// Forward runs batch sequences of steps steps. x is [steps·batch, In], time-major: step t of
// sequence b is row t·batch + b. h0 and c0 [batch, Hidden] are the initial state (nil means
// zeros). Before step t, h and c of sequence b are zeroed where starts[t·batch + b] ≠ 0 (an
// episode begins there; starts [steps·batch] may be nil: no resets). Forward writes h of
// every step to y [steps·batch, Hidden] and, when hT and cT [batch, Hidden] are not nil, the
// state after the last step into them; they may alias h0 and c0 (feeding the final state
// back one step at a time gives the same bits as one call over all steps). The weights are
// read in place; x is not kept (Backward takes it again). Forward and Backward are long
// because each is the gate equations written out once, step by step, and Backward mirrors
// Forward line by line; split, the two would no longer read side by side.
func (l *LSTMLayer) Forward(y, x []float32, steps, batch int, h0, c0, starts, hT, cT []float32, w LSTMWeights) {
	H, In, G := l.Hidden, l.In, 4*l.Hidden
	rows := steps * batch
	l.check("Forward", w)
	switch {
	case steps < 1 || batch < 1:
		panic(fmt.Sprintf("nn: LSTMLayer.Forward: %d steps of %d sequences", steps, batch))
	case len(x) < rows*In || len(y) < rows*H:
		panic(fmt.Sprintf("nn: LSTMLayer.Forward: x has %d values, y %d, want %d·%d and %d·%d", len(x), len(y), rows, In, rows, H))
	case starts != nil && len(starts) < rows:
		panic(fmt.Sprintf("nn: LSTMLayer.Forward: %d starts for %d rows", len(starts), rows))
	}
	for _, s := range [][]float32{h0, c0, hT, cT} {
		if s != nil && len(s) < batch*H {
			panic(fmt.Sprintf("nn: LSTMLayer.Forward: a state has %d values, want %d·%d", len(s), batch, H))
		}
	}
	l.grow(rows, batch)
	l.steps, l.batch = steps, batch

	for q := range 4 {
		for j, b := range w.Bih[q] {
			l.bias[q*H+j] = b + w.Bhh[q][j]
		}
	}
	// The input projections of all rows first: they do not depend on the recurrence.
	for r := range rows {
		copy(l.gates[r*G:(r+1)*G], l.bias)
	}
	for q := range 4 {
		simd.MatMulAdd(l.gates[q*H:], G, x, In, 1, w.Wih[q], H, rows, H, In)
	}
	for t := range steps {
		r0 := t * batch // the step's first row
		for b := range batch {
			r := r0 + b
			hp, cp := l.hp[r*H:(r+1)*H], l.cp[r*H:(r+1)*H]
			l.reset[r] = starts != nil && starts[r] != 0
			switch {
			case l.reset[r]:
				clear(hp)
				clear(cp)
			case t > 0:
				copy(hp, y[(r-batch)*H:(r-batch+1)*H])
				copy(cp, l.c[(r-batch)*H:(r-batch+1)*H])
			default:
				// h0 and c0 are read here, before hT and cT (maybe the same memory) are written.
				lstmCopyOrClear(hp, h0, b*H)
				lstmCopyOrClear(cp, c0, b*H)
			}
		}
		// h·Whh for the step's rows at once, also for a zeroed h (adding 0·w
		// changes nothing), so that a row's operations never depend on where
		// its state came from.
		for q := range 4 {
			simd.MatMulAdd(l.gates[r0*G+q*H:], G, l.hp[r0*H:], H, 1, w.Whh[q], H, batch, H, H)
		}
		for b := range batch {
			r := r0 + b
			z, cp := l.gates[r*G:(r+1)*G], l.cp[r*H:(r+1)*H]
			// The nonlinearities in the vector kernels, whole gates at a time.
			simd.Sigmoid(z[:2*H], z[:2*H]) // i, f
			simd.Tanh(z[2*H:3*H], z[2*H:3*H])
			simd.Sigmoid(z[3*H:G], z[3*H:G]) // o
			i, f, g, o := z[:H], z[H:2*H], z[2*H:3*H], z[3*H:G]
			c, tc, h := l.c[r*H:(r+1)*H], l.tc[r*H:(r+1)*H], y[r*H:(r+1)*H]
			for j := range H {
				c[j] = f[j]*cp[j] + i[j]*g[j]
			}
			simd.Tanh(tc, c)
			for j := range H {
				h[j] = o[j] * tc[j]
			}
		}
	}
	last := (steps - 1) * batch * H
	if hT != nil {
		copy(hT[:batch*H], y[last:last+batch*H])
	}
	if cT != nil {
		copy(cT[:batch*H], l.c[last:last+batch*H])
	}
}

// Backward, after Forward, takes dy [steps·batch, Hidden], the gradient of y (the final state
// gets none), adds the gradient of every weight into g (laid out like w), and writes the
// gradient of x to dx [steps·batch, In] unless dx is nil. x and w are those of the Forward.
// No gradient flows into h0 and c0, nor through a reset into earlier steps.
//
// Going back from the last step, with dh = dy + (the gradient from step t+1 through h·Whh)
// and dc the gradient from step t+1 through f∘c:
//
//	dc += dh∘o∘(1 − tanh²c')    do = dh∘tanh c'    di = dc∘g    dg = dc∘i    df = dc∘c
//	dz = (di∘i(1−i), df∘f(1−f), dg∘(1−g²), do∘o(1−o)),  then  dh ← dz·Whhᵀ,  dc ← dc∘f
//
// and after the loop, over all rows at once: dWih += xᵀ·dz, dWhh += hᵀ·dz (h entering each
// step), dbih = dbhh = Σ dz, dx = dz·Wihᵀ. It is long for Forward's reason: it mirrors
// Forward line by line.
func (l *LSTMLayer) Backward(dx, dy, x []float32, w, g LSTMWeights) {
	H, In, G := l.Hidden, l.In, 4*l.Hidden
	steps, batch := l.steps, l.batch
	rows := steps * batch
	l.check("Backward", w)
	l.check("Backward (gradient)", g)
	switch {
	case rows == 0:
		panic("nn: LSTMLayer.Backward: no Forward before")
	case len(dy) < rows*H || len(x) < rows*In || dx != nil && len(dx) < rows*In:
		panic(fmt.Sprintf("nn: LSTMLayer.Backward: dy has %d values, x %d, dx %d, want %d·%d, %d·%d", len(dy), len(x), len(dx), rows, H, rows, In))
	}
	for q := range 4 {
		transpose(l.whhT[q*H*H:(q+1)*H*H], w.Whh[q], H, H)
	}
	dhs, dcs := l.dh[:batch*H], l.dc[:batch*H]
	clear(dhs)
	clear(dcs)
	for t := steps - 1; t >= 0; t-- {
		r0 := t * batch // the step's first row
		for b := range batch {
			r := r0 + b
			a, dz := l.gates[r*G:(r+1)*G], l.dz[r*G:(r+1)*G]
			ai, af, ag, ao := a[:H], a[H:2*H], a[2*H:3*H], a[3*H:G]
			di, df, dg, do := dz[:H], dz[H:2*H], dz[2*H:3*H], dz[3*H:G]
			dh, dc := dhs[b*H:(b+1)*H], dcs[b*H:(b+1)*H]
			dyr, cp, tc := dy[r*H:(r+1)*H], l.cp[r*H:(r+1)*H], l.tc[r*H:(r+1)*H]
			for j := range H {
				i, f, gg, o := ai[j], af[j], ag[j], ao[j]
				dhj, tcj := dyr[j]+dh[j], tc[j]
				dcj := dc[j] + dhj*o*(1-tcj*tcj)
				di[j] = dcj * gg * i * (1 - i)
				df[j] = dcj * cp[j] * f * (1 - f)
				dg[j] = dcj * i * (1 - gg*gg)
				do[j] = dhj * tcj * o * (1 - o)
				dc[j] = dcj * f
			}
			clear(dh)
		}
		if t == 0 {
			break // into h0 and c0 nothing flows
		}
		// dh = dz·Whhᵀ for the step's rows at once, then zero again where a
		// reset made the state entering the step a constant: nothing flows
		// through a reset into earlier steps.
		simd.MatMulAdd(dhs, H, l.dz[r0*G:], G, 1, l.whhT, H, batch, H, G)
		for b := range batch {
			if l.reset[r0+b] {
				clear(dhs[b*H : (b+1)*H])
				clear(dcs[b*H : (b+1)*H])
			}
		}
	}

	dz := l.dz[:rows*G]
	clear(l.db)
	simd.VecMatAdd(l.db, l.ones[:rows], dz, G)
	for q := range 4 {
		for j, v := range l.db[q*H : (q+1)*H] {
			g.Bih[q][j] += v
			g.Bhh[q][j] += v
		}
		// dW[q] += xᵀ·dz[q] (hpᵀ for Whh), the transposes read with swapped strides.
		simd.MatMulAdd(g.Wih[q], H, x, 1, In, dz[q*H:], G, In, H, rows)
		simd.MatMulAdd(g.Whh[q], H, l.hp, 1, H, dz[q*H:], G, H, H, rows)
	}
	if dx == nil {
		return
	}
	if In < 8 {
		// Narrow inputs (observations) as dot products with the rows of Wih[q]:
		// the row kernels would run in their scalar tail.
		for r := range rows {
			dzr := dz[r*G : (r+1)*G]
			for k := range In {
				s := float32(0)
				for q := range 4 {
					s += simd.Dot(dzr[q*H:(q+1)*H], w.Wih[q][k*H:(k+1)*H])
				}
				dx[r*In+k] = s
			}
		}
		return
	}
	l.wihT = bufs.Grow(l.wihT, G*In)
	for q := range 4 {
		transpose(l.wihT[q*H*In:(q+1)*H*In], w.Wih[q], In, H)
	}
	clear(dx[:rows*In])
	simd.MatMulAdd(dx, In, dz, G, 1, l.wihT, In, rows, In, G)
}

// check panics unless w has the layer's shapes.
func (l *LSTMLayer) check(call string, w LSTMWeights) {
	checkGates("LSTMLayer", call, l.In, l.Hidden, w.Wih[:], w.Whh[:], w.Bih[:], w.Bhh[:])
}

// checkGates panics unless every gate q of a recurrent layer (the gates' slices of an
// LSTMWeights or GRUWeights) has an input matrix [in, h], a recurrent one [h, h] and two
// biases [h]; layer and call name the method in the message.
func checkGates(layer, call string, in, h int, wih, whh, bih, bhh [][]float32) {
	for q := range wih {
		if len(wih[q]) != in*h || len(whh[q]) != h*h || len(bih[q]) != h || len(bhh[q]) != h {
			panic(fmt.Sprintf("nn: %s.%s: gate %d has weights of %d, %d, %d, %d values, want %d·%d, %d·%d, %d, %d",
				layer, call, q, len(wih[q]), len(whh[q]), len(bih[q]), len(bhh[q]), in, h, h, h, h, h))
		}
	}
}

// grow sizes the buffers for rows rows of batch sequences.
func (l *LSTMLayer) grow(rows, batch int) {
	H, G := l.Hidden, 4*l.Hidden
	l.gates = bufs.Grow(l.gates, rows*G)
	l.dz = bufs.Grow(l.dz, rows*G)
	l.hp = bufs.Grow(l.hp, rows*H)
	l.cp = bufs.Grow(l.cp, rows*H)
	l.c = bufs.Grow(l.c, rows*H)
	l.tc = bufs.Grow(l.tc, rows*H)
	if cap(l.reset) < rows {
		l.reset = make([]bool, rows)
	}
	l.reset = l.reset[:rows]
	l.dh = bufs.Grow(l.dh, batch*H)
	l.dc = bufs.Grow(l.dc, batch*H)
	l.bias = bufs.Grow(l.bias, G)
	l.db = bufs.Grow(l.db, G)
	l.whhT = bufs.Grow(l.whhT, G*H)
	for len(l.ones) < rows {
		l.ones = append(l.ones, 1)
	}
}

// lstmCopyOrClear sets dst to src[off:off+len(dst)], or to zeros when src is nil.
func lstmCopyOrClear(dst, src []float32, off int) {
	if src == nil {
		clear(dst)
		return
	}
	copy(dst, src[off:off+len(dst)])
}

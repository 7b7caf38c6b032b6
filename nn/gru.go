package nn

import (
	"fmt"

	"github.com/evolverl/evolve/internal/bufs"
	"github.com/evolverl/evolve/internal/simd"
)

// GRUWeights are one GRU layer's parameters, per gate q in PyTorch's order r, z, n:
//
//	Wih[q] [In, Hidden]      Whh[q] [Hidden, Hidden]      Bih[q], Bhh[q] [Hidden]
//
// stored [in, out] as LSTMWeights are (PyTorch's weight_ih_l0 holds the transposes,
// stacked). The same type holds the gradients.
type GRUWeights struct {
	Wih, Whh, Bih, Bhh [3][]float32
}

// GRULayer is one layer of a stacked GRU, with PyTorch's equations for each row:
//
//	r = σ(x·Wir + bir + h·Whr + bhr)    z = σ(x·Wiz + biz + h·Whz + bhz)
//	n = tanh(x·Win + bin + r∘(h·Whn + bhn))    h' = n + z∘(h − n)
//
// (h' = (1 − z)∘n + z∘h, computed as PyTorch computes it), over time-major sequences with
// resets, and the backward pass through time. Its buffers grow to the largest steps·batch
// seen and are reused, so after a warm-up no call allocates. It is not safe for concurrent
// use; a stack of layers is a stack of GRULayers, each layer's y the next one's x.
//
// As for LSTMLayer, every row is computed by the same float32 operations in the same order
// whatever the batch and the number of steps of the call: the input part of each gate is
// bih + x·Wih, the hidden part bhh + h·Whh, each product summed in order by the simd
// kernels. So acting one step at a time and training on whole sequences give bit-identical
// outputs, and a sequence's outputs do not depend on the other sequences of its batch.
type GRULayer struct {
	In, Hidden int // sizes of an input row and of the state h

	steps, batch int // shape of the last Forward; 0 before the first

	// Per row r = t·batch + b of the last Forward (G = 3·Hidden, H = Hidden):
	gates []float32 // [rows, G]: the input parts, then the gates r, z, n (H each, in this order)
	hn    []float32 // [rows, H]: h·Whn + bhn, what r multiplies
	hp    []float32 // [rows, H]: h entering the step, after any reset
	reset []bool    // [rows]: whether the state was zeroed before the step
	hh    []float32 // [batch, G]: the hidden parts of the step being computed

	// Scratch of Backward.
	dzi  []float32 // [rows, G]: gradient of the input parts (r, z, n)
	dzh  []float32 // [rows, G]: gradient of the hidden parts (r, z, and r∘ that of n)
	dh   []float32 // [batch, H]: gradient flowing into h of the step being done
	db   []float32 // [G]: a bias gradient
	ones []float32 // [rows] ones: db = ones·dz in the kernel
	whhT []float32 // [G, H]: the Whh[q]ᵀ stacked, so dh = dzh·whhT is one product
	wihT []float32 // [G, In]: likewise for dx (wide inputs only)
}

// NewGRULayer returns a layer with in inputs and hidden units; its buffers grow on the first
// Forward.
func NewGRULayer(in, hidden int) *GRULayer {
	if in < 1 || hidden < 1 {
		panic(fmt.Sprintf("nn: NewGRULayer(%d, %d): sizes must be positive", in, hidden))
	}
	return &GRULayer{In: in, Hidden: hidden}
}

// Forward runs batch sequences of steps steps. x is [steps·batch, In], time-major: step t of
// sequence b is row t·batch + b. h0 [batch, Hidden] is the initial state (nil means zeros).
// Before step t, h of sequence b is zeroed where starts[t·batch + b] ≠ 0 (starts may be nil:
// no resets). Forward writes h of every step to y [steps·batch, Hidden] and, when hT
// [batch, Hidden] is not nil, the state after the last step into it; hT may alias h0. The
// weights are read in place; x is not kept (Backward takes it again).
func (l *GRULayer) Forward(y, x []float32, steps, batch int, h0, starts, hT []float32, w GRUWeights) {
	H, In, G := l.Hidden, l.In, 3*l.Hidden
	rows := steps * batch
	l.check("Forward", w)
	switch {
	case steps < 1 || batch < 1:
		panic(fmt.Sprintf("nn: GRULayer.Forward: %d steps of %d sequences", steps, batch))
	case len(x) < rows*In || len(y) < rows*H:
		panic(fmt.Sprintf("nn: GRULayer.Forward: x has %d values, y %d, want %d·%d and %d·%d", len(x), len(y), rows, In, rows, H))
	case starts != nil && len(starts) < rows:
		panic(fmt.Sprintf("nn: GRULayer.Forward: %d starts for %d rows", len(starts), rows))
	case h0 != nil && len(h0) < batch*H || hT != nil && len(hT) < batch*H:
		panic(fmt.Sprintf("nn: GRULayer.Forward: states of %d and %d values, want %d·%d", len(h0), len(hT), batch, H))
	}
	l.grow(rows, batch)
	l.steps, l.batch = steps, batch

	// The input parts of all rows first: they do not depend on the recurrence.
	for r := range rows {
		for q := range 3 {
			copy(l.gates[r*G+q*H:r*G+(q+1)*H], w.Bih[q])
		}
	}
	for q := range 3 {
		simd.MatMulAdd(l.gates[q*H:], G, x, In, 1, w.Wih[q], H, rows, H, In)
	}
	for t := range steps {
		r0 := t * batch // the step's first row
		for b := range batch {
			r := r0 + b
			hp := l.hp[r*H : (r+1)*H]
			l.reset[r] = starts != nil && starts[r] != 0
			switch {
			case l.reset[r]:
				clear(hp)
			case t > 0:
				copy(hp, y[(r-batch)*H:(r-batch+1)*H])
			default:
				// h0 is read here, before hT (maybe the same memory) is written.
				lstmCopyOrClear(hp, h0, b*H)
			}
			for q := range 3 {
				copy(l.hh[b*G+q*H:b*G+(q+1)*H], w.Bhh[q])
			}
		}
		// h·Whh for the step's rows at once, also for a zeroed h, so that a row's
		// operations never depend on where its state came from.
		for q := range 3 {
			simd.MatMulAdd(l.hh[q*H:], G, l.hp[r0*H:], H, 1, w.Whh[q], H, batch, H, H)
		}
		for b := range batch {
			l.cell(r0+b, b, y)
		}
	}
	if hT != nil {
		last := (steps - 1) * batch * H
		copy(hT[:batch*H], y[last:last+batch*H])
	}
}

// cell computes row r's gates and its h into y from the input parts in l.gates and sequence
// b's hidden parts in l.hh.
func (l *GRULayer) cell(r, b int, y []float32) {
	H, G := l.Hidden, 3*l.Hidden
	z, hh := l.gates[r*G:(r+1)*G], l.hh[b*G:(b+1)*G]
	for j := range 2 * H {
		z[j] += hh[j]
	}
	simd.Sigmoid(z[:2*H], z[:2*H]) // r, z
	hn := l.hn[r*H : (r+1)*H]
	copy(hn, hh[2*H:G])
	rg, n := z[:H], z[2*H:G]
	for j := range H {
		n[j] += rg[j] * hn[j]
	}
	simd.Tanh(n, n)
	zg, hp, h := z[H:2*H], l.hp[r*H:(r+1)*H], y[r*H:(r+1)*H]
	for j := range H {
		h[j] = n[j] + zg[j]*(hp[j]-n[j])
	}
}

// Backward, after Forward, takes dy [steps·batch, Hidden], the gradient of y (the final state
// gets none), adds the gradient of every weight into g (laid out like w), and writes the
// gradient of x to dx [steps·batch, In] unless dx is nil. x and w are those of the Forward.
// No gradient flows into h0, nor through a reset into earlier steps.
//
// Going back from the last step, with dh = dy + (the gradient from step t+1):
//
//	dn = dh∘(1 − z)    dz = dh∘(h − n)    an = dn∘(1 − n²)    dr = an∘hn
//	dzi = (dr∘r(1−r), dz∘z(1−z), an)       dzh = (dr∘r(1−r), dz∘z(1−z), an∘r)
//	dh ← dh∘z + dzh·Whhᵀ
//
// and after the loop, over all rows at once: dWih += xᵀ·dzi, dWhh += hᵀ·dzh (h entering
// each step), dbih = Σ dzi, dbhh = Σ dzh, dx = dzi·Wihᵀ.
func (l *GRULayer) Backward(dx, dy, x []float32, w, g GRUWeights) {
	H, In, G := l.Hidden, l.In, 3*l.Hidden
	steps, batch := l.steps, l.batch
	rows := steps * batch
	l.check("Backward", w)
	l.check("Backward (gradient)", g)
	switch {
	case rows == 0:
		panic("nn: GRULayer.Backward: no Forward before")
	case len(dy) < rows*H || len(x) < rows*In || dx != nil && len(dx) < rows*In:
		panic(fmt.Sprintf("nn: GRULayer.Backward: dy has %d values, x %d, dx %d, want %d·%d, %d·%d", len(dy), len(x), len(dx), rows, H, rows, In))
	}
	for q := range 3 {
		transpose(l.whhT[q*H*H:(q+1)*H*H], w.Whh[q], H, H)
	}
	dhs := l.dh[:batch*H]
	clear(dhs)
	for t := steps - 1; t >= 0; t-- {
		r0 := t * batch // the step's first row
		for b := range batch {
			l.cellBackward(r0+b, dhs[b*H:(b+1)*H], dy)
		}
		if t == 0 {
			break // into h0 nothing flows
		}
		simd.MatMulAdd(dhs, H, l.dzh[r0*G:], G, 1, l.whhT, H, batch, H, G)
		for b := range batch {
			if l.reset[r0+b] {
				clear(dhs[b*H : (b+1)*H])
			}
		}
	}

	dzi, dzh := l.dzi[:rows*G], l.dzh[:rows*G]
	l.addBiasGradient(g.Bih, dzi, rows)
	l.addBiasGradient(g.Bhh, dzh, rows)
	for q := range 3 {
		// dW[q] += xᵀ·dz[q] (hpᵀ for Whh), the transposes read with swapped strides.
		simd.MatMulAdd(g.Wih[q], H, x, 1, In, dzi[q*H:], G, In, H, rows)
		simd.MatMulAdd(g.Whh[q], H, l.hp, 1, H, dzh[q*H:], G, H, H, rows)
	}
	if dx == nil {
		return
	}
	l.wihT = bufs.Grow(l.wihT, G*In)
	for q := range 3 {
		transpose(l.wihT[q*H*In:(q+1)*H*In], w.Wih[q], In, H)
	}
	clear(dx[:rows*In])
	simd.MatMulAdd(dx, In, dzi, G, 1, l.wihT, In, rows, In, G)
}

// cellBackward writes row r's dzi and dzh from dh (the gradient of its h from later steps)
// and dy, and leaves in dh the part of the gradient of h entering the step that does not go
// through Whh: dh∘z.
func (l *GRULayer) cellBackward(r int, dh, dy []float32) {
	H, G := l.Hidden, 3*l.Hidden
	a, hn, hp := l.gates[r*G:(r+1)*G], l.hn[r*H:(r+1)*H], l.hp[r*H:(r+1)*H]
	ar, az, an := a[:H], a[H:2*H], a[2*H:G]
	di, dhh := l.dzi[r*G:(r+1)*G], l.dzh[r*G:(r+1)*G]
	dyr := dy[r*H : (r+1)*H]
	for j := range H {
		rg, zg, n := ar[j], az[j], an[j]
		d := dyr[j] + dh[j]
		dn := d * (1 - zg) * (1 - n*n)
		dr := dn * hn[j] * rg * (1 - rg)
		dz := d * (hp[j] - n) * zg * (1 - zg)
		di[j], di[H+j], di[2*H+j] = dr, dz, dn
		dhh[j], dhh[H+j], dhh[2*H+j] = dr, dz, dn*rg
		dh[j] = d * zg
	}
}

// addBiasGradient adds the column sums of dz [rows, 3·Hidden] into the gates' biases.
func (l *GRULayer) addBiasGradient(bias [3][]float32, dz []float32, rows int) {
	H := l.Hidden
	clear(l.db)
	simd.VecMatAdd(l.db, l.ones[:rows], dz, 3*H)
	for q := range 3 {
		for j, v := range l.db[q*H : (q+1)*H] {
			bias[q][j] += v
		}
	}
}

// check panics unless w has the layer's shapes.
func (l *GRULayer) check(call string, w GRUWeights) {
	checkGates("GRULayer", call, l.In, l.Hidden, w.Wih[:], w.Whh[:], w.Bih[:], w.Bhh[:])
}

// grow sizes the buffers for rows rows of batch sequences.
func (l *GRULayer) grow(rows, batch int) {
	H, G := l.Hidden, 3*l.Hidden
	l.gates = bufs.Grow(l.gates, rows*G)
	l.dzi = bufs.Grow(l.dzi, rows*G)
	l.dzh = bufs.Grow(l.dzh, rows*G)
	l.hn = bufs.Grow(l.hn, rows*H)
	l.hp = bufs.Grow(l.hp, rows*H)
	if cap(l.reset) < rows {
		l.reset = make([]bool, rows)
	}
	l.reset = l.reset[:rows]
	l.hh = bufs.Grow(l.hh, batch*G)
	l.dh = bufs.Grow(l.dh, batch*H)
	l.db = bufs.Grow(l.db, G)
	l.whhT = bufs.Grow(l.whhT, G*H)
	for len(l.ones) < rows {
		l.ones = append(l.ones, 1)
	}
}

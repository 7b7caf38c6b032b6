package nn

import (
	"strconv"

	"github.com/evolverl/evolve/internal/bufs"
	"github.com/evolverl/evolve/internal/simd"
	"github.com/evolverl/evolve/netconf"
)

// denseLayer is one Linear → [LayerNorm] → [activation] layer.
type denseLayer struct {
	name          string // tensor prefix, e.g. "encoder.mlp.0"
	in, out       int
	norm          bool
	act           netconf.Activation // "" for the output layer
	z             []float32          // x·W + b
	xhat          []float32          // normalised z (norm only)
	rstd          []float32          // 1/√(var + eps) per row (norm only)
	nb, yb        []float32          // buffers of the LayerNorm's output and of the activation's
	u             []float32          // activation input: z, or the LayerNorm's output in nb
	y             []float32          // layer output: u when there is no activation, else in yb
	du            []float32          // scratch for the backward pass
	t2            []float32          // scratch of the backward pass: Wᵀ, or dWᵀ of a narrow layer
	wt            []float32          // Wᵀ of a narrow layer, for the forward pass
	w, b, g, beta int                // tensor slots in the part's binding
}

func appendMLP(l []denseLayer, prefix string, in int, m netconf.MLP, b *binding) ([]denseLayer, int) {
	for i, h := range m.Hidden {
		l = append(l, newDenseLayer(prefix+"."+strconv.Itoa(i), in, h, m.LayerNorm, m.Activation, b))
		in = h
	}
	return l, in
}

func newDenseLayer(name string, in, out int, norm bool, act netconf.Activation, b *binding) denseLayer {
	l := denseLayer{name: name, in: in, out: out, norm: norm, act: act, g: -1, beta: -1}
	l.w = b.add(name+".weight", in*out)
	l.b = b.add(name+".bias", out)
	if norm {
		l.g = b.add(name+".norm.weight", out)
		l.beta = b.add(name+".norm.bias", out)
	}
	return l
}

// forwardLayers runs layers on x [rows, layers[0].in] and returns the last layer's output.
func forwardLayers(layers []denseLayer, b *binding, p netconf.Params, x []float32, rows int) []float32 {
	for i := range layers {
		x = layers[i].forward(b, p, x, rows)
	}
	return x
}

func (l *denseLayer) forward(b *binding, p netconf.Params, x []float32, rows int) []float32 {
	n := rows * l.out
	l.z = bufs.Grow(l.z, n)
	bias := b.data(p, l.b)
	for r := range rows {
		copy(l.z[r*l.out:(r+1)*l.out], bias)
	}
	w := b.data(p, l.w)
	if l.out < 8 {
		// A narrow layer (the output layer) as dot products with the
		// columns of W: the row kernels would run mostly in their scalar tail.
		l.wt = transpose(l.wt, w, l.in, l.out)
		for r := range rows {
			xr, zr := x[r*l.in:(r+1)*l.in], l.z[r*l.out:(r+1)*l.out]
			for j := range zr {
				zr[j] += simd.Dot(xr, l.wt[j*l.in:(j+1)*l.in])
			}
		}
	} else {
		simd.MatMulAdd(l.z, l.out, x, l.in, 1, w, l.out, rows, l.out, l.in)
	}
	l.u = l.z
	if l.norm {
		l.xhat = bufs.Grow(l.xhat, n)
		l.rstd = bufs.Grow(l.rstd, rows)
		l.nb = bufs.Grow(l.nb, n)
		layerNormForward(l.z, l.xhat, l.rstd, l.nb, b.data(p, l.g), b.data(p, l.beta), rows, l.out)
		l.u = l.nb
	}
	l.y = l.u
	if l.act != "" {
		l.yb = bufs.Grow(l.yb, n)
		l.y = l.yb
		activate(l.act, l.u, l.y)
	}
	return l.y
}

// backwardLayers propagates dOut, the gradient of the last layer's output, back through
// layers whose first input was x, adding parameter gradients into grad. The gradient of x is
// written to dx when dx is not nil. tmp holds two reusable buffers for the gradients between
// layers.
func backwardLayers(layers []denseLayer, b, gb *binding, p, grad netconf.Params, x, dOut, dx []float32, tmp *[2][]float32, ones []float32, rows int) {
	dy := dOut
	for i := len(layers) - 1; i >= 0; i-- {
		l := &layers[i]
		in := x
		if i > 0 {
			in = layers[i-1].y
		}
		var dIn []float32
		switch {
		case i == 0:
			dIn = dx // nil for the network's input: its gradient is not needed
		default:
			k := i & 1
			tmp[k] = bufs.Grow(tmp[k], rows*l.in)
			dIn = tmp[k]
		}
		l.backward(b, gb, p, grad, in, dy, dIn, ones, rows)
		dy = dIn
	}
}

// backward adds the layer's parameter gradients for the output gradient dy into grad and
// writes the input gradient to dIn (skipped when dIn is nil). in is the layer's input.
func (l *denseLayer) backward(b, gb *binding, p, grad netconf.Params, in, dy, dIn, ones []float32, rows int) {
	n := rows * l.out
	dz := dy
	if l.act != "" || l.norm {
		l.du = bufs.Grow(l.du, n)
		dz = l.du
		if l.act != "" {
			activateGrad(l.act, l.u, l.y, dy, dz)
		} else {
			copy(dz, dy)
		}
		if l.norm {
			layerNormBackward(dz, l.xhat, l.rstd, b.data(p, l.g), gb.data(grad, l.g), gb.data(grad, l.beta), rows, l.out)
		}
	}
	// db += Σ_r dz[r] as ones·dz, in the vector kernel (1·x + acc rounds as
	// x + acc does).
	simd.VecMatAdd(gb.data(grad, l.b), ones[:rows], dz, l.out)
	// dW += inᵀ·dz: A = inᵀ is in read with the strides swapped. A narrow
	// layer (the output layer) computes dWᵀ = dzᵀ·in instead, whose rows
	// are the wide side the kernels vectorise.
	dw := gb.data(grad, l.w)
	if l.out < 8 && l.in >= 8 {
		l.t2 = bufs.Grow(l.t2, l.out*l.in)
		clear(l.t2)
		simd.MatMulAdd(l.t2, l.in, dz, 1, l.out, in, l.in, l.out, l.in, rows)
		for i := range l.in {
			for j := range l.out {
				dw[i*l.out+j] += l.t2[j*l.in+i]
			}
		}
	} else {
		simd.MatMulAdd(dw, l.out, in, 1, l.in, dz, l.out, l.in, l.out, rows)
	}
	// dIn = dz·Wᵀ.
	if dIn != nil {
		l.t2 = transpose(l.t2, b.data(p, l.w), l.in, l.out)
		clear(dIn)
		simd.MatMulAdd(dIn, l.in, dz, l.out, 1, l.t2, l.in, rows, l.in, l.out)
	}
}

// transpose writes the transpose of the [r, c] matrix m into dst (grown to
// r·c) and returns it.
func transpose(dst, m []float32, r, c int) []float32 {
	dst = bufs.Grow(dst, r*c)
	m = m[:r*c]
	// Four rows at a time, so each write fills four adjacent floats; this
	// measured faster than both the plain loop and 8×8 tiles at 64×64.
	i := 0
	for ; i+4 <= r; i += 4 {
		r0 := m[i*c : i*c+c]
		r1 := m[(i+1)*c : (i+1)*c+c]
		r2 := m[(i+2)*c : (i+2)*c+c]
		r3 := m[(i+3)*c : (i+3)*c+c]
		for j := range r0 {
			d := dst[j*r+i : j*r+i+4]
			d[0], d[1], d[2], d[3] = r0[j], r1[j], r2[j], r3[j]
		}
	}
	for ; i < r; i++ {
		for j, v := range m[i*c : i*c+c] {
			dst[j*r+i] = v
		}
	}
	return dst
}

// geluC is √(2/π), the GELU tanh approximation's constant.
const geluC = 0.7978845608028654

// The bits of float32(1) and of LeakyReLU's slope float32(0.01), selected
// by negMask (nn/gorgonia's TestBackendsAgreeOnOutputsAndGradients checks the slope).
const one32, slope32 = 0x3f800000, 0x3c23d70a

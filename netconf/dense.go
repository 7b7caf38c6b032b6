package netconf

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Dense evaluates a network whose encoder is an MLP in plain Go, without a graph: forward
// passes for any number of rows and the backward pass that accumulates parameter gradients.
// For these small networks it is about ten times faster than a gorgonia tape machine, whose
// fixed cost per op dominates at batch sizes of 1 to a few hundred.
//
// It computes what Build computes, operation for operation: Linear (y = x·W + b with W
// stored [in, out]), LayerNorm (eps 1e-5, biased variance) and the seven activations, with
// gorgonia's derivatives also at the kinks (ReLU, LeakyReLU and ELU use x ≥ 0 for the
// positive branch, so ReLU′(0) = 1 and ELU′(0) = 2, as the graph built from Rectify gives).
//
// Weights are read in place from the Params handed to each call, so an optimizer that
// updates Data, or code that replaces a tensor's Data, is seen by the next call. Gradients
// are added into a Params laid out like the weights (Zeros gives one); the caller zeroes
// them. A Dense keeps its intermediate values and output in buffers that grow to the largest
// row count seen and are reused: after a warm-up no call allocates. Returned slices are views
// of those buffers, valid until the next call of the same kind; the input slices handed to
// the forward calls are kept (not copied) for the backward pass and must not change before it.
//
// The network splits at the latent layer, so two heads can share one encoder: run
// ForwardEncoder once, ForwardHead on each head's Dense with that latent, then BackwardHead on
// each, sum the latent gradients, and BackwardEncoder once. A Dense is not safe for
// concurrent use.
//
// The products run in vecMatAdd and dot (AVX2 and FMA kernels on amd64, plain Go elsewhere),
// so results differ from the graph's in the last bits (TestDenseMatchesGraph: 1e-5). Every row
// is computed by the same sequence of float32 operations whatever the row count, so a row's
// outputs do not depend on the batch it is part of: acting on N rows and training on a
// minibatch give the same log-probabilities.
type Dense struct {
	spec                     Spec
	enc                      []denseLayer // the MLP encoder's layers, then the latent layer
	head                     []denseLayer // the head's layers, then the output layer
	encRows, headRows        int
	x, lat                   []float32    // inputs of the last forward passes (caller's memory)
	dLat                     []float32    // gradient of the latent, returned by BackwardHead
	ones                     []float32    // ones, one per row, for the bias gradients
	dx                       [2][]float32 // gradients between layers, used in turn
	pEnc, pHead, gEnc, gHead binding
}

// denseLayer is one Linear → [LayerNorm] → [activation] layer.
type denseLayer struct {
	name          string // tensor prefix, e.g. "encoder.mlp.0"
	in, out       int
	norm          bool
	act           Activation // "" for the output layer
	z             []float32  // x·W + b
	xhat          []float32  // normalised z (norm only)
	rstd          []float32  // 1/√(var + eps) per row (norm only)
	nb, yb        []float32  // buffers of the LayerNorm's output and of the activation's
	u             []float32  // activation input: z, or the LayerNorm's output in nb
	y             []float32  // layer output: u when there is no activation, else in yb
	du            []float32  // scratch for the backward pass
	t1, t2        []float32  // scratch for the transposes of the backward pass
	wt            []float32  // Wᵀ of a narrow layer, for the forward pass
	w, b, g, beta int        // tensor slots in the part's binding
}

// binding maps a part's tensor names to their indices in one Params, cached by the identity
// of the Params' backing array so a lookup by name happens only when another Params comes.
type binding struct {
	first *Tensor
	n     int
	idx   []int
	names []string
	sizes []int
}

// NewDense returns an evaluator for s, whose encoder must be an MLP.
func NewDense(s Spec) (*Dense, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if s.Encoder != EncoderMLP || s.Dict() {
		return nil, fmt.Errorf("dense evaluator: %s: want a network with an %q encoder (not a dict network)", s, EncoderMLP)
	}
	d := &Dense{spec: s.Clone()}
	in := s.Input[0]
	d.enc, in = appendMLP(d.enc, "encoder.mlp", in, *s.MLP, &d.pEnc)
	d.enc = append(d.enc, newDenseLayer("latent", in, s.Latent.Size, false, s.Head.Activation, &d.pEnc))
	in = s.Latent.Size
	d.head, in = appendMLP(d.head, "head", in, s.Head, &d.pHead)
	d.head = append(d.head, newDenseLayer("out", in, s.Output, false, "", &d.pHead))
	d.gEnc = binding{names: d.pEnc.names, sizes: d.pEnc.sizes}
	d.gHead = binding{names: d.pHead.names, sizes: d.pHead.sizes}
	return d, nil
}

func appendMLP(l []denseLayer, prefix string, in int, m MLP, b *binding) ([]denseLayer, int) {
	for i, h := range m.Hidden {
		l = append(l, newDenseLayer(prefix+"."+strconv.Itoa(i), in, h, m.LayerNorm, m.Activation, b))
		in = h
	}
	return l, in
}

func newDenseLayer(name string, in, out int, norm bool, act Activation, b *binding) denseLayer {
	l := denseLayer{name: name, in: in, out: out, norm: norm, act: act, g: -1, beta: -1}
	l.w = b.add(name+".weight", in*out)
	l.b = b.add(name+".bias", out)
	if norm {
		l.g = b.add(name+".norm.weight", out)
		l.beta = b.add(name+".norm.bias", out)
	}
	return l
}

func (b *binding) add(name string, size int) int {
	b.names = append(b.names, name)
	b.sizes = append(b.sizes, size)
	return len(b.names) - 1
}

// errDenseState is returned by a backward call that has no matching forward pass.
var errDenseState = errors.New("dense evaluator: backward pass without a matching forward pass")

// resolve returns the data of the part's tensors in p, checking names and sizes.
func (b *binding) resolve(p Params) error {
	if len(p) == 0 {
		return fmt.Errorf("dense evaluator: no params, want %q and more", b.names[0])
	}
	if b.first != &p[0] || b.n != len(p) {
		if b.idx == nil {
			b.idx = make([]int, len(b.names))
		}
		for i, name := range b.names {
			b.idx[i] = -1
			for j := range p {
				if p[j].Name == name {
					b.idx[i] = j
					break
				}
			}
			if b.idx[i] < 0 {
				b.first = nil
				return fmt.Errorf("param %q: missing", name)
			}
		}
		b.first, b.n = &p[0], len(p)
	}
	for i, j := range b.idx {
		if len(p[j].Data) != b.sizes[i] || p[j].Name != b.names[i] {
			b.first = nil
			return fmt.Errorf("param %q: %d values, want %d", b.names[i], len(p[j].Data), b.sizes[i])
		}
	}
	return nil
}

func (b *binding) data(p Params, slot int) []float32 { return p[b.idx[slot]].Data }

// Spec returns the spec the evaluator was made for.
func (d *Dense) Spec() Spec { return d.spec }

// Forward runs the whole network on rows rows of x ([rows, input]) and returns the output
// [rows, output].
func (d *Dense) Forward(p Params, x []float32, rows int) ([]float32, error) {
	lat, err := d.ForwardEncoder(p, x, rows)
	if err != nil {
		return nil, err
	}
	return d.ForwardHead(p, lat, rows)
}

// ForwardEncoder runs the encoder and the latent layer (with the head's activation) and
// returns the latent [rows, latent size]. p needs the "encoder." and "latent." tensors.
func (d *Dense) ForwardEncoder(p Params, x []float32, rows int) ([]float32, error) {
	if err := d.pEnc.resolve(p); err != nil {
		return nil, err
	}
	if rows < 1 || len(x) < rows*d.spec.Input[0] {
		return nil, fmt.Errorf("dense evaluator: %d input values for %d rows of %d", len(x), rows, d.spec.Input[0])
	}
	d.x, d.encRows = x[:rows*d.spec.Input[0]], rows
	return forwardLayers(d.enc, &d.pEnc, p, d.x, rows), nil
}

// ForwardHead runs the head and the output layer on a latent [rows, latent size] and returns
// the output [rows, output]. p needs the "head." and "out." tensors only.
func (d *Dense) ForwardHead(p Params, latent []float32, rows int) ([]float32, error) {
	if err := d.pHead.resolve(p); err != nil {
		return nil, err
	}
	if rows < 1 || len(latent) < rows*d.spec.Latent.Size {
		return nil, fmt.Errorf("dense evaluator: %d latent values for %d rows of %d", len(latent), rows, d.spec.Latent.Size)
	}
	d.lat, d.headRows = latent[:rows*d.spec.Latent.Size], rows
	return forwardLayers(d.head, &d.pHead, p, d.lat, rows), nil
}

// Backward adds the gradient of the output, dOut [rows, output], with respect to every
// parameter into grad, after Forward.
func (d *Dense) Backward(p, grad Params, dOut []float32) error {
	dl, err := d.BackwardHead(p, grad, dOut)
	if err != nil {
		return err
	}
	return d.BackwardEncoder(p, grad, dl)
}

// BackwardHead adds the gradients of the head's and the output layer's parameters into grad
// and returns the gradient of the latent [rows, latent size], after ForwardHead.
func (d *Dense) BackwardHead(p, grad Params, dOut []float32) ([]float32, error) {
	rows := d.headRows
	if rows == 0 {
		return nil, errDenseState
	}
	if len(dOut) < rows*d.spec.Output {
		return nil, fmt.Errorf("dense evaluator: %d output gradients for %d rows of %d", len(dOut), rows, d.spec.Output)
	}
	if err := d.pHead.resolve(p); err != nil {
		return nil, err
	}
	if err := d.gHead.resolve(grad); err != nil {
		return nil, fmt.Errorf("gradient: %w", err)
	}
	d.dLat = grow32(d.dLat, rows*d.spec.Latent.Size)
	d.setOnes(rows)
	backwardLayers(d.head, &d.pHead, &d.gHead, p, grad, d.lat, dOut[:rows*d.spec.Output], d.dLat, &d.dx, d.ones, rows)
	return d.dLat, nil
}

// BackwardEncoder adds the gradients of the encoder's and the latent layer's parameters into
// grad, given the gradient of the latent dLatent [rows, latent size], after ForwardEncoder.
func (d *Dense) BackwardEncoder(p, grad Params, dLatent []float32) error {
	rows := d.encRows
	if rows == 0 {
		return errDenseState
	}
	if len(dLatent) < rows*d.spec.Latent.Size {
		return fmt.Errorf("dense evaluator: %d latent gradients for %d rows of %d", len(dLatent), rows, d.spec.Latent.Size)
	}
	if err := d.pEnc.resolve(p); err != nil {
		return err
	}
	if err := d.gEnc.resolve(grad); err != nil {
		return fmt.Errorf("gradient: %w", err)
	}
	d.setOnes(rows)
	backwardLayers(d.enc, &d.pEnc, &d.gEnc, p, grad, d.x, dLatent[:rows*d.spec.Latent.Size], nil, &d.dx, d.ones, rows)
	return nil
}

// setOnes makes d.ones at least rows ones long.
func (d *Dense) setOnes(rows int) {
	for len(d.ones) < rows {
		d.ones = append(d.ones, 1)
	}
}

func grow32(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// forwardLayers runs layers on x [rows, layers[0].in] and returns the last layer's output.
func forwardLayers(layers []denseLayer, b *binding, p Params, x []float32, rows int) []float32 {
	for i := range layers {
		x = layers[i].forward(b, p, x, rows)
	}
	return x
}

func (l *denseLayer) forward(b *binding, p Params, x []float32, rows int) []float32 {
	n := rows * l.out
	l.z = grow32(l.z, n)
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
				zr[j] += dot(xr, l.wt[j*l.in:(j+1)*l.in])
			}
		}
	} else {
		for r := range rows {
			vecMatAdd(l.z[r*l.out:(r+1)*l.out], x[r*l.in:(r+1)*l.in], w, l.out)
		}
	}
	l.u = l.z
	if l.norm {
		l.xhat = grow32(l.xhat, n)
		l.rstd = grow32(l.rstd, rows)
		l.nb = grow32(l.nb, n)
		layerNormForward(l.z, l.xhat, l.rstd, l.nb, b.data(p, l.g), b.data(p, l.beta), rows, l.out)
		l.u = l.nb
	}
	l.y = l.u
	if l.act != "" {
		l.yb = grow32(l.yb, n)
		l.y = l.yb
		activate(l.act, l.u, l.y)
	}
	return l.y
}

// backwardLayers propagates dOut, the gradient of the last layer's output, back through
// layers whose first input was x, adding parameter gradients into grad. The gradient of x is
// written to dx when dx is not nil. tmp holds two reusable buffers for the gradients between
// layers.
func backwardLayers(layers []denseLayer, b, gb *binding, p, grad Params, x, dOut, dx []float32, tmp *[2][]float32, ones []float32, rows int) {
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
			tmp[k] = grow32(tmp[k], rows*l.in)
			dIn = tmp[k]
		}
		l.backward(b, gb, p, grad, in, dy, dIn, ones, rows)
		dy = dIn
	}
}

// backward adds the layer's parameter gradients for the output gradient dy into grad and
// writes the input gradient to dIn (skipped when dIn is nil). in is the layer's input.
func (l *denseLayer) backward(b, gb *binding, p, grad Params, in, dy, dIn, ones []float32, rows int) {
	n := rows * l.out
	dz := dy
	if l.act != "" || l.norm {
		l.du = grow32(l.du, n)
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
	vecMatAdd(gb.data(grad, l.b), ones[:rows], dz, l.out)
	// dW += inᵀ·dz, row i of dW from column i of in. A narrow layer (the
	// output layer) computes dWᵀ = dzᵀ·in instead, whose rows are the wide
	// side the kernels vectorise.
	dw := gb.data(grad, l.w)
	if l.out < 8 && l.in >= 8 {
		l.t1 = transpose(l.t1, dz, rows, l.out)
		l.t2 = grow32(l.t2, l.out*l.in)
		clear(l.t2)
		for j := range l.out {
			vecMatAdd(l.t2[j*l.in:(j+1)*l.in], l.t1[j*rows:(j+1)*rows], in, l.in)
		}
		for i := range l.in {
			for j := range l.out {
				dw[i*l.out+j] += l.t2[j*l.in+i]
			}
		}
	} else {
		for i := range l.in {
			vecMatAddInc(dw[i*l.out:(i+1)*l.out], in[i:], l.in, rows, dz, l.out)
		}
	}
	// dIn = dz·Wᵀ.
	if dIn != nil {
		l.t2 = transpose(l.t2, b.data(p, l.w), l.in, l.out)
		clear(dIn)
		for r := range rows {
			vecMatAdd(dIn[r*l.in:(r+1)*l.in], dz[r*l.out:(r+1)*l.out], l.t2, l.in)
		}
	}
}

// transpose writes the transpose of the [r, c] matrix m into dst (grown to
// r·c) and returns it.
func transpose(dst, m []float32, r, c int) []float32 {
	dst = grow32(dst, r*c)
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

// layerNormForward normalises each row of z [rows, n] to zero mean and unit biased variance
// (xhat, with 1/√(var + eps) in rstd) and writes u = xhat·gamma + beta.
func layerNormForward(z, xhat, rstd, u, gamma, beta []float32, rows, n int) {
	for r := range rows {
		zr := z[r*n : (r+1)*n]
		mean := 0.0
		for _, v := range zr {
			mean += float64(v)
		}
		mean /= float64(n)
		vr := 0.0
		for _, v := range zr {
			dv := float64(v) - mean
			vr += dv * dv
		}
		s := 1 / math.Sqrt(vr/float64(n)+layerNormEps)
		rstd[r] = float32(s)
		xr, ur := xhat[r*n:(r+1)*n], u[r*n:(r+1)*n]
		for j, v := range zr {
			h := float32((float64(v) - mean) * s)
			xr[j] = h
			ur[j] = h*gamma[j] + beta[j]
		}
	}
}

// layerNormBackward turns du, the gradient of the LayerNorm's output, into the gradient of
// its input in place, adding the scale's and shift's gradients into dGamma and dBeta:
// dz = rstd·(dx̂ − mean(dx̂) − x̂·mean(dx̂·x̂)) with dx̂ = du·gamma.
func layerNormBackward(du, xhat, rstd, gamma, dGamma, dBeta []float32, rows, n int) {
	for r := range rows {
		dr, xr := du[r*n:(r+1)*n], xhat[r*n:(r+1)*n]
		var m1, m2 float64
		for j, g := range dr {
			dGamma[j] += g * xr[j]
			dBeta[j] += g
			dh := float64(g * gamma[j])
			m1 += dh
			m2 += dh * float64(xr[j])
		}
		m1 /= float64(n)
		m2 /= float64(n)
		s := float64(rstd[r])
		for j, g := range dr {
			dh := float64(g * gamma[j])
			dr[j] = float32(s * (dh - m1 - float64(xr[j])*m2))
		}
	}
}

// geluC is √(2/π), the GELU tanh approximation's constant.
var geluC = math.Sqrt(2 / math.Pi)

// The bits of float32(1) and of LeakyReLU's slope float32(0.01), selected
// by negMask (TestDenseMatchesGraph checks the slope).
const one32, slope32 = 0x3f800000, 0x3c23d70a

// negMask is all ones when v < 0 and zero when v ≥ 0 (−0 included, as the
// graph's x ≥ 0 has it): the branch-free select of ReLU and LeakyReLU, whose
// signs are as unpredictable as coin flips, so branches would mispredict.
func negMask(v float32) uint32 {
	return uint32((int64(0x80000000) - int64(math.Float32bits(v))) >> 63)
}

// activate writes act(u) to y, with the formulas of the graph builder.
func activate(act Activation, u, y []float32) {
	y = y[:len(u)]
	switch act {
	case ReLU:
		i := 0
		if n8 := len(u) &^ 7; hasFMA && n8 > 0 {
			relu8(&y[0], &u[0], n8)
			i = n8
		}
		for ; i < len(u); i++ {
			y[i] = max(u[i], 0) // NaN stays NaN, as in the graph
		}
	case LeakyReLU:
		for i, v := range u {
			m := negMask(v)
			y[i] = v * math.Float32frombits(one32&^m|slope32&m)
		}
	case Tanh:
		for i, v := range u {
			y[i] = float32(math.Tanh(float64(v)))
		}
	case Sigmoid:
		for i, v := range u {
			y[i] = float32(1 / (1 + math.Exp(-float64(v))))
		}
	case ELU:
		for i, v := range u {
			if v >= 0 {
				y[i] = v
			} else {
				y[i] = float32(math.Expm1(float64(v)))
			}
		}
	case Softsign:
		for i, v := range u {
			y[i] = v / (1 + float32(math.Abs(float64(v))))
		}
	case GELU:
		for i, v := range u {
			x := float64(v)
			y[i] = float32(0.5 * x * (1 + math.Tanh(geluC*(x+0.044715*x*x*x))))
		}
	}
}

// activateGrad writes dy·act′(u) to du; y = act(u). At the kinks it follows the graph: ReLU
// and LeakyReLU take the positive branch at 0, and ELU, built as relu(x) + expm1(−relu(−x)),
// gets the derivative of both branches there, 2.
func activateGrad(act Activation, u, y, dy, du []float32) {
	du = du[:len(u)]
	dy = dy[:len(u)]
	y = y[:len(u)]
	switch act {
	case ReLU:
		i := 0
		if n8 := len(u) &^ 7; hasFMA && n8 > 0 {
			reluGrad8(&du[0], &u[0], &dy[0], n8)
			i = n8
		}
		for ; i < len(u); i++ {
			du[i] = math.Float32frombits(math.Float32bits(dy[i]) &^ negMask(u[i]))
		}
	case LeakyReLU:
		for i, v := range u {
			m := negMask(v)
			du[i] = dy[i] * math.Float32frombits(one32&^m|slope32&m)
		}
	case Tanh:
		for i, t := range y {
			du[i] = dy[i] * (1 - t*t)
		}
	case Sigmoid:
		for i, s := range y {
			du[i] = dy[i] * s * (1 - s)
		}
	case ELU:
		for i, v := range u {
			g := float32(0)
			if v >= 0 {
				g = 1
			}
			if v <= 0 {
				g += float32(math.Exp(float64(v)))
			}
			du[i] = dy[i] * g
		}
	case Softsign:
		for i, v := range u {
			a := 1 + float32(math.Abs(float64(v)))
			du[i] = dy[i] / (a * a)
		}
	case GELU:
		for i, v := range u {
			x := float64(v)
			t := math.Tanh(geluC * (x + 0.044715*x*x*x))
			g := 0.5*(1+t) + 0.5*x*(1-t*t)*geluC*(1+3*0.044715*x*x)
			du[i] = dy[i] * float32(g)
		}
	}
}

package netconf

import (
	"fmt"
	"slices"
	"strings"
)

// Tensor is one named weight tensor: a row-major shape over a plain slice.
type Tensor struct {
	Name  string    `json:"name"`
	Shape []int     `json:"shape"`
	Data  []float32 `json:"data"`
}

// Params is the ordered list of a network's tensors, the single source of truth for its
// weights: networks read Data in place and an optimizer writes it.
//
// Names are stable and readable; the layouts are
//
//	encoder.mlp.{i}.weight        [in, out]  (y = x·W + b; transposed from PyTorch's Linear)
//	encoder.mlp.{i}.bias          [out]
//	encoder.mlp.{i}.norm.weight   [out]      (LayerNorm scale, when enabled; bias likewise)
//	encoder.cnn.{i}.weight        [out, in, k, k]  (as PyTorch's Conv2d)
//	encoder.cnn.{i}.bias          [out]
//	encoder.lstm.{l}.w_ih.{q}     [in, hidden]     q ∈ {i, f, g, o}; transposed from PyTorch
//	encoder.lstm.{l}.w_hh.{q}     [hidden, hidden]
//	encoder.lstm.{l}.b_ih.{q}     [hidden]         (and b_hh.{q}: PyTorch's two biases)
//	encoder.gru.{l}.*.{q}         as the LSTM's, q ∈ {r, z, n}
//	latent.weight, latent.bias    [encoder out, latent], [latent]; after a CNN the weight is
//	                              [C, H, W, latent] (the same memory as [C·H·W, latent])
//	head.{i}.weight, head.{i}.bias, head.{i}.norm.*   as the encoder's MLP
//	out.weight, out.bias          [last head layer, output], [output]
type Params []Tensor

// Tensor returns a pointer to the tensor called name, or nil.
func (p Params) Tensor(name string) *Tensor {
	for i := range p {
		if p[i].Name == name {
			return &p[i]
		}
	}
	return nil
}

// Names returns the tensor names in order.
func (p Params) Names() []string {
	n := make([]string, len(p))
	for i := range p {
		n[i] = p[i].Name
	}
	return n
}

// Size returns the total number of scalars.
func (p Params) Size() int {
	n := 0
	for i := range p {
		n += len(p[i].Data)
	}
	return n
}

// Clone returns a deep copy.
func (p Params) Clone() Params {
	c := make(Params, len(p))
	for i, t := range p {
		c[i] = Tensor{Name: t.Name, Shape: slices.Clone(t.Shape), Data: slices.Clone(t.Data)}
	}
	return c
}

// Filter returns the tensors whose name starts with one of prefixes, sharing their Data with
// p. An agent with a critic that shares the actor's encoder keeps only "head." and "out.".
func (p Params) Filter(prefixes ...string) Params {
	var f Params
	for _, t := range p {
		for _, pre := range prefixes {
			if strings.HasPrefix(t.Name, pre) {
				f = append(f, t)
				break
			}
		}
	}
	return f
}

// Validate checks that every tensor's Data has the size its Shape says and that names are
// unique.
func (p Params) Validate() error {
	seen := make(map[string]bool, len(p))
	for _, t := range p {
		if seen[t.Name] {
			return fmt.Errorf("param %q appears twice", t.Name)
		}
		seen[t.Name] = true
		if n := shapeSize(t.Shape); n != len(t.Data) {
			return fmt.Errorf("param %q: shape %v holds %d values, data has %d", t.Name, t.Shape, n, len(t.Data))
		}
	}
	return nil
}

func shapeSize(s []int) int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

// CopyOverlap copies the block that src and dst have in common — indices below both shapes
// on every axis, aligned at index 0 — from src into dst and leaves the rest of dst alone.
// Shapes must have the same number of axes; this is the primitive behind Transfer and
// Resize, also usable on optimizer moments.
func CopyOverlap(dst []float32, dstShape []int, src []float32, srcShape []int) {
	if len(dstShape) != len(srcShape) {
		panic(fmt.Sprintf("netconf.CopyOverlap: %d-axis dst shape %v, %d-axis src shape %v", len(dstShape), dstShape, len(srcShape), srcShape))
	}
	zero := make([]int, len(dstShape))
	copyBlock(dst, dstShape, zero, src, srcShape, zero, overlap(dstShape, srcShape))
}

func overlap(a, b []int) []int {
	e := make([]int, len(a))
	for i := range a {
		e[i] = min(a[i], b[i])
	}
	return e
}

// copyBlock copies the block of size extent starting at srcOff in src to dstOff in dst.
func copyBlock(dst []float32, dshape, doff []int, src []float32, sshape, soff, extent []int) {
	n := len(extent)
	if n == 0 {
		if len(dst) > 0 && len(src) > 0 {
			dst[0] = src[0]
		}
		return
	}
	for _, e := range extent {
		if e <= 0 {
			return
		}
	}
	dstride := strides(dshape)
	sstride := strides(sshape)
	idx := make([]int, n-1) // position over the outer axes; the last axis is copied as a run
	run := extent[n-1]
	for {
		di := doff[n-1]
		si := soff[n-1]
		for a := 0; a < n-1; a++ {
			di += (doff[a] + idx[a]) * dstride[a]
			si += (soff[a] + idx[a]) * sstride[a]
		}
		copy(dst[di:di+run], src[si:si+run])
		a := n - 2
		for ; a >= 0; a-- {
			idx[a]++
			if idx[a] < extent[a] {
				break
			}
			idx[a] = 0
		}
		if a < 0 {
			return
		}
	}
}

func strides(shape []int) []int {
	s := make([]int, len(shape))
	acc := 1
	for i := len(shape) - 1; i >= 0; i-- {
		s[i] = acc
		acc *= shape[i]
	}
	return s
}

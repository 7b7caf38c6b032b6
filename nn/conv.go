package nn

import (
	"fmt"

	"github.com/evolverl/evolve/internal/bufs"
	"github.com/evolverl/evolve/internal/simd"
)

// Conv2d is a 2-D convolution over NCHW images with a square kernel, a stride, no padding
// and a bias, as PyTorch's nn.Conv2d(In, Out, Kernel, stride=Stride) computes it:
//
//	y[s,o,i,j] = b[o] + Σ_{c<In, u<K, v<K} w[o,c,u,v] · x[s, c, i·Stride+u, j·Stride+v]
//
// for x [n, In, H, W], w [Out, In, K, K] (PyTorch's layout), b [Out] and y [n, Out, OH, OW],
// all row-major float32, K = Kernel.
//
// Both passes are matrix products over im2col columns, run by the register-tiled kernel
// simd.MatMulAdd. For a group of samples, col holds one column per output pixel,
// col[(c,u,v), (s,i,j)] = x[s, c, i·Stride+u, j·Stride+v], so that y[o, ·] = b[o] + w[o, ·]·col.
// A group puts the pixels of several samples side by side: a small image has only a few dozen
// output pixels, too few to fill the kernel's tiles, while a group's few hundred columns fill
// them and a 256-row block of col still fits in L2.
//
// A sample's y and dx are bit-identical whether it runs alone or in any batch, so acting and
// training see the same numbers. Each output is one fused multiply-add chain over (c,u,v) in
// order, and every column takes the same chain: the vector kernels run on a width padded to a
// multiple of 8, so no column falls into their scalar tail. dx is summed in a fixed order from
// the sample's own columns (see col2im). dw and db are sums over the batch, whose rounding
// depends on how it splits into groups.
//
// A Conv2d keeps scratch buffers for one group, which grow to the largest n seen; after that
// no call allocates. It is not safe for concurrent use.
type Conv2d struct {
	In, Out, Kernel, Stride int // input channels, output channels, kernel size, stride
	H, W                    int // input height and width
	OH, OW                  int // output height and width: (H−Kernel)/Stride + 1, (W−Kernel)/Stride + 1

	ckk   int // In·Kernel·Kernel: the length of a weight row, the rows of im2col
	p     int // OH·OW: one sample's output pixels, hence columns
	group int // samples per group

	// Scratch for one group, each a row-major matrix with ld columns: the group's g·p
	// columns, padded to a multiple of 8, then skewed so that ld is not a multiple of
	// 16 floats (64 bytes); with a power-of-two row stride the rows of col that a
	// kernel reads together fall into the same few cache sets and evict each other.
	ld   int
	col  []float32 // [1+ckk, ld]: a row of ones (for the bias), then the im2col of x
	out  []float32 // [Out, ld]: the group's outputs (Forward) or output gradients (Backward)
	dcol []float32 // [ckk, ld]: wᵀ·dy, the gradient of col's rows after the first
	wb   []float32 // [Out, 1+ckk]: row o is b[o] then w[o, ·], to go with col's ones
	// The weight gradient is a product over the group's columns, which the tile kernel
	// wants as the inner dimension, so one factor is transposed: dy, giving [db dw]ᵀ =
	// col·dyᵀ, when Out ≤ 1+ckk, else col, giving [db dw] = dy·colᵀ, whichever copy is
	// smaller. tr holds the transposed factor, one row per column of the group, its width
	// trw padded with zeros to a multiple of 8 so that the kernel has no scalar tail; gw
	// sums the product over the groups.
	dyT bool
	trw int
	tr  []float32 // [g·p, trw]
	gw  []float32 // [1+ckk, trw] if dyT, else [Out, trw]
}

// groupCols is about the number of columns of a group. Each pass of MatMulAdd's tile kernel
// streams a block of up to 256 rows of col (or of dy) of this width from L2 for every six
// rows of the result: 256·512 floats are 512 KiB, within the L2 of current x86 cores, and
// 512 columns make 32 tiles of 16 per row, so the per-tile overhead is small.
const groupCols = 512

// directPixels is the number of output pixels per sample from which, when a multiple of 8,
// the forward products go straight to y sample by sample instead of across a group.
const directPixels = 64

// NewConv2d returns the convolution of h×w images with in channels to out channels, with a
// kernel×kernel kernel moved by stride. It panics (message prefixed "nn: ") if a size is not
// positive or the kernel does not fit in the image.
func NewConv2d(in, out, kernel, stride, h, w int) *Conv2d {
	if in < 1 || out < 1 || kernel < 1 || stride < 1 || h < 1 || w < 1 {
		panic(fmt.Sprintf("nn: NewConv2d(in %d, out %d, kernel %d, stride %d, h %d, w %d): sizes must be positive", in, out, kernel, stride, h, w))
	}
	if kernel > h || kernel > w {
		panic(fmt.Sprintf("nn: NewConv2d: kernel %d does not fit in a %d×%d input", kernel, h, w))
	}
	c := &Conv2d{
		In: in, Out: out, Kernel: kernel, Stride: stride, H: h, W: w,
		OH: (h-kernel)/stride + 1, OW: (w-kernel)/stride + 1,
	}
	c.ckk = in * kernel * kernel
	c.p = c.OH * c.OW
	c.group = max(1, groupCols/c.p)
	c.dyT = out <= 1+c.ckk
	c.trw = pad8(1 + c.ckk)
	if c.dyT {
		c.trw = pad8(out)
	}
	return c
}

// Forward writes y [n, Out, OH, OW] = x [n, In, H, W] ⋆ w [Out, In, Kernel, Kernel] + b [Out].
func (c *Conv2d) Forward(y, x, w, b []float32, n int) {
	c.check("Forward", x, w, n)
	if len(y) < n*c.Out*c.p || len(b) < c.Out {
		panic(fmt.Sprintf("nn: Conv2d.Forward: y has %d values, b %d; want %d and %d", len(y), len(b), n*c.Out*c.p, c.Out))
	}
	ld := c.grow(n, false)
	// Each sum starts with the bias as its first term, b[o]·1, so that no pass over the
	// output is needed to put it there.
	kb := 1 + c.ckk
	for o := range c.Out {
		c.wb[o*kb] = b[o]
		copy(c.wb[o*kb+1:(o+1)*kb], w[o*c.ckk:(o+1)*c.ckk])
	}
	// With whole tiles of 8 columns per sample, from 64 on, the products go straight to y
	// sample by sample; for smaller images (or odd pixel counts) to out first, across the
	// group, then are copied to y. Either way each output is one FMA chain over col's
	// rows in order, whatever the group (see simd.MatMulAdd).
	direct := c.p%8 == 0 && c.p >= directPixels
	for s0 := 0; s0 < n; s0 += c.group {
		g := min(c.group, n-s0)
		c.im2col(x, s0, g, ld)
		if direct {
			for t := range g {
				ys := y[(s0+t)*c.Out*c.p : (s0+t+1)*c.Out*c.p]
				clear(ys)
				simd.MatMulAdd(ys, c.p, c.wb, kb, 1, c.col[t*c.p:], ld, c.Out, c.p, kb)
			}
			continue
		}
		width := pad8(g * c.p)
		for o := range c.Out {
			clear(c.out[o*ld : o*ld+width])
		}
		simd.MatMulAdd(c.out, ld, c.wb, kb, 1, c.col, ld, c.Out, width, kb)
		// out [Out, (s, pixel)] to y [s, Out, pixel]; the padding columns are dropped.
		for t := range g {
			ys := y[(s0+t)*c.Out*c.p : (s0+t+1)*c.Out*c.p]
			for o := range c.Out {
				copy(ys[o*c.p:(o+1)*c.p], c.out[o*ld+t*c.p:])
			}
		}
	}
}

// Backward adds the gradients of w and b for the output gradient dy [n, Out, OH, OW] into
// dw [Out, In, Kernel, Kernel] and db [Out], x [n, In, H, W] being the forward input, and
// writes the input gradient into dx [n, In, H, W] (overwriting it) unless dx is nil:
//
//	db[o]       += Σ_{s,i,j} dy[s,o,i,j]
//	dw[o,c,u,v] += Σ_{s,i,j} dy[s,o,i,j] · x[s, c, i·Stride+u, j·Stride+v]
//	dx[s,c,h,w]  = Σ_{o,u,v,i,j: i·Stride+u = h, j·Stride+v = w} w[o,c,u,v] · dy[s,o,i,j]
//
// In im2col terms, group by group: [db dw] += dy·colᵀ, and dx = col2im(wᵀ·dy).
func (c *Conv2d) Backward(dx, dw, db, dy, x, w []float32, n int) {
	c.check("Backward", x, w, n)
	if len(dy) < n*c.Out*c.p || len(dw) < c.Out*c.ckk || len(db) < c.Out || (dx != nil && len(dx) < n*c.In*c.H*c.W) {
		panic(fmt.Sprintf("nn: Conv2d.Backward: dy has %d values, dw %d, db %d, dx %d; want %d, %d, %d and %d (or nil dx)",
			len(dy), len(dw), len(db), len(dx), n*c.Out*c.p, c.Out*c.ckk, c.Out, n*c.In*c.H*c.W))
	}
	ld := c.grow(n, dx != nil)
	clear(c.gw)
	for s0 := 0; s0 < n; s0 += c.group {
		g := min(c.group, n-s0)
		cols := g * c.p
		c.im2col(x, s0, g, ld)
		// dy [s, Out, pixel] to out [Out, (s, pixel)], the layout of col, and when dy is
		// the transposed factor, to tr [(s, pixel), Out].
		for t := range g {
			dys := dy[(s0+t)*c.Out*c.p : (s0+t+1)*c.Out*c.p]
			for o := range c.Out {
				dyo := dys[o*c.p : (o+1)*c.p]
				copy(c.out[o*ld+t*c.p:o*ld+(t+1)*c.p], dyo)
				if c.dyT {
					for j, v := range dyo {
						c.tr[(t*c.p+j)*c.trw+o] = v
					}
				}
			}
		}
		// The sums of dw and db run over the group's columns; col's row of ones gives db.
		if c.dyT {
			simd.MatMulAdd(c.gw, c.trw, c.col, ld, 1, c.tr, c.trw, 1+c.ckk, c.trw, cols)
		} else {
			for r := range 1 + c.ckk {
				for j, v := range c.col[r*ld : r*ld+cols] {
					c.tr[j*c.trw+r] = v
				}
			}
			simd.MatMulAdd(c.gw, c.trw, c.out, ld, 1, c.tr, c.trw, c.Out, c.trw, cols)
		}
		if dx == nil {
			continue
		}
		// dcol = wᵀ·dy: row r sums column r of w (stride ckk) times the rows of dy. The
		// padding columns of out hold stale values; their dcol columns are never read.
		width := pad8(cols)
		for r := range c.ckk {
			clear(c.dcol[r*ld : r*ld+width])
		}
		simd.MatMulAdd(c.dcol, ld, w, 1, c.ckk, c.out, ld, c.ckk, width, c.Out)
		c.col2im(dx, s0, g, ld)
	}
	for o := range c.Out {
		dwo := dw[o*c.ckk : (o+1)*c.ckk]
		if c.dyT {
			db[o] += c.gw[o]
			for r := range dwo {
				dwo[r] += c.gw[(1+r)*c.trw+o]
			}
		} else {
			db[o] += c.gw[o*c.trw]
			for r := range dwo {
				dwo[r] += c.gw[o*c.trw+1+r]
			}
		}
	}
}

// check panics unless x holds n samples and w the weights.
func (c *Conv2d) check(method string, x, w []float32, n int) {
	if n < 1 || len(x) < n*c.In*c.H*c.W || len(w) < c.Out*c.ckk {
		panic(fmt.Sprintf("nn: Conv2d.%s: n %d, x has %d values, w %d; want n ≥ 1, %d and %d",
			method, n, len(x), len(w), n*c.In*c.H*c.W, c.Out*c.ckk))
	}
}

// grow sizes the scratch for groups of min(n, group) samples and returns its leading
// dimension. Buffers only grow, so once the largest n has been seen nothing allocates. The
// leading dimension changes with n, which moves the rows but not the results: a column's
// sums do not depend on where the rows start.
func (c *Conv2d) grow(n int, dcol bool) int {
	ld := pad8(min(n, c.group) * c.p)
	if ld%16 == 0 {
		ld += 8
	}
	c.col = bufs.Grow(c.col, (1+c.ckk)*ld)
	c.out = bufs.Grow(c.out, c.Out*ld)
	c.wb = bufs.Grow(c.wb, c.Out*(1+c.ckk))
	c.tr = bufs.Grow(c.tr, ld*c.trw)
	if c.dyT {
		c.gw = bufs.Grow(c.gw, (1+c.ckk)*c.trw)
	} else {
		c.gw = bufs.Grow(c.gw, c.Out*c.trw)
	}
	if dcol {
		c.dcol = bufs.Grow(c.dcol, c.ckk*ld)
	}
	if ld != c.ld {
		for i := range ld {
			c.col[i] = 1
		}
		c.ld = ld
	}
	return ld
}

// pad8 rounds n up to a multiple of 8, the width of the narrowest vector kernel.
func pad8(n int) int { return (n + 7) &^ 7 }

// im2col writes row 1+(ch,u,v) of col, col[1+(ch,u,v), t·p + i·OW + j] =
// x[s0+t, ch, i·Stride+u, j·Stride+v], for the g samples from s0.
//
// Most rows are shifted copies of an earlier one, since kernel entry (u, v) sees at output
// pixel (i, j) what (u−Stride, v) sees at (i+1, j), and what (u, v−Stride) sees at (i, j+1).
// So row (u, v) is row (u−Stride, v) moved left by OW columns, or row (u, v−Stride) moved
// left by one, in one copy for the whole group; only the pixels whose neighbour lies beyond
// the sample's last output row, or beyond the end of an output row, are then read from x.
// Only the Stride² rows per channel with u, v < Stride are gathered pixel by pixel, a few
// values per call. This measured three times faster than gathering every row.
func (c *Conv2d) im2col(x []float32, s0, g, ld int) {
	k, s, oh, ow, p := c.Kernel, c.Stride, c.OH, c.OW, c.p
	chw, cols := c.H*c.W, g*c.p
	for ch := range c.In {
		for u := range k {
			for v := range k {
				r := 1 + (ch*k+u)*k + v
				row := c.col[r*ld : r*ld+cols]
				switch {
				case u >= s:
					q := r - s*k // row (u−s, v)
					copy(row[:cols-ow], c.col[q*ld+ow:q*ld+cols])
					for t := range g {
						xc := x[((s0+t)*c.In+ch)*chw:]
						gatherStrided(row[t*p+(oh-1)*ow:(t+1)*p], xc[((oh-1)*s+u)*c.W+v:], s)
					}
				case v >= s:
					q := r - s // row (u, v−s)
					copy(row[:cols-1], c.col[q*ld+1:q*ld+cols])
					for t := range g {
						xc := x[((s0+t)*c.In+ch)*chw:]
						for i := range oh {
							row[t*p+i*ow+ow-1] = xc[(i*s+u)*c.W+(ow-1)*s+v]
						}
					}
				default:
					for t := range g {
						xc := x[((s0+t)*c.In+ch)*chw:]
						for i := range oh {
							gatherStrided(row[t*p+i*ow:t*p+(i+1)*ow], xc[(i*s+u)*c.W+v:], s)
						}
					}
				}
			}
		}
	}
}

// col2im writes into dx, for the g samples from s0, the adjoint of im2col applied to dcol:
//
//	dx[s0+t, ch, h, w] = Σ dcol[(ch,u,v), t·p + i·OW + j] over i·Stride+u = h, j·Stride+v = w.
//
// It undoes im2col's copies in reverse order. A row that im2col copied from row q is added
// back into row q, shifted the other way, in one vector add over the group (1·a + b in the
// kernel rounds as a + b does, wherever the element falls); first its entries that im2col
// read from x go to dx and are zeroed. The Stride² gathered rows per channel then go to dx
// entry by entry. Each dx value is thus summed in a fixed order from its sample's columns
// only. (The vector add also carries the zeroed entries across sample boundaries; x + 0 is x
// but for the sign of a zero x, which dx, cleared to +0 and only added to, does not keep.)
// dcol is consumed.
func (c *Conv2d) col2im(dx []float32, s0, g, ld int) {
	k, s, oh, ow, p := c.Kernel, c.Stride, c.OH, c.OW, c.p
	chw, cols := c.H*c.W, g*c.p
	clear(dx[s0*c.In*chw : (s0+g)*c.In*chw])
	one := c.col[:1] // col's row of ones
	for ch := range c.In {
		for u := k - 1; u >= 0; u-- {
			for v := k - 1; v >= 0; v-- {
				r := (ch*k+u)*k + v
				row := c.dcol[r*ld : r*ld+cols]
				switch {
				case u >= s:
					for t := range g {
						dxc := dx[((s0+t)*c.In+ch)*chw:]
						e := row[t*p+(oh-1)*ow : (t+1)*p]
						scatterAddStrided(dxc[((oh-1)*s+u)*c.W+v:], e, s)
						clear(e)
					}
					q := r - s*k
					simd.VecMatAdd(c.dcol[q*ld+ow:q*ld+cols], one, row, 0)
				case v >= s:
					for t := range g {
						dxc := dx[((s0+t)*c.In+ch)*chw:]
						for i := range oh {
							dxc[(i*s+u)*c.W+(ow-1)*s+v] += row[t*p+i*ow+ow-1]
							row[t*p+i*ow+ow-1] = 0
						}
					}
					q := r - s
					simd.VecMatAdd(c.dcol[q*ld+1:q*ld+cols], one, row, 0)
				default:
					for t := range g {
						dxc := dx[((s0+t)*c.In+ch)*chw:]
						for i := range oh {
							scatterAddStrided(dxc[(i*s+u)*c.W+v:], row[t*p+i*ow:t*p+(i+1)*ow], s)
						}
					}
				}
			}
		}
	}
}

// gatherStrided writes src[j·stride] to d[j] for every j of d.
func gatherStrided(d, src []float32, stride int) {
	if stride == 1 {
		copy(d, src)
		return
	}
	for j := range d {
		d[j] = src[j*stride]
	}
}

// scatterAddStrided adds e[j] to d[j·stride] for every j of e.
func scatterAddStrided(d, e []float32, stride int) {
	if stride == 1 {
		d = d[:len(e)]
		for j, v := range e {
			d[j] += v
		}
		return
	}
	for j, v := range e {
		d[j*stride] += v
	}
}

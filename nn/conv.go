package nn

import (
	"fmt"

	"github.com/evolverl/evolve/internal/simd"
)

// Conv2d is a 2-D convolution over NCHW images with a square kernel, a stride, no
// padding and a bias, as PyTorch's nn.Conv2d(In, Out, Kernel, stride=Stride) computes it:
//
//	y[s,o,i,j] = b[o] + Σ_{c<In, u<K, v<K} w[o,c,u,v] · x[s, c, i·Stride+u, j·Stride+v]
//
// with x [n, In, H, W], w [Out, In, K, K] (PyTorch's layout), b [Out] and
// y [n, Out, OH, OW], all row-major float32.
//
// Both passes are matrix products over im2col columns: for a group of samples, col holds one
// column per output pixel, col[(c,u,v), (s,i,j)] = x[s, c, i·Stride+u, j·Stride+v], so that
// y[o, ·] = b[o] + w[o, ·]·col. Grouping several samples puts a few hundred columns side by
// side, enough for the widest vector kernels even when one image has only a few dozen output
// pixels, while the group's columns stay in cache.
//
// Every output is computed by the same float32 operations whatever the batch: a pixel's
// column goes through the same vector kernel (the group width is padded to a multiple of 8,
// so no column falls into the kernels' scalar tail), summing over (c,u,v) in order, and the
// input gradient of a sample is gathered from its own columns in a fixed order. So a sample's
// y and dx are bit-identical whether it is run alone or within any batch. The weight and bias
// gradients are sums over the batch and depend on its grouping.
//
// A Conv2d keeps scratch buffers that grow to the largest group it has seen (at most
// groupCols columns); after that no call allocates. It is not safe for concurrent use.
type Conv2d struct {
	In, Out, Kernel, Stride int // input channels, output channels, kernel size, stride
	H, W                    int // input height and width
	OH, OW                  int // output height and width: (H−Kernel)/Stride + 1, (W−Kernel)/Stride + 1

	ckk   int // In·Kernel·Kernel: the length of a weight row and the rows of col
	p     int // OH·OW: the output pixels, hence columns, of one sample
	group int // samples per group: about groupCols columns

	// Scratch of one group, each a row-major matrix with ld columns (the group's columns,
	// rounded up to a multiple of 8).
	col  []float32 // [ckk, ld]: im2col of the group's inputs
	out  []float32 // [Out, ld]: the group's outputs (Forward) or output gradients (Backward)
	dcol []float32 // [ckk, ld]: wᵀ·dy, the gradient of col (Backward with dx)
	ones []float32 // at least a group's columns of ones, for the bias gradient as a dot product
}

// groupCols is the number of im2col columns a group aims at. Wide enough that the products
// run in the 64-column kernel with little overhead per call, small enough that a group's
// col and output (a few tens of KiB for small images) stay in L1 and L2.
const groupCols = 512

// tileCols is the width of the column tiles of the products: col's rows restricted to a
// tile stay in L1 while every output row passes over them.
const tileCols = 64

// NewConv2d returns a convolution from in channels of h×w images to out channels with a
// kernel×kernel kernel and the given stride. It panics (message prefixed "nn: ") if a size is
// not positive or the kernel does not fit in the image.
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
	return c
}

// Forward writes y [n, Out, OH, OW] = x [n, In, H, W] ⋆ w [Out, In, Kernel, Kernel] + b [Out].
func (c *Conv2d) Forward(y, x, w, b []float32, n int) {
	c.check("Forward", x, w, n)
	if len(y) < n*c.Out*c.p || len(b) < c.Out {
		panic(fmt.Sprintf("nn: Conv2d.Forward: y has %d values, b %d; want %d and %d", len(y), len(b), n*c.Out*c.p, c.Out))
	}
	ld := c.grow(n, false)
	for s0 := 0; s0 < n; s0 += c.group {
		g := min(c.group, n-s0)
		width := pad8(g * c.p) // columns computed; those past g·p are ignored
		c.im2col(x, s0, g, ld)
		for o := range c.Out {
			row := c.out[o*ld : o*ld+width]
			for j := range row {
				row[j] = b[o]
			}
		}
		// out[o, ·] += w[o, ·]·col, tile by tile so that the tile of col is reused from L1
		// by every output row.
		for j0 := 0; j0 < width; j0 += tileCols {
			j1 := min(j0+tileCols, width)
			for o := range c.Out {
				simd.VecMatAdd(c.out[o*ld+j0:o*ld+j1], w[o*c.ckk:(o+1)*c.ckk], c.col[j0:], ld)
			}
		}
		// Scatter [Out, (s, pixel)] to y's [s, Out, pixel].
		for k := range g {
			ys := y[(s0+k)*c.Out*c.p:]
			for o := range c.Out {
				copy(ys[o*c.p:(o+1)*c.p], c.out[o*ld+k*c.p:o*ld+(k+1)*c.p])
			}
		}
	}
}

// Backward adds the gradients of w and b for the output gradient dy [n, Out, OH, OW] into dw
// [Out, In, Kernel, Kernel] and db [Out], where x [n, In, H, W] is the forward input, and writes
// (not adds) the input gradient into dx [n, In, H, W] unless dx is nil:
//
//	db[o]       += Σ_{s,i,j} dy[s,o,i,j]
//	dw[o,c,u,v] += Σ_{s,i,j} dy[s,o,i,j] · x[s, c, i·Stride+u, j·Stride+v]
//	dx[s,c,h,w]  = Σ_{o,u,v,i,j: i·Stride+u = h, j·Stride+v = w} w[o,c,u,v] · dy[s,o,i,j]
//
// In im2col terms, per group: dw += dy·colᵀ, and dx is col2im of dcol = wᵀ·dy.
func (c *Conv2d) Backward(dx, dw, db, dy, x, w []float32, n int) {
	c.check("Backward", x, w, n)
	if len(dy) < n*c.Out*c.p || len(dw) < c.Out*c.ckk || len(db) < c.Out || (dx != nil && len(dx) < n*c.In*c.H*c.W) {
		panic(fmt.Sprintf("nn: Conv2d.Backward: dy has %d values, dw %d, db %d, dx %d; want %d, %d, %d and %d (or nil dx)",
			len(dy), len(dw), len(db), len(dx), n*c.Out*c.p, c.Out*c.ckk, c.Out, n*c.In*c.H*c.W))
	}
	ld := c.grow(n, dx != nil)
	for s0 := 0; s0 < n; s0 += c.group {
		g := min(c.group, n-s0)
		cols := g * c.p
		width := pad8(cols)
		c.im2col(x, s0, g, ld)
		// Gather dy's [s, Out, pixel] into out [Out, (s, pixel)], the layout of col's columns.
		for k := range g {
			dys := dy[(s0+k)*c.Out*c.p:]
			for o := range c.Out {
				copy(c.out[o*ld+k*c.p:o*ld+(k+1)*c.p], dys[o*c.p:(o+1)*c.p])
			}
		}
		// db and dw as dot products along the group's columns: the sums run over the
		// long side (pixels of every sample), which the dot kernel vectorises, whereas
		// both sides of dw (Out and In·K·K) can be as small as 9 or 16.
		for o := range c.Out {
			dyo := c.out[o*ld : o*ld+cols]
			db[o] += simd.Dot(dyo, c.ones)
			dwo := dw[o*c.ckk : (o+1)*c.ckk]
			for r := range dwo {
				dwo[r] += simd.Dot(dyo, c.col[r*ld:])
			}
		}
		if dx == nil {
			continue
		}
		// dcol = wᵀ·dy: row r of dcol sums column r of w (stride ckk) times the rows of dy.
		// The padding columns of out hold stale values; their dcol columns are not read.
		clear(c.dcol[:c.ckk*ld])
		for j0 := 0; j0 < width; j0 += tileCols {
			j1 := min(j0+tileCols, width)
			for r := range c.ckk {
				simd.VecMatAddInc(c.dcol[r*ld+j0:r*ld+j1], w[r:], c.ckk, c.Out, c.out[j0:], ld)
			}
		}
		c.col2im(dx, s0, g, ld)
	}
}

// check panics unless x and w hold n samples and the weights.
func (c *Conv2d) check(method string, x, w []float32, n int) {
	if n < 1 || len(x) < n*c.In*c.H*c.W || len(w) < c.Out*c.ckk {
		panic(fmt.Sprintf("nn: Conv2d.%s: n %d, x has %d values, w %d; want n ≥ 1, %d and %d",
			method, n, len(x), len(w), n*c.In*c.H*c.W, c.Out*c.ckk))
	}
}

// grow sizes the scratch for groups of min(n, group) samples and returns the leading
// dimension of the group matrices. Each buffer only grows, so once the largest n has been
// seen nothing allocates. The leading dimension changes with n, which moves rows but not
// results: a column's sums do not depend on where its rows start.
func (c *Conv2d) grow(n int, dcol bool) int {
	g := min(n, c.group)
	ld := pad8(g * c.p)
	c.col = growConv(c.col, c.ckk*ld)
	c.out = growConv(c.out, c.Out*ld)
	if dcol {
		c.dcol = growConv(c.dcol, c.ckk*ld)
	}
	if len(c.ones) < g*c.p {
		c.ones = make([]float32, g*c.p)
		for i := range c.ones {
			c.ones[i] = 1
		}
	}
	return ld
}

// growConv returns s resliced to length n, reallocated if its capacity is short.
func growConv(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// pad8 rounds n up to a multiple of 8, the width of the narrowest vector kernel.
func pad8(n int) int { return (n + 7) &^ 7 }

// im2col writes col[(ch,u,v), k·p + i·OW + j] = x[s0+k, ch, i·Stride+u, j·Stride+v] for the
// g samples from s0.
func (c *Conv2d) im2col(x []float32, s0, g, ld int) {
	hw := c.H * c.W
	for k := range g {
		xs := x[(s0+k)*c.In*hw : (s0+k+1)*c.In*hw]
		off := k * c.p
		r := 0
		for ch := range c.In {
			xc := xs[ch*hw : (ch+1)*hw]
			for u := range c.Kernel {
				for v := range c.Kernel {
					dst := c.col[r*ld+off : r*ld+off+c.p]
					r++
					for i := range c.OH {
						src := xc[(i*c.Stride+u)*c.W+v:]
						d := dst[i*c.OW : (i+1)*c.OW]
						if c.Stride == 1 {
							copy(d, src)
							continue
						}
						for j := range d {
							d[j] = src[j*c.Stride]
						}
					}
				}
			}
		}
	}
}

// col2im writes dx[s0+k, ch, h, w] = Σ dcol[(ch,u,v), k·p + i·OW + j] over the (u,v,i,j)
// with i·Stride+u = h and j·Stride+v = w, for the g samples from s0: the adjoint of im2col.
// The sum runs in a fixed order (u, v, then i, j), so a sample's dx depends only on its own
// columns.
func (c *Conv2d) col2im(dx []float32, s0, g, ld int) {
	hw := c.H * c.W
	for k := range g {
		dxs := dx[(s0+k)*c.In*hw : (s0+k+1)*c.In*hw]
		clear(dxs)
		off := k * c.p
		r := 0
		for ch := range c.In {
			dxc := dxs[ch*hw : (ch+1)*hw]
			for u := range c.Kernel {
				for v := range c.Kernel {
					src := c.dcol[r*ld+off : r*ld+off+c.p]
					r++
					for i := range c.OH {
						d := dxc[(i*c.Stride+u)*c.W+v:]
						sr := src[i*c.OW : (i+1)*c.OW]
						if c.Stride == 1 {
							d = d[:len(sr)]
							for j, v := range sr {
								d[j] += v
							}
							continue
						}
						for j, v := range sr {
							d[j*c.Stride] += v
						}
					}
				}
			}
		}
	}
}

package simd

import "fmt"

// matMulKC is the number of terms one pass of the tile kernels sums before
// moving to the next tiles: a kc×n block of B (128 KB for n = 128) stays in
// L2 while every row tile streams through it, and a tile's kc values of A
// per row stay in L1 across the column tiles. Splitting the sum changes no
// bits: C holds the float32 partial sum between passes, as the register
// would.
const matMulKC = 256

// MatMulAdd adds A·B to C for an m×k A and a k×n B: C[i·ldc + j] += Σ_l
// A(i, l)·b[l·ldb + j], where A(i, l) = a[i·ai + l·al] (so a row-major A
// has ai = lda, al = 1, and a transposed one ai = 1, al = lda). Strides
// are non-negative, C's rows do not overlap, and C overlaps neither A nor B.
//
// Each row of C gets the bits of VecMatAddInc(c[i·ldc : i·ldc+n], a[i·ai:],
// al, k, b, ldb), so a row's result does not depend on the other rows:
// columns below n&^7 are FMA chains over l in order from C's value, the
// rest chains of a rounded product and an add (see VecMatAddInc). With AVX2
// and FMA all rows but an odd last one go through register tiles of 6 (or
// 4, 2) rows × 16 (or 8) columns, and the columns past n&^7 through masked
// tiles of 6 (4, 2) rows, in which a B row loaded once serves every row of
// the tile, instead of each row streaming all of B; the odd last row is
// VecMatAddInc's.
func MatMulAdd(c []float32, ldc int, a []float32, ai, al int, b []float32, ldb int, m, n, k int) {
	if m <= 0 || n <= 0 || k <= 0 {
		return
	}
	if ldc < 0 || ai < 0 || al < 0 || ldb < 0 {
		panic(fmt.Sprintf("simd: MatMulAdd: negative stride (ldc %d, ai %d, al %d, ldb %d)", ldc, ai, al, ldb))
	}
	// The kernels read and write only within these bounds.
	_ = c[(m-1)*ldc+n-1]
	_ = a[(m-1)*ai+(k-1)*al]
	_ = b[(k-1)*ldb+n-1]
	n8 := n &^ 7
	tiled := 0 // rows 0..tiled-1 go through the tile kernels
	if HasAVX2FMA {
		tiled = m &^ 1
	}
	if tiled > 0 && n8 > 0 {
		for l0 := 0; l0 < k; l0 += matMulKC {
			kc := min(matMulKC, k-l0)
			for i := 0; i < tiled; {
				// Tiles of 6 rows, ending in 4 + 4 rather than 6 + 2: a
				// 2-row tile has too few accumulators to hide the FMA
				// latency and runs at half speed.
				rows := min(6, tiled-i)
				if tiled-i == 8 {
					rows = 4
				}
				ci, ax := c[i*ldc:], &a[i*ai+l0*al]
				for j := 0; j < n8; {
					w := 16
					if j+16 > n8 {
						w = 8
					}
					matMulTile(rows, w, &ci[j], ldc, ax, ai, al, &b[l0*ldb+j], ldb, kc)
					j += w
				}
				i += rows
			}
		}
	}
	if tiled > 0 && n8 < n {
		// The rows of a tail tile share each masked row of B, and their
		// chains hide the add's latency that one row's chain waits on.
		for i := 0; i < tiled; {
			rows := min(6, tiled-i)
			if tiled-i == 8 {
				rows = 4
			}
			matMulTailTile(rows, &c[i*ldc+n8], ldc, &a[i*ai], ai, al, &b[n8], ldb, k, n-n8)
			i += rows
		}
	}
	for i := tiled; i < m; i++ {
		VecMatAddInc(c[i*ldc:i*ldc+n], a[i*ai:], al, k, b, ldb)
	}
}

// matMulTailTile runs the tail kernel for the r < 8 columns of 6, 4 or 2
// rows.
func matMulTailTile(rows int, c *float32, ldc int, a *float32, ai, al int, b *float32, ldb, k, r int) {
	switch rows {
	case 6:
		matMul6xTail(c, ldc, a, ai, al, b, ldb, k, r)
	case 4:
		matMul4xTail(c, ldc, a, ai, al, b, ldb, k, r)
	default:
		matMul2xTail(c, ldc, a, ai, al, b, ldb, k, r)
	}
}

// matMulTile runs the kernel for a rows×w tile (rows 6, 4 or 2; w 16 or 8).
func matMulTile(rows, w int, c *float32, ldc int, a *float32, ai, al int, b *float32, ldb, k int) {
	switch {
	case rows == 6 && w == 16:
		matMul6x16(c, ldc, a, ai, al, b, ldb, k)
	case rows == 6:
		matMul6x8(c, ldc, a, ai, al, b, ldb, k)
	case rows == 4 && w == 16:
		matMul4x16(c, ldc, a, ai, al, b, ldb, k)
	case rows == 4:
		matMul4x8(c, ldc, a, ai, al, b, ldb, k)
	case w == 16:
		matMul2x16(c, ldc, a, ai, al, b, ldb, k)
	default:
		matMul2x8(c, ldc, a, ai, al, b, ldb, k)
	}
}

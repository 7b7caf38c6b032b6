#include "textflag.h"

// The tile kernels of MatMulAdd: func matMulRxW(c *float32, ldc int,
// a *float32, ai, al int, b *float32, ldb, k int) adds A·B to an R-row,
// W-column tile of C over k terms, for R = 6, 4, 2 and W = 16, 8. Each
// step l loads the W floats of B's row l once and, for every tile row i,
// broadcasts A(i, l) and does one FMA per 8 columns, so each B element
// serves R rows from a register. An element of C is thus an FMA chain over
// l in order starting from C's value, as in vecMat64: the same bits.
//
// Registers: DI, R13 rows 0 and 3 of C, R8 ldc in bytes (rows 1, 2, 4, 5 at
// (DI or R13)(R8*1 or 2)); SI, R12 A(0, l) and A(3, l), R10 ai and R11 al
// in bytes; DX row l of B, R9 ldb in bytes; CX terms left (k ≥ 1).
// Accumulators Y0–Y11 (row by row), Y12–Y13 the B row, Y14–Y15 broadcasts
// (alternating, so one row's FMAs need not wait for the next broadcast).

#define MATMUL_ARGS \
	MOVQ c+0(FP), DI; \
	MOVQ ldc+8(FP), R8; \
	SHLQ $2, R8; \
	MOVQ a+16(FP), SI; \
	MOVQ ai+24(FP), R10; \
	SHLQ $2, R10; \
	MOVQ al+32(FP), R11; \
	SHLQ $2, R11; \
	MOVQ b+40(FP), DX; \
	MOVQ ldb+48(FP), R9; \
	SHLQ $2, R9; \
	MOVQ k+56(FP), CX; \
	LEAQ (DI)(R8*2), R13; \
	ADDQ R8, R13; \
	LEAQ (SI)(R10*2), R12; \
	ADDQ R10, R12

// TERM16 adds A(i, l) (at src) times the 16 B values in Y12, Y13 to row i's
// accumulators y0, y1.
#define TERM16(src, bc, y0, y1) \
	VBROADCASTSS src, bc; \
	VFMADD231PS  Y12, bc, y0; \
	VFMADD231PS  Y13, bc, y1

// TERM8 is TERM16 for 8 columns (B in Y12).
#define TERM8(src, bc, y0) \
	VBROADCASTSS src, bc; \
	VFMADD231PS  Y12, bc, y0

// func matMul6x16(c *float32, ldc int, a *float32, ai, al int, b *float32, ldb, k int)
TEXT ·matMul6x16(SB), NOSPLIT, $0-64
	MATMUL_ARGS
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS (DI)(R8*1), Y2
	VMOVUPS 32(DI)(R8*1), Y3
	VMOVUPS (DI)(R8*2), Y4
	VMOVUPS 32(DI)(R8*2), Y5
	VMOVUPS (R13), Y6
	VMOVUPS 32(R13), Y7
	VMOVUPS (R13)(R8*1), Y8
	VMOVUPS 32(R13)(R8*1), Y9
	VMOVUPS (R13)(R8*2), Y10
	VMOVUPS 32(R13)(R8*2), Y11
loop6x16:
	VMOVUPS (DX), Y12
	VMOVUPS 32(DX), Y13
	TERM16((SI), Y14, Y0, Y1)
	TERM16((SI)(R10*1), Y15, Y2, Y3)
	TERM16((SI)(R10*2), Y14, Y4, Y5)
	TERM16((R12), Y15, Y6, Y7)
	TERM16((R12)(R10*1), Y14, Y8, Y9)
	TERM16((R12)(R10*2), Y15, Y10, Y11)
	ADDQ R11, SI
	ADDQ R11, R12
	ADDQ R9, DX
	DECQ CX
	JNZ  loop6x16
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, (DI)(R8*1)
	VMOVUPS Y3, 32(DI)(R8*1)
	VMOVUPS Y4, (DI)(R8*2)
	VMOVUPS Y5, 32(DI)(R8*2)
	VMOVUPS Y6, (R13)
	VMOVUPS Y7, 32(R13)
	VMOVUPS Y8, (R13)(R8*1)
	VMOVUPS Y9, 32(R13)(R8*1)
	VMOVUPS Y10, (R13)(R8*2)
	VMOVUPS Y11, 32(R13)(R8*2)
	VZEROUPPER
	RET

// func matMul6x8(c *float32, ldc int, a *float32, ai, al int, b *float32, ldb, k int)
TEXT ·matMul6x8(SB), NOSPLIT, $0-64
	MATMUL_ARGS
	VMOVUPS (DI), Y0
	VMOVUPS (DI)(R8*1), Y1
	VMOVUPS (DI)(R8*2), Y2
	VMOVUPS (R13), Y3
	VMOVUPS (R13)(R8*1), Y4
	VMOVUPS (R13)(R8*2), Y5
loop6x8:
	VMOVUPS (DX), Y12
	TERM8((SI), Y14, Y0)
	TERM8((SI)(R10*1), Y15, Y1)
	TERM8((SI)(R10*2), Y14, Y2)
	TERM8((R12), Y15, Y3)
	TERM8((R12)(R10*1), Y14, Y4)
	TERM8((R12)(R10*2), Y15, Y5)
	ADDQ R11, SI
	ADDQ R11, R12
	ADDQ R9, DX
	DECQ CX
	JNZ  loop6x8
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, (DI)(R8*1)
	VMOVUPS Y2, (DI)(R8*2)
	VMOVUPS Y3, (R13)
	VMOVUPS Y4, (R13)(R8*1)
	VMOVUPS Y5, (R13)(R8*2)
	VZEROUPPER
	RET

// func matMul4x16(c *float32, ldc int, a *float32, ai, al int, b *float32, ldb, k int)
TEXT ·matMul4x16(SB), NOSPLIT, $0-64
	MATMUL_ARGS
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS (DI)(R8*1), Y2
	VMOVUPS 32(DI)(R8*1), Y3
	VMOVUPS (DI)(R8*2), Y4
	VMOVUPS 32(DI)(R8*2), Y5
	VMOVUPS (R13), Y6
	VMOVUPS 32(R13), Y7
loop4x16:
	VMOVUPS (DX), Y12
	VMOVUPS 32(DX), Y13
	TERM16((SI), Y14, Y0, Y1)
	TERM16((SI)(R10*1), Y15, Y2, Y3)
	TERM16((SI)(R10*2), Y14, Y4, Y5)
	TERM16((R12), Y15, Y6, Y7)
	ADDQ R11, SI
	ADDQ R11, R12
	ADDQ R9, DX
	DECQ CX
	JNZ  loop4x16
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, (DI)(R8*1)
	VMOVUPS Y3, 32(DI)(R8*1)
	VMOVUPS Y4, (DI)(R8*2)
	VMOVUPS Y5, 32(DI)(R8*2)
	VMOVUPS Y6, (R13)
	VMOVUPS Y7, 32(R13)
	VZEROUPPER
	RET

// func matMul4x8(c *float32, ldc int, a *float32, ai, al int, b *float32, ldb, k int)
TEXT ·matMul4x8(SB), NOSPLIT, $0-64
	MATMUL_ARGS
	VMOVUPS (DI), Y0
	VMOVUPS (DI)(R8*1), Y1
	VMOVUPS (DI)(R8*2), Y2
	VMOVUPS (R13), Y3
loop4x8:
	VMOVUPS (DX), Y12
	TERM8((SI), Y14, Y0)
	TERM8((SI)(R10*1), Y15, Y1)
	TERM8((SI)(R10*2), Y14, Y2)
	TERM8((R12), Y15, Y3)
	ADDQ R11, SI
	ADDQ R11, R12
	ADDQ R9, DX
	DECQ CX
	JNZ  loop4x8
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, (DI)(R8*1)
	VMOVUPS Y2, (DI)(R8*2)
	VMOVUPS Y3, (R13)
	VZEROUPPER
	RET

// func matMul2x16(c *float32, ldc int, a *float32, ai, al int, b *float32, ldb, k int)
TEXT ·matMul2x16(SB), NOSPLIT, $0-64
	MATMUL_ARGS
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS (DI)(R8*1), Y2
	VMOVUPS 32(DI)(R8*1), Y3
loop2x16:
	VMOVUPS (DX), Y12
	VMOVUPS 32(DX), Y13
	TERM16((SI), Y14, Y0, Y1)
	TERM16((SI)(R10*1), Y15, Y2, Y3)
	ADDQ R11, SI
	ADDQ R9, DX
	DECQ CX
	JNZ  loop2x16
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, (DI)(R8*1)
	VMOVUPS Y3, 32(DI)(R8*1)
	VZEROUPPER
	RET

// func matMul2x8(c *float32, ldc int, a *float32, ai, al int, b *float32, ldb, k int)
TEXT ·matMul2x8(SB), NOSPLIT, $0-64
	MATMUL_ARGS
	VMOVUPS (DI), Y0
	VMOVUPS (DI)(R8*1), Y1
loop2x8:
	VMOVUPS (DX), Y12
	TERM8((SI), Y14, Y0)
	TERM8((SI)(R10*1), Y15, Y1)
	ADDQ R11, SI
	ADDQ R9, DX
	DECQ CX
	JNZ  loop2x8
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, (DI)(R8*1)
	VZEROUPPER
	RET

// TAIL_MASK loads into Y7 the lane mask of the first r columns (r < 8, in
// AX): the 8 lanes of tailMask from lane 8 − r, r of ones then zeros.
#define TAIL_MASK \
	SHLQ    $2, AX; \
	LEAQ    tailMask<>+32(SB), BX; \
	SUBQ    AX, BX; \
	VMOVDQU (BX), Y7

// TAIL adds A(i, l) (at src) times the masked B values in Y12 to row i's
// accumulator y, by a multiply and an add (see vecMatTail).
#define TAIL(src, bc, t, y) \
	VBROADCASTSS src, bc; \
	VMULPS       Y12, bc, t; \
	VADDPS       t, y, y

// func matMul6xTail(c *float32, ldc int, a *float32, ai, al int, b *float32, ldb, k, r int)
// vecMatTail for 6 rows at once: the r < 8 columns at c, through the lane
// mask Y7, six independent accumulator chains sharing each masked B row.
TEXT ·matMul6xTail(SB), NOSPLIT, $0-72
	MATMUL_ARGS
	MOVQ r+64(FP), AX
	TAIL_MASK
	VMASKMOVPS (DI), Y7, Y0
	VMASKMOVPS (DI)(R8*1), Y7, Y1
	VMASKMOVPS (DI)(R8*2), Y7, Y2
	VMASKMOVPS (R13), Y7, Y3
	VMASKMOVPS (R13)(R8*1), Y7, Y4
	VMASKMOVPS (R13)(R8*2), Y7, Y5
loop6xT:
	VMASKMOVPS (DX), Y7, Y12
	TAIL((SI), Y14, Y8, Y0)
	TAIL((SI)(R10*1), Y15, Y9, Y1)
	TAIL((SI)(R10*2), Y14, Y10, Y2)
	TAIL((R12), Y15, Y11, Y3)
	TAIL((R12)(R10*1), Y14, Y8, Y4)
	TAIL((R12)(R10*2), Y15, Y9, Y5)
	ADDQ R11, SI
	ADDQ R11, R12
	ADDQ R9, DX
	DECQ CX
	JNZ  loop6xT
	VMASKMOVPS Y0, Y7, (DI)
	VMASKMOVPS Y1, Y7, (DI)(R8*1)
	VMASKMOVPS Y2, Y7, (DI)(R8*2)
	VMASKMOVPS Y3, Y7, (R13)
	VMASKMOVPS Y4, Y7, (R13)(R8*1)
	VMASKMOVPS Y5, Y7, (R13)(R8*2)
	VZEROUPPER
	RET

// func matMul4xTail(c *float32, ldc int, a *float32, ai, al int, b *float32, ldb, k, r int)
// matMul6xTail for 4 rows.
TEXT ·matMul4xTail(SB), NOSPLIT, $0-72
	MATMUL_ARGS
	MOVQ r+64(FP), AX
	TAIL_MASK
	VMASKMOVPS (DI), Y7, Y0
	VMASKMOVPS (DI)(R8*1), Y7, Y1
	VMASKMOVPS (DI)(R8*2), Y7, Y2
	VMASKMOVPS (R13), Y7, Y3
loop4xT:
	VMASKMOVPS (DX), Y7, Y12
	TAIL((SI), Y14, Y8, Y0)
	TAIL((SI)(R10*1), Y15, Y9, Y1)
	TAIL((SI)(R10*2), Y14, Y10, Y2)
	TAIL((R12), Y15, Y11, Y3)
	ADDQ R11, SI
	ADDQ R11, R12
	ADDQ R9, DX
	DECQ CX
	JNZ  loop4xT
	VMASKMOVPS Y0, Y7, (DI)
	VMASKMOVPS Y1, Y7, (DI)(R8*1)
	VMASKMOVPS Y2, Y7, (DI)(R8*2)
	VMASKMOVPS Y3, Y7, (R13)
	VZEROUPPER
	RET

// func matMul2xTail(c *float32, ldc int, a *float32, ai, al int, b *float32, ldb, k, r int)
// matMul6xTail for 2 rows.
TEXT ·matMul2xTail(SB), NOSPLIT, $0-72
	MATMUL_ARGS
	MOVQ r+64(FP), AX
	TAIL_MASK
	VMASKMOVPS (DI), Y7, Y0
	VMASKMOVPS (DI)(R8*1), Y7, Y1
loop2xT:
	VMASKMOVPS (DX), Y7, Y12
	TAIL((SI), Y14, Y8, Y0)
	TAIL((SI)(R10*1), Y15, Y9, Y1)
	ADDQ R11, SI
	ADDQ R9, DX
	DECQ CX
	JNZ  loop2xT
	VMASKMOVPS Y0, Y7, (DI)
	VMASKMOVPS Y1, Y7, (DI)(R8*1)
	VZEROUPPER
	RET

// func vecMatTail(y, x, b *float32, k, ldb, incx, r int)
// vecMat8 for the r < 8 columns left of a row (see VecMatAddInc), through
// a lane mask, and with a multiply then an add instead of an FMA: the bits
// of the Go loop it replaces (yt[i] += float32(xl·br[i])), so results do
// not depend on which path ran. Masked-out lanes are neither read nor
// written. It lives here for the mask table, which is local to this file.
TEXT ·vecMatTail(SB), NOSPLIT, $0-56
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ k+24(FP), CX
	MOVQ ldb+32(FP), R8
	SHLQ $2, R8
	MOVQ incx+40(FP), R9
	SHLQ $2, R9
	MOVQ r+48(FP), AX
	TAIL_MASK
	VMASKMOVPS (DI), Y7, Y0
	TESTQ CX, CX
	JZ    doneT
loopT:
	VBROADCASTSS (SI), Y8
	VMASKMOVPS   (DX), Y7, Y9
	VMULPS       Y9, Y8, Y9
	VADDPS       Y9, Y0, Y0
	ADDQ R9, SI
	ADDQ R8, DX
	DECQ CX
	JNZ  loopT
doneT:
	VMASKMOVPS Y0, Y7, (DI)
	VZEROUPPER
	RET

// tailMask: eight lanes of ones, then eight of zeros; the 8 lanes from
// lane 8−r are the mask of the first r columns.
DATA tailMask<>+0(SB)/4, $0xffffffff
DATA tailMask<>+4(SB)/4, $0xffffffff
DATA tailMask<>+8(SB)/4, $0xffffffff
DATA tailMask<>+12(SB)/4, $0xffffffff
DATA tailMask<>+16(SB)/4, $0xffffffff
DATA tailMask<>+20(SB)/4, $0xffffffff
DATA tailMask<>+24(SB)/4, $0xffffffff
DATA tailMask<>+28(SB)/4, $0xffffffff
DATA tailMask<>+32(SB)/4, $0
DATA tailMask<>+36(SB)/4, $0
DATA tailMask<>+40(SB)/4, $0
DATA tailMask<>+44(SB)/4, $0
DATA tailMask<>+48(SB)/4, $0
DATA tailMask<>+52(SB)/4, $0
DATA tailMask<>+56(SB)/4, $0
DATA tailMask<>+60(SB)/4, $0
GLOBL tailMask<>(SB), RODATA|NOPTR, $64

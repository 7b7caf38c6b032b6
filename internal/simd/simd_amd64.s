#include "textflag.h"

// func cpuHasAVX2FMA() bool
// CPUID.1:ECX bits 12 (FMA), 27 (OSXSAVE), 28 (AVX); XGETBV(0) bits 1-2
// (the OS saves XMM and YMM state); CPUID.(7,0):EBX bit 5 (AVX2).
TEXT ·cpuHasAVX2FMA(SB), NOSPLIT, $0-1
	MOVB $0, ret+0(FP)
	XORL AX, AX
	CPUID
	CMPL AX, $7
	JB   no
	MOVL $1, AX
	XORL CX, CX
	CPUID
	MOVL CX, R8
	ANDL $0x18001000, R8
	CMPL R8, $0x18001000
	JNE  no
	XORL CX, CX
	XGETBV
	ANDL $6, AX
	CMPL AX, $6
	JNE  no
	MOVL $7, AX
	XORL CX, CX
	CPUID
	ANDL $0x20, BX
	JZ   no
	MOVB $1, ret+0(FP)
no:
	RET

// func vecMat64(y, x, b *float32, k, ldb, incx int)
// y[0:64] += Σ_l x[l·incx]·b[l·ldb : l·ldb+64], with one FMA per element and
// l in order.
TEXT ·vecMat64(SB), NOSPLIT, $0-48
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ k+24(FP), CX
	MOVQ ldb+32(FP), R8
	SHLQ $2, R8
	MOVQ incx+40(FP), R9
	SHLQ $2, R9
	VMOVUPS 0(DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	VMOVUPS 128(DI), Y4
	VMOVUPS 160(DI), Y5
	VMOVUPS 192(DI), Y6
	VMOVUPS 224(DI), Y7
	TESTQ CX, CX
	JZ    done64
loop64:
	VBROADCASTSS (SI), Y8
	VFMADD231PS 0(DX), Y8, Y0
	VFMADD231PS 32(DX), Y8, Y1
	VFMADD231PS 64(DX), Y8, Y2
	VFMADD231PS 96(DX), Y8, Y3
	VFMADD231PS 128(DX), Y8, Y4
	VFMADD231PS 160(DX), Y8, Y5
	VFMADD231PS 192(DX), Y8, Y6
	VFMADD231PS 224(DX), Y8, Y7
	ADDQ R9, SI
	ADDQ R8, DX
	DECQ CX
	JNZ  loop64
done64:
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	VMOVUPS Y6, 192(DI)
	VMOVUPS Y7, 224(DI)
	VZEROUPPER
	RET

// func vecMat32(y, x, b *float32, k, ldb, incx int)
// As vecMat64 for 32 columns.
TEXT ·vecMat32(SB), NOSPLIT, $0-48
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ k+24(FP), CX
	MOVQ ldb+32(FP), R8
	SHLQ $2, R8
	MOVQ incx+40(FP), R9
	SHLQ $2, R9
	VMOVUPS 0(DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	TESTQ CX, CX
	JZ    done32
loop32:
	VBROADCASTSS (SI), Y8
	VFMADD231PS 0(DX), Y8, Y0
	VFMADD231PS 32(DX), Y8, Y1
	VFMADD231PS 64(DX), Y8, Y2
	VFMADD231PS 96(DX), Y8, Y3
	ADDQ R9, SI
	ADDQ R8, DX
	DECQ CX
	JNZ  loop32
done32:
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VZEROUPPER
	RET

// func vecMat8(y, x, b *float32, k, ldb, incx int)
// As vecMat64 for 8 columns.
TEXT ·vecMat8(SB), NOSPLIT, $0-48
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ k+24(FP), CX
	MOVQ ldb+32(FP), R8
	SHLQ $2, R8
	MOVQ incx+40(FP), R9
	SHLQ $2, R9
	VMOVUPS 0(DI), Y0
	TESTQ CX, CX
	JZ    done8
loop8:
	VBROADCASTSS (SI), Y8
	VFMADD231PS 0(DX), Y8, Y0
	ADDQ R9, SI
	ADDQ R8, DX
	DECQ CX
	JNZ  loop8
done8:
	VMOVUPS Y0, 0(DI)
	VZEROUPPER
	RET

// func dot8(x, y *float32, n int) float32
// Σ x[i]·y[i] for n a multiple of 8: four 8-lane FMA accumulators over
// blocks of 32, one over the remaining blocks of 8, then a fixed reduction.
TEXT ·dot8(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
dloop32:
	CMPQ CX, $32
	JLT  dloop8
	VMOVUPS 0(SI), Y4
	VMOVUPS 32(SI), Y5
	VMOVUPS 64(SI), Y6
	VMOVUPS 96(SI), Y7
	VFMADD231PS 0(DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $32, CX
	JMP  dloop32
dloop8:
	CMPQ CX, $8
	JLT  dreduce
	VMOVUPS 0(SI), Y4
	VFMADD231PS 0(DI), Y4, Y0
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  dloop8
dreduce:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// func relu8(y, u *float32, n int)
// y = max(0, u) for n a multiple of 8. MAXPS returns its second operand, u,
// when either is NaN, so a NaN propagates as in the graph's x·[x ≥ 0]; a
// negative u gives +0, which equals the graph's −0.
TEXT ·relu8(SB), NOSPLIT, $0-24
	MOVQ y+0(FP), DI
	MOVQ u+8(FP), SI
	MOVQ n+16(FP), CX
	VXORPS Y1, Y1, Y1
rloop:
	VMOVUPS (SI), Y0
	VMAXPS  Y0, Y1, Y2
	VMOVUPS Y2, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ  rloop
	VZEROUPPER
	RET

// func reluGrad8(du, u, dy *float32, n int)
// du = dy where u ≥ 0 (−0 included), else 0, for n a multiple of 8.
TEXT ·reluGrad8(SB), NOSPLIT, $0-32
	MOVQ du+0(FP), DI
	MOVQ u+8(FP), SI
	MOVQ dy+16(FP), DX
	MOVQ n+24(FP), CX
	VXORPS Y1, Y1, Y1
gloop:
	VMOVUPS (SI), Y0
	VCMPPS  $0x1d, Y1, Y0, Y2
	VANDPS  (DX), Y2, Y2
	VMOVUPS Y2, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ  gloop
	VZEROUPPER
	RET

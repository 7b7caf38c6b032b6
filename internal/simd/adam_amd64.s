#include "textflag.h"

// func adamStep4(p, gr, m, v *float32, n int, c *AdamConsts)
// Adam.Update's per-element step for n elements (a multiple of 4), four
// float64 lanes at a time, with the same operations in the same order
// (no fused multiply-add), so the results are bit for bit those of Update.
TEXT ·adamStep4(SB), NOSPLIT, $0-48
	MOVQ p+0(FP), SI
	MOVQ gr+8(FP), DI
	MOVQ m+16(FP), BX
	MOVQ v+24(FP), DX
	MOVQ n+32(FP), CX
	MOVQ c+40(FP), R8
	VBROADCASTSD 0(R8), Y8   // β1
	VBROADCASTSD 8(R8), Y9   // 1 − β1
	VBROADCASTSD 16(R8), Y10 // β2
	VBROADCASTSD 24(R8), Y11 // 1 − β2
	VBROADCASTSD 32(R8), Y12 // step size
	VBROADCASTSD 40(R8), Y13 // √(1 − β2^t)
	VBROADCASTSD 48(R8), Y14 // ε
	VBROADCASTSD 56(R8), Y15 // smallest normal float32
	TESTQ CX, CX
	JZ    done
loop:
	VCVTPS2PD (DI), Y0 // g
	VCVTPS2PD (BX), Y1 // m
	VCVTPS2PD (DX), Y2 // v
	VCVTPS2PD (SI), Y3 // p
	// m ← β1·m + (1−β1)·g
	VMULPD Y8, Y1, Y1
	VMULPD Y9, Y0, Y4
	VADDPD Y4, Y1, Y1
	// v ← β2·v + ((1−β2)·g)·g
	VMULPD Y10, Y2, Y2
	VMULPD Y11, Y0, Y5
	VMULPD Y0, Y5, Y5
	VADDPD Y5, Y2, Y2
	// p ← p − (step·m) / (√v/√(1−β2^t) + ε)
	VSQRTPD Y2, Y6
	VDIVPD  Y13, Y6, Y6
	VADDPD  Y14, Y6, Y6
	VMULPD  Y12, Y1, Y7
	VDIVPD  Y6, Y7, Y7
	VSUBPD  Y7, Y3, Y3
	VCVTPD2PSY Y3, X3
	VMOVUPS X3, (SI)
	// m and v stored as float32, flushed to 0 below the smallest normal.
	VANDPD  64(R8), Y1, Y4
	VCMPPD  $1, Y15, Y4, Y4
	VANDNPD Y1, Y4, Y1
	VCVTPD2PSY Y1, X1
	VMOVUPS X1, (BX)
	VANDPD  64(R8), Y2, Y5
	VCMPPD  $1, Y15, Y5, Y5
	VANDNPD Y2, Y5, Y2
	VCVTPD2PSY Y2, X2
	VMOVUPS X2, (DX)
	ADDQ $16, SI
	ADDQ $16, DI
	ADDQ $16, BX
	ADDQ $16, DX
	SUBQ $4, CX
	JNZ  loop
done:
	VZEROUPPER
	RET

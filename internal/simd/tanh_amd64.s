#include "textflag.h"

// The constants of Tanh's rational approximation (see tanh.go): the clamp
// bounds ±9, then α1 … α13 of the odd numerator, then β0 … β6 of the even
// denominator, as float32 bits.
DATA tanhConsts<>+0(SB)/4, $0x41100000  // 9
DATA tanhConsts<>+4(SB)/4, $0xc1100000  // -9
DATA tanhConsts<>+8(SB)/4, $0x3ba059dc  // α1
DATA tanhConsts<>+12(SB)/4, $0x3a270ded // α3
DATA tanhConsts<>+16(SB)/4, $0x3779434a // α5
DATA tanhConsts<>+20(SB)/4, $0x335c0041 // α7
DATA tanhConsts<>+24(SB)/4, $0xaebd37ff // α9
DATA tanhConsts<>+28(SB)/4, $0x2a61337e // α11
DATA tanhConsts<>+32(SB)/4, $0xa59f25c0 // α13
DATA tanhConsts<>+36(SB)/4, $0x3ba059dd // β0
DATA tanhConsts<>+40(SB)/4, $0x3b14aa05 // β2
DATA tanhConsts<>+44(SB)/4, $0x38f895d6 // β4
DATA tanhConsts<>+48(SB)/4, $0x35a0d3d8 // β6
GLOBL tanhConsts<>(SB), RODATA|NOPTR, $52

// func tanh8(y, x *float32, n int)
// y = tanh(x) for n a multiple of 8, eight lanes at a time: x clamped to
// [−9, 9] (a NaN stays NaN: MINPS and MAXPS return their second source, x,
// when either is NaN), then x·P(x²)/Q(x²) by Horner's rule with fused
// multiply-adds. y may be x.
TEXT ·tanh8(SB), NOSPLIT, $0-24
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS tanhConsts<>+0(SB), Y14
	VBROADCASTSS tanhConsts<>+4(SB), Y15
tloop:
	VMOVUPS (SI), Y0
	VMINPS  Y0, Y14, Y0
	VMAXPS  Y0, Y15, Y0
	VMULPS  Y0, Y0, Y1
	// P = ((((((α13·x² + α11)·x² + α9)·x² + α7)·x² + α5)·x² + α3)·x² + α1)
	VBROADCASTSS tanhConsts<>+32(SB), Y2
	VBROADCASTSS tanhConsts<>+28(SB), Y3
	VFMADD213PS  Y3, Y1, Y2
	VBROADCASTSS tanhConsts<>+24(SB), Y3
	VFMADD213PS  Y3, Y1, Y2
	VBROADCASTSS tanhConsts<>+20(SB), Y3
	VFMADD213PS  Y3, Y1, Y2
	VBROADCASTSS tanhConsts<>+16(SB), Y3
	VFMADD213PS  Y3, Y1, Y2
	VBROADCASTSS tanhConsts<>+12(SB), Y3
	VFMADD213PS  Y3, Y1, Y2
	VBROADCASTSS tanhConsts<>+8(SB), Y3
	VFMADD213PS  Y3, Y1, Y2
	VMULPS       Y0, Y2, Y2
	// Q = ((β6·x² + β4)·x² + β2)·x² + β0
	VBROADCASTSS tanhConsts<>+48(SB), Y4
	VBROADCASTSS tanhConsts<>+44(SB), Y5
	VFMADD213PS  Y5, Y1, Y4
	VBROADCASTSS tanhConsts<>+40(SB), Y5
	VFMADD213PS  Y5, Y1, Y4
	VBROADCASTSS tanhConsts<>+36(SB), Y5
	VFMADD213PS  Y5, Y1, Y4
	VDIVPS       Y4, Y2, Y2
	VMOVUPS      Y2, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ  tloop
	VZEROUPPER
	RET

package simd

// Kernels names the arithmetic this build runs on this machine: "avx2-fma"
// (the assembly) or "go" (the plain-Go loops), then, where the compiler
// fuses a*b+c into one rounding in plain Go code (any architecture but
// amd64, and amd64 built with GOAMD64=v3 or above), the target: "go
// arm64", "avx2-fma amd64.v3". Results are bit for bit the same only
// between builds and machines that report the same name.
func Kernels() string {
	name := "go"
	if HasAVX2FMA {
		name = "avx2-fma"
	}
	if codeTarget != "" {
		name += " " + codeTarget
	}
	return name
}

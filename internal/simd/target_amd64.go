//go:build amd64 && !amd64.v3

package simd

// codeTarget is "" on amd64 below GOAMD64=v3, where Go code does not fuse
// multiply-adds: the build whose kernels were named before targets were.
const codeTarget = ""

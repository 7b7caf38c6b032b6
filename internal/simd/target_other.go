//go:build !amd64

package simd

import "runtime"

// codeTarget names the architecture: compilers for most of them (arm64,
// ppc64, s390x, riscv64) fuse a*b+c in Go code, and none rounds as amd64's
// default build does for certain.
const codeTarget = runtime.GOARCH

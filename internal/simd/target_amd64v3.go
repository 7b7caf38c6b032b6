//go:build amd64.v3

package simd

// codeTarget names GOAMD64=v3 (and v4, which sets the amd64.v3 tag too):
// the compiler fuses a*b+c in Go code into one FMA.
const codeTarget = "amd64.v3"

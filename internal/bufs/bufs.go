// Package bufs holds the one rule by which the numeric core reuses its
// buffers: a buffer is resliced to the length a call needs and reallocated
// only when its capacity is short, so that a step of a fixed size allocates
// nothing once its buffers have grown.
package bufs

// Grow returns s resliced to length n, or a new zeroed slice of length n
// when s's capacity is short. The values of a resliced s are left as they
// were: callers overwrite what they read.
func Grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

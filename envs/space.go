package envs

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

// Space describes the set of values an observation or action may take, in
// the flat []float32 form in which values cross the Env interface. Spaces
// returned by an env may share their slices with it: read them, never
// modify them.
type Space interface {
	// Shape is the space's natural shape: a Box's shape (C, H, W for
	// images), [] for a Discrete scalar, [n] for n components, and [FlatSize]
	// for a Dict.
	Shape() []int
	// FlatSize is the number of float32 values of one element in flat form.
	FlatSize() int
	// Sample writes a random element into dst, which must have FlatSize
	// values, drawing only from rng.
	Sample(rng *rand.Rand, dst []float32)
	// Contains reports whether x (in flat form) is an element of the space.
	Contains(x []float32) bool
	// Validate reports whether the space itself is well formed.
	Validate() error
	String() string
}

// maxFlatSize bounds the flat size of any space and maxChoices the number of
// choices of a discrete component (integers up to 2^24 are exact in
// float32). Spaces are read from agent files, which are never trusted, so a
// corrupt shape must fail validation rather than make a builder allocate
// without limit.
const (
	maxFlatSize = 1 << 28
	maxChoices  = 1 << 24
)

// Box is a (possibly unbounded) box in R^n: every value lies in
// [Low[i], High[i]]. Low and High are flat, in row-major order of Shape;
// ±Inf marks an unbounded side.
type Box struct {
	Dims []int
	Low  []float32
	High []float32
}

// NewBox returns a Box of the given shape with the same bounds on every
// value. Use ±math.Inf for unbounded sides.
func NewBox(low, high float32, shape ...int) Box {
	n := prod(shape)
	b := Box{Dims: append([]int(nil), shape...), Low: make([]float32, n), High: make([]float32, n)}
	for i := range n {
		b.Low[i], b.High[i] = low, high
	}
	return b
}

// NewBoxBounds returns a one-dimensional Box with per-value bounds.
func NewBoxBounds(low, high []float32) (Box, error) {
	b := Box{Dims: []int{len(low)}, Low: append([]float32(nil), low...), High: append([]float32(nil), high...)}
	return b, b.Validate()
}

// Shape returns the box's shape.
func (b Box) Shape() []int { return b.Dims }

// FlatSize returns the product of the shape.
func (b Box) FlatSize() int { return prod(b.Dims) }

// Validate checks the shape and that Low <= High everywhere.
func (b Box) Validate() error {
	if len(b.Dims) == 0 {
		return fmt.Errorf("box: shape %v must have at least one dimension (use [1] for a scalar)", b.Dims)
	}
	n := 1
	for _, d := range b.Dims {
		if d <= 0 || d > maxFlatSize/n {
			return fmt.Errorf("box: shape %v must have positive dimensions and at most %d values", b.Dims, maxFlatSize)
		}
		n *= d
	}
	if len(b.Low) != n || len(b.High) != n {
		return fmt.Errorf("box: shape %v needs %d bounds, got %d low and %d high", b.Dims, n, len(b.Low), len(b.High))
	}
	for i := range n {
		if math.IsNaN(float64(b.Low[i])) || math.IsNaN(float64(b.High[i])) || b.Low[i] > b.High[i] {
			return fmt.Errorf("box: bounds at index %d are [%v, %v]", i, b.Low[i], b.High[i])
		}
	}
	return nil
}

// Bounded reports whether every value has a finite lower and upper bound.
// Finite is not the same as meaningful: CartPole's velocities are bounded
// by ±MaxFloat32, so do not scale observations by bounds on this alone.
func (b Box) Bounded() bool {
	for i := range b.Low {
		if math.IsInf(float64(b.Low[i]), 0) || math.IsInf(float64(b.High[i]), 0) {
			return false
		}
	}
	return true
}

// Sample draws each value as Gymnasium does: uniform on a bounded interval,
// low + Exp(1) or high − Exp(1) on a half-bounded one, N(0, 1) on an unbounded
// one.
func (b Box) Sample(rng *rand.Rand, dst []float32) {
	for i := range b.Low {
		lo, hi := float64(b.Low[i]), float64(b.High[i])
		loInf, hiInf := math.IsInf(lo, -1), math.IsInf(hi, 1)
		var v float64
		switch {
		case loInf && hiInf:
			v = rng.NormFloat64()
		case loInf:
			v = hi - rng.ExpFloat64()
		case hiInf:
			v = lo + rng.ExpFloat64()
		default:
			v = lo + (hi-lo)*rng.Float64()
		}
		// Rounding to float32 can step just outside a bound.
		dst[i] = min(max(float32(v), b.Low[i]), b.High[i])
	}
}

// Contains reports whether x has the right length and every value lies
// within its bounds (NaN never does).
func (b Box) Contains(x []float32) bool {
	if len(x) != len(b.Low) {
		return false
	}
	for i, v := range x {
		if !(v >= b.Low[i] && v <= b.High[i]) {
			return false
		}
	}
	return true
}

// String is Box(low, high, shape), as Gymnasium prints a Box.
func (b Box) String() string {
	lo, hi := b.Low, b.High
	if uniform(lo) && uniform(hi) && len(lo) > 0 {
		return fmt.Sprintf("Box(%v, %v, %v)", lo[0], hi[0], b.Dims)
	}
	return fmt.Sprintf("Box(%v, %v, %v)", lo, hi, b.Dims)
}

// Discrete is the set {Start, …, Start+N−1}; an element travels as one
// float32 holding the integer.
type Discrete struct {
	N     int
	Start int
}

// Shape returns [] (a scalar), as Gymnasium does.
func (d Discrete) Shape() []int { return []int{} }

// FlatSize is 1.
func (d Discrete) FlatSize() int { return 1 }

// Validate checks that N is positive.
func (d Discrete) Validate() error {
	if d.N <= 0 || d.N > maxChoices || d.Start < -maxChoices || d.Start > maxChoices {
		return fmt.Errorf("discrete: n = %d, start = %d: n must be in [1, %d] and |start| <= %[3]d", d.N, d.Start, maxChoices)
	}
	return nil
}

// Sample draws uniformly.
func (d Discrete) Sample(rng *rand.Rand, dst []float32) {
	dst[0] = float32(d.Start + rng.IntN(d.N))
}

// SampleMasked draws uniformly among the choices whose mask entry is true.
// With every choice masked it returns Start, as Gymnasium does. The mask
// must have N entries; another length is a programming error and panics.
func (d Discrete) SampleMasked(rng *rand.Rand, mask []bool, dst []float32) {
	if len(mask) != d.N {
		panic(fmt.Sprintf("envs: %v: action mask of %d entries, want %d", d, len(mask), d.N))
	}
	dst[0] = float32(d.Start + sampleMask(rng, mask))
}

// Contains reports whether x is one integer in range.
func (d Discrete) Contains(x []float32) bool {
	return len(x) == 1 && isIntIn(x[0], d.Start, d.Start+d.N)
}

// String is Discrete(n), with the start when it is not 0.
func (d Discrete) String() string {
	if d.Start != 0 {
		return fmt.Sprintf("Discrete(%d, start=%d)", d.N, d.Start)
	}
	return fmt.Sprintf("Discrete(%d)", d.N)
}

// MultiDiscrete is a vector of independent discrete choices; component i
// takes values in {0, …, Nvec[i]−1}.
type MultiDiscrete struct {
	Nvec []int
}

// Shape returns [len(Nvec)].
func (m MultiDiscrete) Shape() []int { return []int{len(m.Nvec)} }

// FlatSize is the number of components.
func (m MultiDiscrete) FlatSize() int { return len(m.Nvec) }

// Validate checks that there is at least one component and every count is
// positive.
func (m MultiDiscrete) Validate() error {
	if len(m.Nvec) == 0 || len(m.Nvec) > maxFlatSize {
		return fmt.Errorf("multi-discrete: nvec has %d entries, want 1 to %d", len(m.Nvec), maxFlatSize)
	}
	total := 0
	for i, n := range m.Nvec {
		if n <= 0 || n > maxChoices {
			return fmt.Errorf("multi-discrete: nvec[%d] = %d must be in [1, %d]", i, n, maxChoices)
		}
		total += n
	}
	if total > maxFlatSize {
		return fmt.Errorf("multi-discrete: nvec %v has %d choices in all, more than %d", m.Nvec, total, maxFlatSize)
	}
	return nil
}

// Sample draws each component uniformly.
func (m MultiDiscrete) Sample(rng *rand.Rand, dst []float32) {
	for i, n := range m.Nvec {
		dst[i] = float32(rng.IntN(n))
	}
}

// SampleMasked draws each component among its legal choices; mask is the
// concatenation of the per-component masks (sum(Nvec) entries; another
// length panics).
func (m MultiDiscrete) SampleMasked(rng *rand.Rand, mask []bool, dst []float32) {
	if n, _ := MaskSize(m); len(mask) != n {
		panic(fmt.Sprintf("envs: %v: action mask of %d entries, want %d", m, len(mask), n))
	}
	off := 0
	for i, n := range m.Nvec {
		dst[i] = float32(sampleMask(rng, mask[off:off+n]))
		off += n
	}
}

// Contains reports whether every component is an integer in range.
func (m MultiDiscrete) Contains(x []float32) bool {
	if len(x) != len(m.Nvec) {
		return false
	}
	for i, v := range x {
		if !isIntIn(v, 0, m.Nvec[i]) {
			return false
		}
	}
	return true
}

// String is MultiDiscrete(nvec).
func (m MultiDiscrete) String() string { return fmt.Sprintf("MultiDiscrete(%v)", m.Nvec) }

// MultiBinary is a vector of N independent bits, each 0 or 1.
type MultiBinary struct {
	N int
}

// Shape returns [N].
func (m MultiBinary) Shape() []int { return []int{m.N} }

// FlatSize is N.
func (m MultiBinary) FlatSize() int { return m.N }

// Validate checks that N is positive.
func (m MultiBinary) Validate() error {
	if m.N <= 0 || m.N > maxFlatSize {
		return fmt.Errorf("multi-binary: n = %d must be in [1, %d]", m.N, maxFlatSize)
	}
	return nil
}

// Sample draws each bit with probability 1/2.
func (m MultiBinary) Sample(rng *rand.Rand, dst []float32) {
	for i := range m.N {
		dst[i] = float32(rng.IntN(2))
	}
}

// Contains reports whether x has N values, each exactly 0 or 1.
func (m MultiBinary) Contains(x []float32) bool {
	if len(x) != m.N {
		return false
	}
	for _, v := range x {
		if v != 0 && v != 1 {
			return false
		}
	}
	return true
}

// String is MultiBinary(n).
func (m MultiBinary) String() string { return fmt.Sprintf("MultiBinary(%d)", m.N) }

// Dict is an ordered collection of named subspaces. Its flat form is the
// concatenation of the subspaces' flat forms in key order.
type Dict struct {
	Keys   []string
	Spaces []Space
}

// NewDict returns a Dict after checking that keys are unique and non-empty
// and every subspace is valid.
func NewDict(keys []string, spaces []Space) (Dict, error) {
	d := Dict{Keys: append([]string(nil), keys...), Spaces: append([]Space(nil), spaces...)}
	return d, d.Validate()
}

// Shape returns [FlatSize].
func (d Dict) Shape() []int { return []int{d.FlatSize()} }

// FlatSize is the sum of the subspaces' flat sizes.
func (d Dict) FlatSize() int {
	n := 0
	for _, s := range d.Spaces {
		n += s.FlatSize()
	}
	return n
}

// Validate checks keys and every subspace.
func (d Dict) Validate() error {
	if len(d.Keys) == 0 || len(d.Keys) != len(d.Spaces) {
		return fmt.Errorf("dict: %d keys for %d spaces (need at least one of each, equally many)", len(d.Keys), len(d.Spaces))
	}
	seen := make(map[string]bool, len(d.Keys))
	total := 0
	for i, k := range d.Keys {
		if k == "" || seen[k] {
			return fmt.Errorf("dict: key %q is empty or repeated", k)
		}
		seen[k] = true
		if d.Spaces[i] == nil {
			return fmt.Errorf("dict: key %q has no space", k)
		}
		if err := d.Spaces[i].Validate(); err != nil {
			return fmt.Errorf("dict: key %q: %w", k, err)
		}
		if total += d.Spaces[i].FlatSize(); total > maxFlatSize {
			return fmt.Errorf("dict: more than %d values in all", maxFlatSize)
		}
	}
	return nil
}

// Offset returns where key's values start and end in the flat form.
func (d Dict) Offset(key string) (start, end int, ok bool) {
	for i, k := range d.Keys {
		n := d.Spaces[i].FlatSize()
		if k == key {
			return start, start + n, true
		}
		start += n
	}
	return 0, 0, false
}

// Sample samples every subspace into its part of dst.
func (d Dict) Sample(rng *rand.Rand, dst []float32) {
	off := 0
	for _, s := range d.Spaces {
		n := s.FlatSize()
		s.Sample(rng, dst[off:off+n])
		off += n
	}
}

// Contains reports whether each part of x is in its subspace.
func (d Dict) Contains(x []float32) bool {
	if len(x) != d.FlatSize() {
		return false
	}
	off := 0
	for _, s := range d.Spaces {
		n := s.FlatSize()
		if !s.Contains(x[off : off+n]) {
			return false
		}
		off += n
	}
	return true
}

// String is Dict(key: space, ...) in the keys' order.
func (d Dict) String() string {
	parts := make([]string, len(d.Keys))
	for i, k := range d.Keys {
		parts[i] = fmt.Sprintf("%q: %v", k, d.Spaces[i])
	}
	return "Dict(" + strings.Join(parts, ", ") + ")"
}

// MaskSize returns the length of an action mask for actions of space s:
// n for Discrete, sum(Nvec) for MultiDiscrete (the per-component masks
// concatenated). Other spaces take no mask (ok = false).
func MaskSize(s Space) (n int, ok bool) {
	switch s := s.(type) {
	case Discrete:
		return s.N, true
	case MultiDiscrete:
		for _, k := range s.Nvec {
			n += k
		}
		return n, true
	}
	return 0, false
}

// maskDeadComponent returns the first component of the Discrete or
// MultiDiscrete space s that mask (of MaskSize(s) entries) leaves no legal
// choice, or -1 when every component has one.
func maskDeadComponent(s Space, mask []bool) int {
	nvec := []int{len(mask)}
	if md, ok := s.(MultiDiscrete); ok {
		nvec = md.Nvec
	}
	off := 0
	for i, n := range nvec {
		if !slices.Contains(mask[off:off+n], true) {
			return i
		}
		off += n
	}
	return -1
}

// MaskAllows reports whether action is an element of s that mask allows. A
// nil mask allows every element; a mask of the wrong length allows nothing.
func MaskAllows(s Space, mask []bool, action []float32) bool {
	if !s.Contains(action) {
		return false
	}
	if mask == nil {
		return true
	}
	if n, ok := MaskSize(s); !ok || len(mask) != n {
		return false
	}
	switch s := s.(type) {
	case Discrete:
		return mask[int(action[0])-s.Start]
	case MultiDiscrete:
		off := 0
		for c, n := range s.Nvec {
			if !mask[off+int(action[c])] {
				return false
			}
			off += n
		}
	}
	return true
}

// sampleMask returns a uniformly drawn index among the true entries, or 0
// when there is none.
func sampleMask(rng *rand.Rand, mask []bool) int {
	legal := 0
	for _, ok := range mask {
		if ok {
			legal++
		}
	}
	if legal == 0 {
		return 0
	}
	k := rng.IntN(legal)
	for i, ok := range mask {
		if ok {
			if k == 0 {
				return i
			}
			k--
		}
	}
	return 0
}

func isIntIn(v float32, lo, hi int) bool {
	return v == float32(math.Trunc(float64(v))) && v >= float32(lo) && v < float32(hi)
}

func prod(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

func uniform(x []float32) bool {
	for _, v := range x {
		if v != x[0] {
			return false
		}
	}
	return true
}

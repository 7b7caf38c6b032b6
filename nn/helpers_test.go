package nn

import (
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// randomInput returns n standard normal values.
func randomInput(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

// filled returns n copies of v.
func filled(n int, v float32) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = v
	}
	return x
}

// float64s returns x converted to float64.
func float64s(x []float32) []float64 {
	o := make([]float64, len(x))
	for i, v := range x {
		o[i] = float64(v)
	}
	return o
}

// dot64 returns Σ a[i]·b[i] in float64: the loss Σ y·R of the gradient tests.
func dot64(a, b []float32) float64 {
	s := 0.0
	for i, v := range a {
		s += float64(v) * float64(b[i])
	}
	return s
}

// refTensor is a tensor of the PyTorch reference files of ../shared/testdata/nets: a shape
// and row-major float64 data.
type refTensor struct {
	Shape []int     `json:"shape"`
	Data  []float64 `json:"data"`
}

// float32s returns the tensor's data, row-major as it is, converted to float32.
func (r refTensor) float32s() []float32 {
	v := make([]float32, len(r.Data))
	for i, d := range r.Data {
		v[i] = float32(d)
	}
	return v
}

// ourLayout returns the tensor's data in float32 in the layout of this package: a matrix
// (a Linear or LSTM weight, PyTorch's [out, in]) transposed to [in, out], anything else as it
// is (biases, norms, conv weights [out, in, kh, kw]).
func (r refTensor) ourLayout() []float32 {
	if len(r.Shape) != 2 {
		return r.float32s()
	}
	out, in := r.Shape[0], r.Shape[1]
	m := make([]float32, in*out)
	for o := range out {
		for i := range in {
			m[i*out+o] = float32(r.Data[o*in+i])
		}
	}
	return m
}

// refNet is a PyTorch reference network of ../shared/testdata/nets (see its README): input x,
// parameters, output y and the gradients of loss = Σ y·R with respect to every parameter and
// to x, in float64, Linear and LSTM weights [out, in]. The LSTM files also have their sizes,
// the episode starts and the initial state; the other files leave those empty.
type refNet struct {
	Sizes struct {
		Input, Hidden, Steps, Batch, Layers int
	}
	X, R, Y        refTensor
	Starts, H0, C0 refTensor
	Params         map[string]refTensor `json:"params"`
	GradParams     map[string]refTensor `json:"grad_params"`
	GradX          refTensor            `json:"grad_x"`
	path           string               // the file it was read from, for messages
}

// loadRefNet reads the reference network in file name of ../shared/testdata/nets, skipping t
// when the shared test data is absent.
func loadRefNet(t *testing.T, name string) *refNet {
	t.Helper()
	path := filepath.Join("..", "..", "shared", "testdata", "nets", name)
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("PyTorch reference %s not found; it lives in the shared test data next to the repository", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	return parseRefNet(t, path, raw)
}

// loadOwnRefNet reads a reference network of this package's testdata, written in the same
// format by a generator there (gen_gru.py).
func loadOwnRefNet(t *testing.T, name string) *refNet {
	t.Helper()
	path := filepath.Join("testdata", name)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return parseRefNet(t, path, raw)
}

// parseRefNet decodes the reference network raw, read from path.
func parseRefNet(t *testing.T, path string, raw []byte) *refNet {
	t.Helper()
	ref := refNet{path: path}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &ref
}

// param returns the parameter called name, failing t if there is none.
func (n *refNet) param(t *testing.T, name string) refTensor {
	t.Helper()
	return n.named(t, n.Params, "parameter", name)
}

// grad returns the loss's gradient with respect to the parameter called name, failing t if
// there is none.
func (n *refNet) grad(t *testing.T, name string) refTensor {
	t.Helper()
	return n.named(t, n.GradParams, "gradient", name)
}

// named returns m[name], failing t if there is none; what says what m holds.
func (n *refNet) named(t *testing.T, m map[string]refTensor, what, name string) refTensor {
	t.Helper()
	v, ok := m[name]
	if !ok {
		t.Fatalf("%s has no %s %q", n.path, what, name)
	}
	return v
}

// The floors of the scale in checkClose.
const (
	// noScaleFloor holds an error relative to the largest |value| however small that is; it
	// only keeps a tensor of zeros from dividing by zero.
	noScaleFloor = 1e-30
	// smallScaleFloor holds a tensor whose largest |value| is below 1e-3 to an error of
	// tol·1e-3, as if its largest |value| were 1e-3.
	smallScaleFloor = 1e-3
)

// checkClose fails t unless every got[i] is within tol·max(top, floor) of want[i], where top
// is the largest |want[i]| (see noScaleFloor and smallScaleFloor), and returns the largest
// error so relative, NaN where got has a NaN.
func checkClose(t *testing.T, name string, got []float32, want []float64, tol, floor float64) float64 {
	t.Helper()
	top := 0.0
	for _, v := range want {
		top = max(top, math.Abs(v))
	}
	scale := max(top, floor)
	worst, at, off := relativeErrors(t, name, got, want, tol, func(int) float64 { return scale })
	if off > 0 {
		t.Errorf("%s[%d] = %.8g, want %.8g: error %.3g, %.3g of the largest |value| %.3g (floor %g, tolerance %g); %d of %d values off",
			name, at, got[at], want[at], math.Abs(float64(got[at])-want[at]), worst, top, floor, tol, off, len(want))
	}
	return worst
}

// checkWithinBounds fails t unless every got[i] is within tol·bound[i] of want[i]: an error
// bound of each element, such as the sum of the absolute values of its terms.
func checkWithinBounds(t *testing.T, name string, got []float32, want, bound []float64, tol float64) {
	t.Helper()
	scale := func(i int) float64 { return max(bound[i], noScaleFloor) }
	worst, at, off := relativeErrors(t, name, got, want, tol, scale)
	if off > 0 {
		t.Errorf("%s[%d] = %.8g, want %.8g: error %.3g, %.3g of its bound %.3g (tolerance %g); %d of %d values off",
			name, at, got[at], want[at], math.Abs(float64(got[at])-want[at]), worst, bound[at], tol, off, len(want))
	}
}

// relativeErrors returns the largest |got[i] − want[i]|/scale(i) (NaN if got has a NaN), the
// index where it is, and how many elements exceed tol so relative. It stops t when got and
// want differ in length.
func relativeErrors(t *testing.T, name string, got []float32, want []float64, tol float64, scale func(i int) float64) (worst float64, at, off int) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", name, len(got), len(want))
	}
	for i, v := range want {
		rel := math.Abs(float64(got[i])-v) / scale(i)
		if rel > worst || math.IsNaN(rel) {
			worst, at = rel, i
		}
		if !(rel <= tol) {
			off++
		}
	}
	return worst, at, off
}

// sameBits reports whether a and b hold the same float32 bit patterns.
func sameBits(a, b []float32) bool {
	return len(a) == len(b) && firstBitDifference(a, b) < 0
}

// requireSameBits stops t unless got and want are bit for bit equal.
func requireSameBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	if i := firstBitDifference(got, want); i >= 0 {
		t.Fatalf("%s[%d] = %v, want %v bit for bit", what, i, got[i], want[i])
	}
}

// firstBitDifference returns the first index below len(a) and len(b) where a and b hold other
// float32 bit patterns, or -1.
func firstBitDifference(a, b []float32) int {
	for i := range min(len(a), len(b)) {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}

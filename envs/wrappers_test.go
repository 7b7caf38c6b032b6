package envs

import (
	"errors"
	"strings"
	"testing"
)

// failingCartPole is a CartPole whose Step fails as a gym env's does when
// its Python call fails: a nil observation, the error kept for Err. It
// counts Close calls.
type failingCartPole struct {
	*CartPole
	err    error
	closed int
}

func (f *failingCartPole) Step(a []float32) ([]float32, float64, bool, bool, Info) {
	f.err = errors.New("step: python raised")
	return nil, 0, false, false, Info{}
}
func (f *failingCartPole) Err() error   { return f.err }
func (f *failingCartPole) Close() error { f.closed++; return nil }

// TestMaskVelocityPassesOnFailureAndClose: MaskVelocity indexed the nil
// observation of a failed step (a panic where the bare env gives an error
// naming the failure) and had no Close, so a gym env under it kept its
// Python child. It now returns such an observation for the vector's check
// to name, and passes Close on, as TimeLimit does.
func TestMaskVelocityPassesOnFailureAndClose(t *testing.T) {
	inner := &failingCartPole{CartPole: NewCartPole()}
	masked, err := NewMaskVelocity(inner, []int{1, 3})
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewVector([]Env{NewTimeLimit(masked, 500)})
	if err != nil {
		t.Fatal(err)
	}
	v.Reset(1)
	if _, err := v.Step([]float32{0}); err == nil || !strings.Contains(err.Error(), "python raised") {
		t.Errorf("a failed step under MaskVelocity: %v; want the env's error", err)
	}
	if err := v.Close(); err != nil || inner.closed != 1 {
		t.Errorf("Vector.Close: %v, the inner env closed %d times; want once", err, inner.closed)
	}
	if err := Close(masked); err != nil || inner.closed != 2 {
		t.Errorf("envs.Close: %v, the inner env closed %d times in all; want twice", err, inner.closed)
	}
}

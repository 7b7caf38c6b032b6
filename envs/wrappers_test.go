package envs

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestTimeLimitTruncates(t *testing.T) {
	env := NewTimeLimit(&countEnv{length: 100}, 3)
	env.Reset(0)
	for n := 1; n <= 3; n++ {
		_, _, term, trunc, _ := env.Step([]float32{0})
		if term || trunc != (n == 3) {
			t.Fatalf("step %d: terminated %v truncated %v", n, term, trunc)
		}
	}
	env.Reset(NoSeed)
	if _, _, _, trunc, _ := env.Step([]float32{0}); trunc {
		t.Fatal("Reset did not restart the count")
	}
	both := NewTimeLimit(&countEnv{length: 2}, 2)
	both.Reset(0)
	both.Step([]float32{0})
	if _, _, term, trunc, _ := both.Step([]float32{0}); !term || !trunc {
		t.Fatalf("ending at the limit: terminated %v truncated %v, want both (as Gymnasium)", term, trunc)
	}
}

func TestNoVelocityEnvsDropVelocities(t *testing.T) {
	tests := []struct {
		id, full string
		keep     []int
	}{
		{"CartPoleNoVel-v1", "CartPole-v1", []int{0, 2}},
		{"PendulumNoVel-v1", "Pendulum-v1", []int{0, 1}},
	}
	for _, tt := range tests {
		masked, _ := Make(tt.id, nil)
		full, _ := Make(tt.full, nil)
		if got := masked.ObservationSpace().Shape(); !reflect.DeepEqual(got, []int{len(tt.keep)}) {
			t.Fatalf("%s: observation shape %v", tt.id, got)
		}
		mo, _ := masked.Reset(5)
		fo, _ := full.Reset(5)
		for step := range 50 {
			for j, i := range tt.keep {
				if mo[j] != fo[i] {
					t.Fatalf("%s step %d: obs %v, full obs %v", tt.id, step, mo, fo)
				}
			}
			a := make([]float32, full.ActionSpace().FlatSize())
			mo, _, _, _, _ = masked.Step(a)
			fo, _, _, _, _ = full.Step(a)
		}
	}
	if _, err := NewMaskVelocity(NewCartPole(), []int{4}); err == nil {
		t.Fatal("index outside the observation: no error")
	}
}

// TestResetSeeding checks Gymnasium's seeding contract: the same seed gives
// the same episode, NoSeed continues the stream, and an env never seeded
// behaves as seeded with 0.
func TestResetSeeding(t *testing.T) {
	for _, id := range []string{"CartPole-v1", "Acrobot-v1", "MountainCar-v0", "MountainCarContinuous-v0", "Pendulum-v1", "Probe7-v0"} {
		a, _ := Make(id, nil)
		b, _ := Make(id, nil)
		oa, _ := a.Reset(42)
		first := append([]float32(nil), oa...)
		ob, _ := b.Reset(42)
		if !reflect.DeepEqual(first, ob) {
			t.Fatalf("%s: same seed, different starts", id)
		}
		seen := map[string]bool{}
		for range 5 {
			o, _ := a.Reset(NoSeed)
			seen[fmt.Sprint(o)] = true
		}
		if len(seen) < 2 && id != "Probe7-v0" {
			t.Fatalf("%s: NoSeed resets repeat the same start", id)
		}
		fresh, _ := Make(id, nil)
		zero, _ := Make(id, nil)
		of, _ := fresh.Reset(NoSeed)
		unseeded := append([]float32(nil), of...)
		oz, _ := zero.Reset(0)
		if !reflect.DeepEqual(unseeded, oz) {
			t.Fatalf("%s: never-seeded env starts at %v, seed 0 at %v", id, unseeded, oz)
		}
	}
}

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

package buffer

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// fill writes per-env columns into a fresh rollout: rewards[e][t] etc.
func fill(t *testing.T, d Dims, rewards, values [][]float32, term, trunc [][]bool, finals [][]float32) *Rollout {
	t.Helper()
	r, err := New(d)
	if err != nil {
		t.Fatal(err)
	}
	for step := range d.Steps {
		s, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		for e := range d.Envs {
			s.Rewards[e] = rewards[e][step]
			s.Values[e] = values[e][step]
			s.Terminated[e] = term[e][step]
			s.Truncated[e] = trunc[e][step]
			if finals != nil {
				s.FinalValues[e] = finals[e][step]
			}
			s.Obs[e] = float32(100*e + step) // obs size 1: identifies the step
			s.Actions[e] = float32(step % 2)
			s.LogProbs[e] = -float32(step)
		}
	}
	return r
}

func column(x []float32, n, e int) []float32 {
	out := make([]float32, 0, len(x)/n)
	for i := e; i < len(x); i += n {
		out = append(out, x[i])
	}
	return out
}

func closeTo(got, want []float32, tol float64) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if math.Abs(float64(got[i]-want[i])) > tol {
			return false
		}
	}
	return true
}

// handRollout has a termination in the middle of env 0's column and a
// truncation in the middle of env 1's, whose last step also terminates.
func handRollout(t *testing.T) *Rollout {
	return fill(t, Dims{Steps: 4, Envs: 2, ObsSize: 1, ActSize: 1},
		[][]float32{{1, 2, 3, 4}, {1, 1, 1, 1}},
		[][]float32{{0.5, 1, 1.5, 2}, {1, 2, 3, 4}},
		[][]bool{{false, true, false, false}, {false, false, false, true}},
		[][]bool{{false, false, false, false}, {false, false, true, false}},
		[][]float32{{0, 0, 0, 0}, {0, 0, 5, 0}},
	)
}

// TestGAETruncationBootstraps checks GAE against a table computed by hand
// (γ = 0.9, λ = 0.5): a terminated step bootstraps with 0, a truncated one
// with the value of its final observation, the last step with the value of
// the next observation, and no sum crosses an episode end.
func TestGAETruncationBootstraps(t *testing.T) {
	r := handRollout(t)
	if err := r.ComputeGAE(0.9, 0.5, []float32{10, 100}); err != nil {
		t.Fatal(err)
	}
	want := [][2][]float32{
		// advantages, returns
		{{1.85, 1, 8.25, 11}, {2.35, 2, 9.75, 13}},
		{{3.07125, 2.825, 2.5, -3}, {4.07125, 4.825, 5.5, 1}},
	}
	for e := range 2 {
		if a := column(r.Advantages, 2, e); !closeTo(a, want[e][0], 1e-6) {
			t.Errorf("env %d advantages %v, want %v", e, a, want[e][0])
		}
		if ret := column(r.Returns, 2, e); !closeTo(ret, want[e][1], 1e-6) {
			t.Errorf("env %d returns %v, want %v", e, ret, want[e][1])
		}
	}
}

func TestDiscountedReturnsBootstrap(t *testing.T) {
	r := handRollout(t)
	if err := r.ComputeReturns(0.9, []float32{10, 100}); err != nil {
		t.Fatal(err)
	}
	want := [][]float32{{2.8, 2, 14.7, 13}, {6.355, 5.95, 5.5, 1}}
	for e := range 2 {
		if ret := column(r.Returns, 2, e); !closeTo(ret, want[e], 1e-5) {
			t.Errorf("env %d returns %v, want %v", e, ret, want[e])
		}
		vals := column(r.Values, 2, e)
		adv := column(r.Advantages, 2, e)
		for i := range adv {
			if math.Abs(float64(adv[i]-(want[e][i]-vals[i]))) > 1e-5 {
				t.Errorf("env %d advantage %d = %v, want return − value = %v", e, i, adv[i], want[e][i]-vals[i])
			}
		}
	}
}

// TestGAEWithLambdaOneIsDiscountedReturn checks the identity
// A^GAE(γ, 1) = G − V on a random rollout with random episode ends.
func TestGAEWithLambdaOneIsDiscountedReturn(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	d := Dims{Steps: 64, Envs: 3, ObsSize: 1, ActSize: 1}
	r, _ := New(d)
	for range d.Steps {
		s, _ := r.Next()
		for e := range d.Envs {
			s.Rewards[e] = float32(rng.NormFloat64())
			s.Values[e] = float32(rng.NormFloat64())
			s.Terminated[e] = rng.Float64() < 0.05
			s.Truncated[e] = rng.Float64() < 0.05
			s.FinalValues[e] = float32(rng.NormFloat64())
		}
	}
	last := []float32{0.3, -1, 2}
	if err := r.ComputeGAE(0.97, 1, last); err != nil {
		t.Fatal(err)
	}
	adv := append([]float32(nil), r.Advantages...)
	if err := r.ComputeReturns(0.97, last); err != nil {
		t.Fatal(err)
	}
	if !closeTo(adv, r.Advantages, 1e-4) {
		t.Fatalf("GAE(λ=1) advantages differ from discounted returns − values")
	}
}

func TestTerminatedWinsOverTruncated(t *testing.T) {
	r := fill(t, Dims{Steps: 2, Envs: 1, ObsSize: 1, ActSize: 1},
		[][]float32{{1, 1}}, [][]float32{{0, 0}},
		[][]bool{{true, false}}, [][]bool{{true, false}}, [][]float32{{50, 0}})
	if err := r.ComputeGAE(0.9, 0.9, []float32{0}); err != nil {
		t.Fatal(err)
	}
	if r.Advantages[0] != 1 {
		t.Fatalf("a step both terminated and truncated bootstrapped from its final value: advantage %v, want 1", r.Advantages[0])
	}
}

func TestRolloutRejectsMisuse(t *testing.T) {
	if _, err := New(Dims{Steps: 0, Envs: 1, ObsSize: 1, ActSize: 1}); err == nil {
		t.Error("zero steps: no error")
	}
	r, _ := New(Dims{Steps: 1, Envs: 2, ObsSize: 1, ActSize: 1})
	if err := r.ComputeGAE(0.9, 0.9, []float32{0, 0}); err == nil {
		t.Error("GAE on an empty rollout: no error")
	}
	r.Next()
	if _, err := r.Next(); err != ErrFull {
		t.Errorf("Next on a full rollout: %v, want ErrFull", err)
	}
	if err := r.ComputeGAE(0.9, 0.9, []float32{0}); err == nil {
		t.Error("one last value for two envs: no error")
	}
	if _, err := r.Minibatches(rand.New(rand.NewPCG(1, 1)), 3); err == nil {
		t.Error("batch larger than the rollout: no error")
	}
	r.Reset()
	if r.Len() != 0 || r.Full() {
		t.Error("Reset did not empty the rollout")
	}
}

func TestMinibatchesCoverEveryStepOnce(t *testing.T) {
	r, _ := New(Dims{Steps: 5, Envs: 4, ObsSize: 2, ActSize: 1, MaskSize: 3})
	rng := rand.New(rand.NewPCG(1, 2))
	batches, err := r.Minibatches(rng, 6)
	if err != nil {
		t.Fatal(err)
	}
	sizes := []int{}
	seen := map[int]int{}
	for _, b := range batches {
		sizes = append(sizes, len(b))
		for _, i := range b {
			seen[i]++
		}
	}
	if !reflect.DeepEqual(sizes, []int{6, 6, 6, 2}) || len(seen) != 20 {
		t.Fatalf("batch sizes %v covering %d steps, want [6 6 6 2] covering 20", sizes, len(seen))
	}
	first := append([]int(nil), batches[0]...)
	again, _ := r.Minibatches(rand.New(rand.NewPCG(1, 2)), 6)
	if !reflect.DeepEqual(first, again[0]) {
		t.Fatal("same seed, different shuffle")
	}
}

func TestGatherCopiesSteps(t *testing.T) {
	d := Dims{Steps: 3, Envs: 2, ObsSize: 2, ActSize: 1, MaskSize: 2}
	r, _ := New(d)
	for step := range 3 {
		s, _ := r.Next()
		for e := range 2 {
			i := float32(step*2 + e)
			s.Obs[2*e], s.Obs[2*e+1] = i, -i
			s.Actions[e] = i
			s.Values[e] = 10 * i
			s.Masks[2*e] = e == 0
		}
	}
	b := NewBatch(d, 4)
	r.Gather([]int{5, 0, 3}, b)
	if b.Size != 3 || !reflect.DeepEqual(b.Obs, []float32{5, -5, 0, 0, 3, -3}) ||
		!reflect.DeepEqual(b.Values, []float32{50, 0, 30}) ||
		!reflect.DeepEqual(b.Masks, []bool{false, true, true, true, false, true}) {
		t.Fatalf("gathered %+v", b)
	}
}

func TestSequenceModesOnHandMadeColumn(t *testing.T) {
	// One env, 12 steps; episodes end at step 2 (terminated) and step 9
	// (truncated): segments [0,3), [3,10), [10,12).
	term := make([]bool, 12)
	trunc := make([]bool, 12)
	term[2], trunc[9] = true, true
	zeros := make([]float32, 12)
	r := fill(t, Dims{Steps: 12, Envs: 1, ObsSize: 1, ActSize: 1}, [][]float32{zeros}, [][]float32{zeros},
		[][]bool{term}, [][]bool{trunc}, nil)
	tests := []struct {
		mode Mode
		want [][2]int // start, length
	}{
		{Chunked, [][2]int{{0, 3}, {3, 4}, {7, 3}, {10, 2}}},
		{Maximum, [][2]int{{0, 3}, {3, 4}, {4, 4}, {5, 4}, {6, 4}, {10, 2}}},
		{Overlap50, [][2]int{{0, 3}, {3, 4}, {5, 4}, {7, 3}, {10, 2}}},
	}
	for _, tt := range tests {
		seqs, err := r.Sequences(tt.mode, 4)
		if err != nil {
			t.Fatal(err)
		}
		var got [][2]int
		for _, s := range seqs {
			got = append(got, [2]int{s.Start, s.Len})
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.mode, got, tt.want)
		}
	}
	if _, err := r.Sequences("sliding", 4); err == nil {
		t.Error("unknown mode: no error")
	}
}

func TestSequencesPerEnvNeverCrossEpisodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	d := Dims{Steps: 50, Envs: 3, ObsSize: 1, ActSize: 1}
	r, _ := New(d)
	for range d.Steps {
		s, _ := r.Next()
		for e := range d.Envs {
			s.Terminated[e] = rng.Float64() < 0.1
			s.Truncated[e] = rng.Float64() < 0.05
		}
	}
	for _, mode := range []Mode{Chunked, Maximum, Overlap50} {
		seqs, _ := r.Sequences(mode, 8)
		covered := make([]int, d.Steps*d.Envs)
		for _, s := range seqs {
			if s.Len < 1 || s.Len > 8 || s.Start+s.Len > d.Steps {
				t.Fatalf("%s: bad sequence %+v", mode, s)
			}
			for k := range s.Len {
				i := (s.Start+k)*d.Envs + s.Env
				covered[i]++
				if k < s.Len-1 && (r.Terminated[i] || r.Truncated[i]) {
					t.Fatalf("%s: sequence %+v crosses an episode end at step %d", mode, s, s.Start+k)
				}
			}
		}
		for i, c := range covered {
			if c == 0 || (mode == Chunked && c != 1) {
				t.Fatalf("%s: step %d covered %d times", mode, i, c)
			}
		}
	}
}

func TestGatherSequencesPadsTimeMajor(t *testing.T) {
	d := Dims{Steps: 4, Envs: 2, ObsSize: 1, ActSize: 1, MaskSize: 2, HiddenSize: 2}
	r, _ := New(d)
	for step := range 4 {
		s, _ := r.Next()
		for e := range 2 {
			s.Obs[e] = float32(10*e + step)
			s.Hidden[2*e], s.Hidden[2*e+1] = float32(step), float32(e)
			s.Masks[2*e+1] = false
		}
	}
	b := NewSeqBatch(d, 3, 2)
	r.GatherSequences([]Sequence{{Env: 1, Start: 1, Len: 3}, {Env: 0, Start: 2, Len: 2}}, b)
	// rows k*B + b: (k0: s0 s1) (k1: s0 s1) (k2: s0 pad)
	if want := []float32{11, 2, 12, 3, 13, 0}; !reflect.DeepEqual(b.Obs, want) {
		t.Errorf("obs %v, want %v", b.Obs, want)
	}
	if want := []float32{1, 1, 1, 1, 1, 0}; !reflect.DeepEqual(b.Valid, want) {
		t.Errorf("valid %v, want %v", b.Valid, want)
	}
	if want := []float32{1, 1, 2, 0}; !reflect.DeepEqual(b.Hidden, want) {
		t.Errorf("initial hidden %v, want %v (state at each sequence's first step)", b.Hidden, want)
	}
	if !b.Masks[10] || !b.Masks[11] || b.Masks[1] {
		t.Errorf("masks %v: padding must be all legal, stored masks kept", b.Masks)
	}
}

func TestHotPathsDoNotAllocate(t *testing.T) {
	d := Dims{Steps: 128, Envs: 8, ObsSize: 4, ActSize: 1, MaskSize: 2, HiddenSize: 16}
	r, _ := New(d)
	rng := rand.New(rand.NewPCG(1, 1))
	b := NewBatch(d, 64)
	sb := NewSeqBatch(d, 16, 8)
	last := make([]float32, 8)
	r.Reset()
	for !r.Full() {
		r.Next()
	}
	for name, f := range map[string]func(){
		"next": func() { r.Reset(); r.Next() },
		"gae": func() {
			for !r.Full() {
				r.Next()
			}
			r.ComputeGAE(0.99, 0.95, last)
		},
		"minibatch+gather": func() {
			bs, _ := r.Minibatches(rng, 64)
			r.Gather(bs[0], b)
		},
		"sequences+gather": func() {
			seqs, _ := r.Sequences(Chunked, 16)
			r.GatherSequences(seqs[:8], sb)
		},
	} {
		f() // warm up reusable storage
		if n := testing.AllocsPerRun(50, f); n != 0 {
			t.Errorf("%s allocates %v times", name, n)
		}
	}
}

func BenchmarkGAE(b *testing.B) {
	for _, size := range []struct{ steps, envs int }{{128, 8}, {2048, 1}, {256, 64}} {
		d := Dims{Steps: size.steps, Envs: size.envs, ObsSize: 4, ActSize: 1}
		r, _ := New(d)
		for !r.Full() {
			r.Next()
		}
		last := make([]float32, size.envs)
		b.Run(fmt.Sprintf("T%dxN%d", d.Steps, d.Envs), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r.ComputeGAE(0.99, 0.95, last)
			}
		})
	}
}

func BenchmarkMinibatchGather(b *testing.B) {
	d := Dims{Steps: 256, Envs: 8, ObsSize: 8, ActSize: 1, MaskSize: 4}
	r, _ := New(d)
	for !r.Full() {
		r.Next()
	}
	rng := rand.New(rand.NewPCG(1, 1))
	batch := NewBatch(d, 64)
	b.ReportAllocs()
	for b.Loop() {
		bs, _ := r.Minibatches(rng, 64)
		for _, idx := range bs {
			r.Gather(idx, batch)
		}
	}
}

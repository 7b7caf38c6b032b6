package agent

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/netconf"
)

// sideEnv shows a 1×6×6 image with one lit pixel (value 255) in the left
// or the right half; action 0 means "left", 1 "right"; +1 for the right
// answer, −1 otherwise; one step per episode. It exercises the CNN path
// and the scaling of image observations by their bounds.
type sideEnv struct {
	rng  *rand.Rand
	img  []float32
	side int
}

func (e *sideEnv) ObservationSpace() envs.Space { return envs.NewBox(0, 255, 1, 6, 6) }
func (e *sideEnv) ActionSpace() envs.Space      { return envs.Discrete{N: 2} }
func (e *sideEnv) Reset(seed int64) ([]float32, envs.Info) {
	if e.rng == nil || seed >= 0 {
		e.rng = rand.New(rand.NewPCG(uint64(max(seed, 0)), 5))
	}
	if e.img == nil {
		e.img = make([]float32, 36)
	}
	clear(e.img)
	e.side = e.rng.IntN(2)
	row, col := e.rng.IntN(6), e.rng.IntN(3)+3*e.side
	e.img[row*6+col] = 255
	return e.img, envs.Info{}
}
func (e *sideEnv) Step(a []float32) ([]float32, float64, bool, bool, envs.Info) {
	r := -1.0
	if int(a[0]) == e.side {
		r = 1
	}
	return e.img, r, true, false, envs.Info{}
}

func TestCNNAgentLearnsFromImages(t *testing.T) {
	list := make([]envs.Env, 8)
	for i := range list {
		list[i] = &sideEnv{}
	}
	vec, err := envs.NewVector(list)
	if err != nil {
		t.Fatal(err)
	}
	cfg := probeConfig(netconf.EncoderCNN)
	cfg.Net.CNN.Channels, cfg.Net.CNN.Kernels, cfg.Net.CNN.Strides = []int{8, 8}, []int{3, 3}, []int{1, 1}
	a, err := New(vec.ObservationSpace(), vec.ActionSpace(), cfg, 11)
	if err != nil {
		t.Fatal(err)
	}
	env := &sideEnv{}
	before, _ := a.Evaluate(env, 100, 1000, 1)
	// 6,000 steps: every agent seed from 1 to 20 reaches 1.00 there; at 4,000
	// this test's seed 11 stopped at 0.68 once envs.SubSeed changed the
	// envs' seeds (19 of the 20 reached 1.00).
	if _, err := a.Train(context.Background(), vec, 6000); err != nil {
		t.Fatal(err)
	}
	after, err := a.Evaluate(env, 100, 1000, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("mean reward %.2f before, %.2f after", before, after)
	if after < 0.9 {
		t.Errorf("mean reward %.2f after training, want >= 0.9", after)
	}
}

func TestSharedEncoderLearns(t *testing.T) {
	cfg := probeConfig(netconf.EncoderMLP)
	cfg.ShareEncoders = true
	a := trainProbe(t, "Probe5-v0", cfg, 8000)
	if len(a.critic.Filter("encoder.", "latent.")) != 0 {
		t.Fatal("a critic that shares the encoder keeps its own encoder tensors")
	}
	for _, x := range []int{0, 1} {
		v, p := probe(t, a, []float32{float32(x)})
		if p[x] < 0.9 {
			t.Errorf("π(%d | obs %d) = %.3f, want > 0.9", x, x, p[x])
		}
		within(t, "V", v, 1, 0.3)
	}
}

func TestTargetKLStopsEarly(t *testing.T) {
	vec, _ := envs.MakeVector("CartPole-v1", 4, nil)
	cfg := probeConfig(netconf.EncoderMLP)
	cfg.LR = 0.05 // large steps: the KL grows fast
	cfg.TargetKL = 1e-4
	a, _ := New(vec.ObservationSpace(), vec.ActionSpace(), cfg, 1)
	ts, err := a.Train(context.Background(), vec, 256)
	if err != nil {
		t.Fatal(err)
	}
	full := cfg.UpdateEpochs * (cfg.LearnStep / cfg.BatchSize)
	if !ts.Last.EarlyStop || ts.Last.Minibatches >= full {
		t.Fatalf("early stop %v after %d of %d minibatches", ts.Last.EarlyStop, ts.Last.Minibatches, full)
	}
}

func TestAnnealLRDecaysLinearly(t *testing.T) {
	vec, _ := envs.MakeVector("CartPole-v1", 4, nil)
	cfg := probeConfig(netconf.EncoderMLP)
	cfg.AnnealLR = true
	a, _ := New(vec.ObservationSpace(), vec.ActionSpace(), cfg, 1)
	a.TotalSteps = 1024
	var lrs []float64
	for range 4 {
		ts, err := a.Train(context.Background(), vec, 256)
		if err != nil {
			t.Fatal(err)
		}
		lrs = append(lrs, ts.Last.LR)
	}
	for i, want := range []float64{0.75, 0.5, 0.25, 0} {
		if math.Abs(lrs[i]-want*cfg.LR) > 1e-12 {
			t.Fatalf("learning rates %v, want %v × (0.75, 0.5, 0.25, 0)", lrs, cfg.LR)
		}
	}
}

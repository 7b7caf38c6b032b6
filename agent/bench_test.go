package agent

import (
	"context"
	"testing"
	"time"

	"github.com/evolverl/evolve/buffer"
	"github.com/evolverl/evolve/envs"
	_ "github.com/evolverl/evolve/nn/gorgonia" // the reference backend
)

// backends are the two network backends an agent can run on: the plain-Go
// one it uses by default, and the gorgonia reference.
var backends = []string{"go", "gorgonia"}

// BenchmarkPPOCartPole trains one agent with the default config on 8
// CartPole-v1 envs until a deterministic evaluation over 10 episodes
// reaches 475, and reports the env steps and wall time that took and the
// training throughput, on each backend. It is a benchmark of the whole
// agent, not a test: run it with -benchtime 1x.
func BenchmarkPPOCartPole(b *testing.B) {
	for _, be := range backends {
		b.Run("backend="+be, func(b *testing.B) { benchCartPole(b, be) })
	}
}

func benchCartPole(b *testing.B, backend string) {
	for range b.N {
		vec, err := envs.MakeVector("CartPole-v1", 8, nil)
		if err != nil {
			b.Fatal(err)
		}
		cfg := DefaultConfig()
		cfg.Backend = backend
		a, err := New(vec.ObservationSpace(), vec.ActionSpace(), cfg, 1)
		if err != nil {
			b.Fatal(err)
		}
		eval, _ := envs.Make("CartPole-v1", nil)
		start := time.Now()
		var train time.Duration
		solved := false
		for a.Steps < 500_000 {
			t0 := time.Now()
			if _, err := a.Train(context.Background(), vec, 2048); err != nil {
				b.Fatal(err)
			}
			train += time.Since(t0)
			ret, err := a.Evaluate(eval, 10, 1)
			if err != nil {
				b.Fatal(err)
			}
			if ret >= 475 {
				solved = true
				break
			}
		}
		if !solved {
			b.Fatalf("not solved in %d steps", a.Steps)
		}
		b.ReportMetric(float64(a.Steps), "steps-to-475")
		b.ReportMetric(time.Since(start).Seconds(), "s-to-475")
		b.ReportMetric(float64(a.Steps)/train.Seconds(), "train-steps/s")
	}
}

// benchAgent returns a default-config CartPole agent with one collected
// rollout, on the named backend.
func benchAgent(b *testing.B, backend string) *PPO {
	vec, err := envs.MakeVector("CartPole-v1", 8, nil)
	if err != nil {
		b.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Backend = backend
	a, err := New(vec.ObservationSpace(), vec.ActionSpace(), cfg, 1)
	if err != nil {
		b.Fatal(err)
	}
	if err := a.startRollout(vec); err != nil {
		b.Fatal(err)
	}
	if _, _, _, err := a.collect(); err != nil {
		b.Fatal(err)
	}
	return a
}

// BenchmarkUpdate is one PPO minibatch step (batch 64, default network):
// forward, backward, clipping and Adam, on each backend.
func BenchmarkUpdate(b *testing.B) {
	for _, be := range backends {
		b.Run("backend="+be, func(b *testing.B) {
			a := benchAgent(b, be)
			buf := a.roll.buf
			idx, _ := buf.Minibatches(a.rng, 64)
			batch := buffer.NewBatch(buf.Dims, 64)
			buf.Gather(idx[0], batch)
			mb := flatBatch(batch)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := a.update(mb); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCollectStep is one vectorised acting step over 8 CartPoles:
// preprocessing, the policy and value forward pass, sampling and the env
// step, on each backend.
func BenchmarkCollectStep(b *testing.B) {
	for _, be := range backends {
		b.Run("backend="+be, func(b *testing.B) {
			a := benchAgent(b, be)
			r := a.roll
			b.ReportAllocs()
			for b.Loop() {
				x := r.buf.Obs[:len(r.obs)]
				a.preprocess(x, r.obs, true)
				if err := a.act(x, r.masks, r.state, false, false, &r.out); err != nil {
					b.Fatal(err)
				}
				res, err := r.vec.Step(r.out.envActions)
				if err != nil {
					b.Fatal(err)
				}
				copy(r.obs, res.Obs)
			}
		})
	}
}

package agent

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/netconf"
)

// TestCloneIsDeep: a clone equals its original in everything but the RNG
// and acts like it deterministically; changing every part of the clone
// leaves the original's saved bytes unchanged; the clone starts without a
// rollout or networks.
func TestCloneIsDeep(t *testing.T) {
	for _, ta := range testAgents(t, smallNet) {
		t.Run(ta.name, func(t *testing.T) {
			a := ta.build(t, 1)
			scramble(a, 2)
			if _, err := a.Act(randomObs(a, 2, 0), nil, true); err != nil { // the original has networks and state
				t.Fatal(err)
			}
			c := a.Clone(99)
			checkSameAgent(t, a, c, false)
			if c.roll != nil || c.work != nil || c.deploy != nil {
				t.Error("the clone shares a rollout, networks or recurrent state")
			}
			a.ResetState(-1) // as the clone's: the loop acts on 3 rows after the 2 above
			for i := range 2 {
				obs := randomObs(a, 3, uint64(i))
				x, err1 := a.Act(obs, nil, true)
				y, err2 := c.Act(obs, nil, true)
				if err1 != nil || err2 != nil {
					t.Fatal(err1, err2)
				}
				if !sameBits(x, y) {
					t.Fatalf("deterministic actions differ: %v / %v", x, y)
				}
			}
			before := saveBytes(t, a)
			// Change everything the clone owns.
			for _, p := range []netconf.Params{c.actor, c.critic} {
				for i := range p {
					for j := range p[i].Data {
						p[i].Data[j] += 1
					}
					p[i].Shape[0]++
				}
			}
			for i := range c.logStd {
				c.logStd[i] = 3
			}
			for i := range c.adam.M {
				for j := range c.adam.M[i] {
					c.adam.M[i][j], c.adam.V[i][j] = 5, 6
				}
			}
			c.adam.Step++
			if c.norm != nil {
				c.norm.Mean[0], c.norm.Var[0] = 42, 43
			}
			c.cfg.Net.Head.Hidden[0]++
			c.actorSpec.Head.Hidden[0]++
			c.criticSpec.Input[0]++
			c.History[0] = "changed"
			c.History = append(c.History, "more")
			if after := saveBytes(t, a); !bytes.Equal(before, after) {
				t.Error("changing the clone changed the original")
			}
		})
	}
}

// TestCloneRNG: a clone draws from the stream its seed selects — equal
// seeds give equal sampled actions, other seeds other ones — and never
// from the original's, which keeps its own position.
func TestCloneRNG(t *testing.T) {
	ta := testAgents(t, smallNet)[1] // Gaussian: every sample differs
	a := ta.build(t, 1)
	state, _ := a.pcg.MarshalBinary()
	c1, c2, c3 := a.Clone(7), a.Clone(7), a.Clone(8)
	obs := randomObs(a, 4, 0)
	x1, _ := c1.Act(obs, nil, false)
	x2, _ := c2.Act(obs, nil, false)
	x3, _ := c3.Act(obs, nil, false)
	if !sameBits(x1, x2) {
		t.Errorf("clones with seed 7 sample %v and %v", x1, x2)
	}
	if sameBits(x1, x3) {
		t.Errorf("clones with seeds 7 and 8 sample the same %v", x1)
	}
	if now, _ := a.pcg.MarshalBinary(); !bytes.Equal(now, state) {
		t.Error("cloning or acting with the clones moved the original's RNG")
	}
	want := rand.New(rand.NewPCG(7, 0x70706f)).Uint64()
	if got := a.Clone(7).rng.Uint64(); got != want {
		t.Errorf("clone stream: first draw %d, want %d (the stream New would seed)", got, want)
	}
}

// TestCloneTrainsIndependently: a clone of an agent in mid-training trains
// on its own vector without disturbing the original's rollout.
func TestCloneTrainsIndependently(t *testing.T) {
	cfg := DefaultConfig()
	cfg.LearnStep, cfg.BatchSize, cfg.Net = 64, 32, smallNet(netconf.EncoderMLP)
	vec, _ := envs.MakeVector("CartPole-v1", 2, nil)
	a, err := New(vec.ObservationSpace(), vec.ActionSpace(), cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Train(context.Background(), vec, 64); err != nil {
		t.Fatal(err)
	}
	roll := a.roll
	c := a.Clone(4)
	cvec, _ := envs.MakeVector("CartPole-v1", 2, nil)
	if _, err := c.Train(context.Background(), cvec, 128); err != nil {
		t.Fatal(err)
	}
	if a.roll != roll || c.roll == roll || c.roll.vec != cvec {
		t.Error("the clone took over the original's rollout")
	}
	if sameParams(a.actor, c.actor) {
		t.Error("training the clone did not change its weights")
	}
	if a.Steps != 64 || c.Steps != 64+128 || c.Updates <= a.Updates {
		t.Errorf("steps %d / %d, updates %d / %d: want the clone to count on from the original", a.Steps, c.Steps, a.Updates, c.Updates)
	}
	if _, err := a.Train(context.Background(), vec, 64); err != nil {
		t.Fatal(err)
	}
	if a.roll != roll || a.Steps != 128 {
		t.Error("the original did not continue its own rollout")
	}
}

// withShare returns the recipe with share_encoders set to share.
func (ta testAgent) withShare(share bool) testAgent {
	cfg := ta.cfg
	ta.cfg = func(c *Config) {
		cfg(c)
		c.ShareEncoders = share
	}
	return ta
}

// valuesAndActions returns deterministic actions, their log-probabilities
// and the critic's values for rows of observations, from a zero recurrent
// state.
func valuesAndActions(t *testing.T, a *PPO, obs []float32) (acts, logp, values []float32) {
	t.Helper()
	x := make([]float32, len(obs))
	a.preprocess(x, obs, false)
	rows := len(obs) / a.obsSpace.FlatSize()
	state := make([]float32, rows*a.stateSize())
	var out actOut
	if err := a.act(x, nil, state, true, true, &out); err != nil {
		t.Fatal(err)
	}
	return append([]float32(nil), out.actions...), append([]float32(nil), out.logp...), append([]float32(nil), out.values...)
}

func maxDiff(x, y []float32) float64 {
	if len(x) != len(y) {
		return math.Inf(1)
	}
	d := 0.0
	for i := range x {
		d = max(d, math.Abs(float64(x[i])-float64(y[i])))
	}
	return d
}

// TestMutateArchitecturePreservesFunction: growing mutations behind ReLU
// (mlp.add_node, mlp.add_layer, latent.add_node, head.add_node,
// head.add_layer) leave deterministic actions, their log-probabilities and
// the values unchanged, with separate and with shared encoders; History
// records the mutation and the rollout is dropped.
func TestMutateArchitecturePreservesFunction(t *testing.T) {
	agents := testAgents(t, smallNet)
	for _, ta := range []testAgent{agents[0], agents[1]} {
		for _, share := range []bool{false, true} {
			for _, name := range []string{"mlp.add_node", "mlp.add_layer", "latent.add_node", "head.add_node", "head.add_layer"} {
				m, ok := netconf.LookupMutation(name)
				if !ok {
					t.Fatalf("no mutation %s", name)
				}
				a := ta.withShare(share).build(t, 5)
				// Make the policy's output large enough to compare meaningfully.
				w := a.actor.Tensor("out.weight").Data
				for i := range w {
					w[i] *= 100
				}
				obs := randomObs(a, 16, 3)
				acts0, logp0, v0 := valuesAndActions(t, a, obs)
				a.roll = &rollout{}
				desc, changed, err := a.MutateArchitecture(m)
				if err != nil || !changed {
					t.Fatalf("%s %s share %v: %q changed %v err %v", ta.name, name, share, desc, changed, err)
				}
				acts1, logp1, v1 := valuesAndActions(t, a, obs)
				if d := max(maxDiff(acts0, acts1), maxDiff(logp0, logp1), maxDiff(v0, v1)); d > 1e-5 {
					t.Errorf("%s %s share %v (%s): outputs moved by %g", ta.name, name, share, desc, d)
				}
				if len(a.History) != 1 || a.History[0] != desc || !strings.HasPrefix(desc, name) {
					t.Errorf("history %q after %q", a.History, desc)
				}
				if a.roll != nil {
					t.Error("the rollout survived the mutation")
				}
				if a.cfg.Net.Input != nil || a.cfg.Net.Output != 0 || !reflect.DeepEqual(a.actorSpec.Head, a.cfg.Net.Head) {
					t.Errorf("config net %+v does not match the actor spec %+v", a.cfg.Net, a.actorSpec)
				}
			}
		}
	}
}

// TestMutateArchitectureResizesMoments: after mlp.add_node every moment has
// its tensor's new shape, the overlapping block keeps its old values and
// the new entries are zero; log-std moments are untouched.
func TestMutateArchitectureResizesMoments(t *testing.T) {
	for _, share := range []bool{false, true} {
		ta := testAgents(t, smallNet)[1] // Gaussian: also a log-std moment
		a := ta.withShare(share).build(t, 2)
		scramble(a, 3)
		names, shapes := a.tensorNames(), a.tensorShapes()
		oldM, oldV := cloneSlices(a.adam.M), cloneSlices(a.adam.V)
		m, _ := netconf.LookupMutation("mlp.add_node")
		if _, changed, err := a.MutateArchitecture(m); err != nil || !changed {
			t.Fatal(changed, err)
		}
		newNames, newShapes, tensors := a.tensorNames(), a.tensorShapes(), a.tensors()
		if !reflect.DeepEqual(names, newNames) {
			t.Fatalf("tensor names changed: %v -> %v", names, newNames)
		}
		grown := 0
		for i := range tensors {
			for _, mom := range []struct {
				old, new [][]float32
			}{{oldM, a.adam.M}, {oldV, a.adam.V}} {
				if len(mom.new[i]) != len(tensors[i]) {
					t.Fatalf("%s: moment of %d values for a tensor of %d", names[i], len(mom.new[i]), len(tensors[i]))
				}
				want := make([]float32, len(tensors[i]))
				netconf.CopyOverlap(want, newShapes[i], mom.old[i], shapes[i])
				if !sameBits(want, mom.new[i]) {
					t.Errorf("%s: moments not kept on the overlap and zero elsewhere", names[i])
				}
			}
			if !reflect.DeepEqual(shapes[i], newShapes[i]) {
				grown++
			}
		}
		if grown == 0 {
			t.Error("no tensor changed shape")
		}
	}
}

// checkWorks acts on random observations and, when train is set, runs
// one small rollout and update.
func checkWorks(t *testing.T, a *PPO, vec *envs.Vector, train bool, what string) {
	t.Helper()
	if _, err := a.Act(randomObs(a, 3, 1), nil, false); err != nil {
		t.Fatalf("after %s: act: %v", what, err)
	}
	if train {
		if _, err := a.Train(context.Background(), vec, 64); err != nil {
			t.Fatalf("after %s: train: %v", what, err)
		}
	}
}

// TestMutateArchitectureProperty: chains of random mutations drawn from
// netconf.MutationsFor the agent's encoder keep the agent consistent (one
// moment of the right size per tensor, the description in History) and able
// to act after every mutation and to train one small rollout (after every
// second mutation for MLP and LSTM agents); a CNN agent acts; the mutated
// agents save and load.
func TestMutateArchitectureProperty(t *testing.T) {
	cpObs, cpAct := envSpaces(t, "CartPole-v1")
	img := envs.NewBox(0, 255, 3, 12, 12)
	cases := []struct {
		name     string
		obs      envs.Space
		kind     netconf.EncoderKind
		share    bool
		n        int
		canTrain bool
		every    int // train after every every-th mutation
	}{
		{"mlp", cpObs, netconf.EncoderMLP, false, 50, true, 2},
		{"mlp shared", cpObs, netconf.EncoderMLP, true, 30, true, 2},
		{"lstm", cpObs, netconf.EncoderLSTM, false, 50, true, 2},
		{"gru shared", cpObs, netconf.EncoderGRU, true, 50, true, 2},
		{"transformer", cpObs, netconf.EncoderTransformer, false, 30, true, 2},
		{"cnn", img, netconf.EncoderCNN, false, 20, false, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.LearnStep, cfg.BatchSize, cfg.UpdateEpochs, cfg.MaxSeqLen = 64, 32, 1, 8
			cfg.Net, cfg.ShareEncoders = smallNet(c.kind), c.share
			a, err := New(c.obs, cpAct, cfg, 9)
			if err != nil {
				t.Fatal(err)
			}
			vec, _ := envs.MakeVector("CartPole-v1", 2, nil)
			train := c.canTrain
			if train && a.recurrent() {
				if _, err := a.Train(context.Background(), vec, 8); err != nil {
					t.Fatal(err)
				}
			}
			rng := rand.New(rand.NewPCG(10, 11))
			ms := netconf.MutationsFor(a.cfg.Net)
			applied := 0
			for i := range c.n {
				m := ms[rng.IntN(len(ms))]
				desc, changed, err := a.MutateArchitecture(m)
				if err != nil {
					t.Fatalf("mutation %d %s: %v", i, m.Name, err)
				}
				if changed {
					applied++
					if got := a.History[len(a.History)-1]; got != desc {
						t.Fatalf("history ends with %q, want %q", got, desc)
					}
				}
				if len(a.adam.M) != len(a.tensors()) {
					t.Fatalf("after %s: %d moments for %d tensors", desc, len(a.adam.M), len(a.tensors()))
				}
				for k, x := range a.tensors() {
					if len(a.adam.M[k]) != len(x) || len(a.adam.V[k]) != len(x) {
						t.Fatalf("after %s: moment %d has the wrong size", desc, k)
					}
				}
				checkWorks(t, a, vec, train && (i+1)%c.every == 0, desc)
			}
			if applied < c.n/3 {
				t.Errorf("only %d of %d mutations applied", applied, c.n)
			}
			t.Logf("%d applied, final %v", applied, a.cfg.Net)
			b, _ := saveLoad(t, a)
			checkSameAgent(t, a, b, true)
		})
	}
}

// TestContextMutationKeepsTheFirstStep: at an episode's first step a
// Transformer attends to that step alone, so a mutation of its context
// leaves the first step's actions, log-probabilities and values as they
// were (the position of the current step keeps its row).
func TestContextMutationKeepsTheFirstStep(t *testing.T) {
	cpObs, cpAct := envSpaces(t, "CartPole-v1")
	m, ok := netconf.LookupMutation("transformer.add_node")
	shrink, ok2 := netconf.LookupMutation("transformer.remove_node")
	if !ok || !ok2 {
		t.Fatal("no transformer.add_node/remove_node mutation")
	}
	seen := map[string]bool{}
	for seed := uint64(1); seed < 60 && len(seen) < 2; seed++ {
		cfg := DefaultConfig()
		cfg.Net = smallNet(netconf.EncoderTransformer)
		cfg.Net.Transformer.Context, cfg.Net.Transformer.MinContext = 8, 2
		a, err := New(cpObs, cpAct, cfg, seed)
		if err != nil {
			t.Fatal(err)
		}
		obs := randomObs(a, 4, seed)
		acts0, logp0, v0 := valuesAndActions(t, a, obs)
		mut := m
		if seed%2 == 0 {
			mut = shrink
		}
		desc, changed, err := a.MutateArchitecture(mut)
		if err != nil {
			t.Fatal(err)
		}
		if !changed || !strings.Contains(desc, "context") {
			continue
		}
		seen[mut.Name] = true
		acts1, logp1, v1 := valuesAndActions(t, a, obs)
		if d := max(maxDiff(acts0, acts1), maxDiff(logp0, logp1), maxDiff(v0, v1)); d > 1e-5 {
			t.Errorf("%s: the first step's outputs moved by %g", desc, d)
		}
	}
	if len(seen) < 2 {
		t.Fatalf("no context mutation both ways in 60 seeds: %v", seen)
	}
}

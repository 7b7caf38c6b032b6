package agent

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/netconf"
	"github.com/evolverl/evolve/record"
)

// deepSeaDemo is the demo of Deep Sea of size n solved (mapping seed 0,
// flat): the action moving right on each row, found by replaying prefixes.
func deepSeaDemo(t *testing.T, n int) Demo {
	t.Helper()
	env, err := envs.Make("DeepSea-v0", envs.Options{"size": n, "flat": true})
	if err != nil {
		t.Fatal(err)
	}
	col := func(obs []float32) int { return slices.Index(obs, 1) % n }
	var d Demo
	for range n {
		for _, act := range []float32{0, 1} {
			obs, _ := env.Reset(0)
			for _, a := range d.Actions {
				obs, _, _, _, _ = env.Step(a)
			}
			here, c := slices.Clone(obs), col(obs) // the env reuses its observation buffer
			next, r, term, _, _ := env.Step([]float32{act})
			if term && r > 0.5 || !term && col(next) > c {
				d.Obs = append(d.Obs, here)
				d.Actions = append(d.Actions, []float32{act})
				d.Rewards = append(d.Rewards, r)
				d.Terminated = term
				break
			}
		}
	}
	if len(d.Obs) != n || !d.Terminated {
		t.Fatalf("no solution found for Deep Sea %d: %d steps", n, len(d.Obs))
	}
	return d
}

// demoAgent is a PPO+D agent on 4 Deep Seas of size n, bound to its vector.
func demoAgent(t *testing.T, n int, rho, phi float64, demos []Demo) *PPO {
	t.Helper()
	cfg := probeConfig(netconf.EncoderMLP)
	cfg.LearnStep, cfg.BatchSize, cfg.LR, cfg.DemoRho, cfg.DemoPhi = 4*32, 64, 1e-3, rho, phi
	if demos == nil {
		demos = []Demo{}
	}
	return boundAgent(t, "DeepSea-v0", envs.Options{"size": n, "flat": true}, cfg, 5, demos)
}

// TestDemoReplaysEnterTheRollout: with demo_rho 1 every env replays the
// demo over and over: every row of the rollout is a step of it (its
// observation, action and reward, log-probability 0, the critic's value of
// the observation, its end terminal), while the envs run on with the
// agent's own actions, their episodes counted as the agent's.
func TestDemoReplaysEnterTheRollout(t *testing.T) {
	const n = 8
	d := deepSeaDemo(t, n)
	a := demoAgent(t, n, 1, 0, []Demo{d})
	var ended []float64
	steps, episodes, _, err := a.collect(&ended)
	if err != nil {
		t.Fatal(err)
	}
	buf := a.roll.buf
	if steps != 4*32 || episodes != 4*32/n {
		t.Errorf("%d steps and %d own episodes, want 128 and 16: the envs run on during replays", steps, episodes)
	}
	obsW := a.obsSpace.FlatSize()
	var out actOut
	for tt := range buf.Steps {
		for i := range buf.Envs {
			j := tt*buf.Envs + i
			k := tt % n // every env starts with the demo and replays it back to back
			if !slices.Equal(buf.Obs[j*obsW:(j+1)*obsW], d.Obs[k]) || buf.Actions[j] != d.Actions[k][0] ||
				buf.Rewards[j] != float32(d.Rewards[k]) || buf.LogProbs[j] != 0 || buf.Terminated[j] != (k == n-1) {
				t.Fatalf("step %d env %d: obs %v action %v reward %v logp %v terminated %v; want the demo's step %d",
					tt, i, slices.Index(buf.Obs[j*obsW:(j+1)*obsW], 1), buf.Actions[j], buf.Rewards[j], buf.LogProbs[j], buf.Terminated[j], k)
			}
			if err := a.values(d.Obs[k], nil, &out); err != nil || out.values[0] != buf.Values[j] {
				t.Fatalf("step %d env %d: value %v, the critic gives the demo's observation %v (%v)", tt, i, buf.Values[j], out.values[0], err)
			}
		}
	}
}

// TestDemoOwnEpisodesBecomeDemos: without given demos, an own episode is a
// reward demo (the threshold is −∞), and after it only episodes that
// return as much; the others become value demos, up to the capacity,
// the lowest-valued going first; adding a reward demo moves phi's share
// to rho.
func TestDemoOwnEpisodesBecomeDemos(t *testing.T) {
	a := demoAgent(t, 4, 0.1, 0.3, nil)
	a.cfg.DemoCapacity = 3
	s := a.newDemoState(1)
	ep := func(ret, maxV float64) {
		a.considerDemo(s, Demo{Rewards: []float64{ret}}, maxV)
	}
	ep(0.5, 1) // the first: a reward demo
	ep(0.2, 3) // below 0.5: value demos
	ep(0.1, 2)
	if len(s.reward) != 1 || len(s.value) != 2 || s.rho != 0.1 || s.phi != 0.3 {
		t.Fatalf("%d reward and %d value demos, rho %v phi %v; want 1, 2, 0.1, 0.3", len(s.reward), len(s.value), s.rho, s.phi)
	}
	ep(0.7, 0) // a reward demo: over capacity, the value demo of max value 2 goes; rho += 0.3/2
	if len(s.reward) != 2 || len(s.value) != 1 || s.value[0].maxValue != 3 ||
		math.Abs(s.rho-0.25) > 1e-12 || math.Abs(s.phi-0.15) > 1e-12 {
		t.Errorf("after a reward demo: %d reward and %d value demos (kept max value %v), rho %v phi %v; want 2, 1 (3), 0.25, 0.15",
			len(s.reward), len(s.value), s.value[0].maxValue, s.rho, s.phi)
	}
}

// TestDemosFromRecordings splits a recording into its episodes and names
// the field that does not fit the env.
func TestDemosFromRecordings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.npz")
	obs, act := envs.NewBox(0, 1, 4), envs.Discrete{N: 2}
	w, err := record.Create(path, obs, act)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		w.Add(record.Step{Obs: []float32{float32(i), 0, 0, 0}, Action: []float32{float32(i % 2)}, Reward: float64(i),
			EpisodeStart: i == 0 || i == 3, Terminated: i == 2, Truncated: i == 4})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tr, err := record.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	demos, err := DemosFrom(tr, obs, act)
	if err != nil || len(demos) != 2 || len(demos[0].Obs) != 3 || !demos[0].Terminated || demos[1].Terminated || demos[1].Rewards[1] != 4 {
		t.Fatalf("demos %+v, %v: want episodes of 3 (terminated) and 2 steps (truncated)", demos, err)
	}
	if _, err := DemosFrom(tr, envs.NewBox(0, 1, 5), act); err == nil || !strings.Contains(err.Error(), "observation space") {
		t.Errorf("another observation space: %v", err)
	}
	if _, err := DemosFrom(tr, obs, envs.Discrete{N: 3}); err == nil || !strings.Contains(err.Error(), "action space") {
		t.Errorf("another action space: %v", err)
	}
}

// TestDemoMasksReplayAndRecord: on a masked env a replayed step enters the
// rollout under its demo's mask (not every action legal), an own episode
// kept as a demo keeps its masks, and masks from a recording carry over,
// an action its mask forbids refused.
func TestDemoMasksReplayAndRecord(t *testing.T) {
	env, err := envs.Make("ConnectFour-v0", nil)
	if err != nil {
		t.Fatal(err)
	}
	var d Demo
	obs, info := env.Reset(0)
	for _, col := range []float32{3, 3, 3, 3, 3, 3, 2} { // fills column 3: the last step's mask forbids it
		d.Obs = append(d.Obs, slices.Clone(obs))
		d.Masks = append(d.Masks, slices.Clone(info.ActionMask))
		d.Actions = append(d.Actions, []float32{col})
		var r float64
		obs, r, _, _, info = env.Step([]float32{col})
		d.Rewards = append(d.Rewards, r)
	}
	if d.Masks[6][3] {
		t.Fatal("column 3 still legal after six pieces")
	}
	cfg := probeConfig(netconf.EncoderCNN)
	cfg.Net.CNN.Strides = []int{1, 1}
	cfg.LearnStep, cfg.BatchSize, cfg.DemoRho = 4*14, 56, 1
	a := boundAgent(t, "ConnectFour-v0", nil, cfg, 5, []Demo{d})
	var ended []float64
	if _, _, _, err := a.collect(&ended); err != nil {
		t.Fatal(err)
	}
	buf := a.roll.buf
	ms := len(buf.Masks) / (buf.Steps * buf.Envs)
	for tt := range buf.Steps {
		for i := range buf.Envs {
			j := tt*buf.Envs + i
			if got, want := buf.Masks[j*ms:(j+1)*ms], d.Masks[tt%len(d.Obs)]; !slices.Equal(got, want) {
				t.Fatalf("step %d env %d: mask %v, want the demo's %v", tt, i, got, want)
			}
		}
	}

	// Own episodes: with demo_phi alone, the first finished one is a reward
	// demo, with one mask per step.
	cfg.DemoRho, cfg.DemoPhi = 0, 0.5
	a = boundAgent(t, "ConnectFour-v0", nil, cfg, 5, nil)
	for a.roll.demo == nil || len(a.roll.demo.reward) == 0 {
		if _, _, _, err := a.collect(&ended); err != nil {
			t.Fatal(err)
		}
	}
	own := a.roll.demo.reward[0]
	if len(own.Masks) != len(own.Obs) || len(own.Masks[0]) != 7 || !slices.Equal(own.Masks[0], slices.Repeat([]bool{true}, 7)) {
		t.Errorf("an own demo of %d steps has %d masks, the first %v", len(own.Obs), len(own.Masks), own.Masks)
	}

	// A recording: its masks carry over, and an action a mask forbids is refused.
	path := filepath.Join(t.TempDir(), "c4.npz")
	w, err := record.Create(path, env.ObservationSpace(), env.ActionSpace())
	if err != nil {
		t.Fatal(err)
	}
	for k := range d.Obs {
		if err := w.Add(record.Step{Obs: d.Obs[k], Action: d.Actions[k], Reward: d.Rewards[k], EpisodeStart: k == 0, ActionMask: d.Masks[k]}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Add(record.Step{Obs: d.Obs[6], Action: []float32{3}, ActionMask: d.Masks[6]}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tr, err := record.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DemosFrom(tr, env.ObservationSpace(), env.ActionSpace()); err == nil || !strings.Contains(err.Error(), "step 7: action [3] is not legal") {
		t.Errorf("an action its mask forbids: %v", err)
	}
	tr.ActionMasks[7][3] = true
	demos, err := DemosFrom(tr, env.ObservationSpace(), env.ActionSpace())
	if err != nil || len(demos) != 1 || !slices.Equal(demos[0].Masks[6], d.Masks[6]) {
		t.Errorf("demos from a masked recording: %v; masks %v", err, demos)
	}
	bad := d
	bad.Masks = d.Masks[:3]
	if err := a.SetDemos([]Demo{bad}); err == nil || !strings.Contains(err.Error(), "3 masks for 7 steps") {
		t.Errorf("too few masks: %v", err)
	}
}

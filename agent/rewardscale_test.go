package agent

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/netconf"
)

// TestRewardScalingMatchesVecNormalize replays recorded reward streams
// (testdata/reward_scale.json, gen_reward_scale.py: SB3's VecNormalize with
// norm_reward) through scaleRewards and wants SB3's scaled rewards (to
// float32) and its return statistics after every step.
func TestRewardScalingMatchesVecNormalize(t *testing.T) {
	var ref struct {
		Cases []struct {
			Name             string
			Envs             int
			Gamma            float64
			Clip             *float64
			Rewards, Scaled  [][]float64
			Dones            [][]bool
			Mean, Var, Count []float64
		}
	}
	if readTestdata(t, "reward_scale.json", &ref); len(ref.Cases) == 0 {
		t.Fatal("reward_scale.json has no cases")
	}
	close := func(got, want float64) bool { return math.Abs(got-want) <= 1e-12*math.Max(1, math.Abs(want)) }
	for _, c := range ref.Cases {
		t.Run(c.Name, func(t *testing.T) {
			a := &PPO{cfg: DefaultConfig(), rewNorm: NewRunningNorm(1)}
			a.cfg.Gamma, a.cfg.NormalizeReward = c.Gamma, true
			if c.Clip != nil {
				a.cfg.ClipReward = *c.Clip
			}
			ret, dst := make([]float64, c.Envs), make([]float32, c.Envs)
			clipped := 0
			for k, raw := range c.Rewards {
				a.scaleRewards(ret, raw, func(i int) bool { return c.Dones[k][i] }, dst)
				for i, w := range c.Scaled[k] {
					if dst[i] != float32(w) {
						t.Fatalf("step %d env %d: scaled %v, SB3 %v", k, i, dst[i], w)
					}
					if math.Abs(w) == a.cfg.clipReward() {
						clipped++
					}
				}
				r := a.rewNorm
				if !close(r.Mean[0], c.Mean[k]) || !close(r.Var[0], c.Var[k]) || !close(r.Count, c.Count[k]) {
					t.Fatalf("step %d: mean %v var %v count %v, SB3 %v %v %v", k, r.Mean[0], r.Var[0], r.Count, c.Mean[k], c.Var[k], c.Count[k])
				}
			}
			t.Logf("%d steps, %d rewards clipped", len(c.Rewards), clipped)
		})
	}
}

// TestRewardScalingTrainsOnScaledRewardsOnly: with normalize_reward the
// rollout holds scaled rewards, while the episode returns Train reports (and
// evaluation) stay the env's; the statistics travel in the agent file and
// in clones, and normalize_reward cannot be switched by SetConfig.
func TestRewardScalingTrainsOnScaledRewardsOnly(t *testing.T) {
	vec, err := envs.MakeVector("Pendulum-v1", 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := probeConfig(netconf.EncoderMLP)
	cfg.LearnStep, cfg.NormalizeReward = 4*200, true
	a, err := New(vec.ObservationSpace(), vec.ActionSpace(), cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := a.Train(context.Background(), vec, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts.Returns) != 4 {
		t.Fatalf("%d episodes ended in 200 steps of 4 Pendulums, want 4", len(ts.Returns))
	}
	sum := 0.0
	for _, r := range a.roll.buf.Rewards[:4*200] {
		sum += float64(r)
	}
	for _, ret := range ts.Returns {
		// Raw Pendulum returns are in [−16.3·200, 0]; scaled ones are far smaller.
		if ret > -100 || math.Abs(sum/4) > math.Abs(ret)/5 {
			t.Errorf("episode return %v, scaled rewards sum to %v per env: want raw returns and scaled rewards", ret, sum/4)
		}
	}
	if a.rewNorm.Count < 800 {
		t.Errorf("return statistics count %v after 800 steps", a.rewNorm.Count)
	}
	b, _ := saveLoad(t, a)
	if b.rewNorm == nil || b.rewNorm.Var[0] != a.rewNorm.Var[0] || b.rewNorm.Count != a.rewNorm.Count {
		t.Errorf("loaded statistics %+v, saved %+v", b.rewNorm, a.rewNorm)
	}
	c := a.Clone(9)
	c.rewNorm.Var[0]++
	if a.rewNorm.Var[0] == c.rewNorm.Var[0] {
		t.Error("a clone shares the reward statistics")
	}
	off := a.Config()
	off.NormalizeReward = false
	if err := a.SetConfig(off); err == nil || !strings.Contains(err.Error(), "normalize_reward") {
		t.Errorf("SetConfig turning reward scaling off: %v", err)
	}
	bad := DefaultConfig()
	bad.ClipReward = 5
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "clip_reward") {
		t.Errorf("clip_reward without normalize_reward: %v", err)
	}
}

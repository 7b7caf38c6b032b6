package envs

import (
	"fmt"
	"testing"
)

// TestProbesRewardTheDocumentedPolicy plays each probe with the policy its
// doc comment says a correct agent learns (the oracle, which may look at the
// first observation of the episode, as a recurrent agent can) and with the
// worst policy, and checks the returns and episode lengths.
func TestProbesRewardTheDocumentedPolicy(t *testing.T) {
	tests := []struct {
		id     string
		length int
		// oracle picks the action from the current and first observation.
		oracle, worst func(obs, first []float32) int
		best, low     float64 // return of the oracle and of the worst policy
	}{
		{"Probe1-v0", 1, zero, zero, 1, 1},
		{"Probe3-v0", 2, zero, zero, 1, 1},
		{"Probe4-v0", 1, func(_, _ []float32) int { return 1 }, zero, 1, -1},
		{"Probe5-v0", 1, func(o, _ []float32) int { return int(o[0]) }, func(o, _ []float32) int { return 1 - int(o[0]) }, 1, -1},
		{"Probe6-v0", 8, func(o, _ []float32) int { return int(o[0]) % 2 }, func(o, _ []float32) int { return 1 - int(o[0])%2 }, 8, 0},
		{"Probe7-v0", 5, func(_, f []float32) int { return int(f[1]) }, func(_, f []float32) int { return 1 - int(f[1]) }, 1, -1},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			env, err := Make(tt.id, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				name   string
				policy func(obs, first []float32) int
				want   float64
			}{{"oracle", tt.oracle, tt.best}, {"worst", tt.worst, tt.low}} {
				for ep := range 20 {
					ret, n := playEpisode(t, env, int64(ep), c.policy)
					if ret != c.want || n != tt.length {
						t.Fatalf("%s policy, episode %d: return %v in %d steps, want %v in %d", c.name, ep, ret, n, c.want, tt.length)
					}
				}
			}
		})
	}
}

func zero(_, _ []float32) int { return 0 }

func playEpisode(t *testing.T, env Env, seed int64, policy func(obs, first []float32) int) (float64, int) {
	t.Helper()
	obs, _ := env.Reset(seed)
	first := append([]float32(nil), obs...)
	ret := 0.0
	for n := 1; n <= 100; n++ {
		o, r, term, trunc, _ := env.Step([]float32{float32(policy(obs, first))})
		ret += r
		if trunc {
			t.Fatal("probe episode truncated; probes end by termination")
		}
		if term {
			return ret, n
		}
		obs = o
	}
	t.Fatal("episode did not end in 100 steps")
	return 0, 0
}

// TestProbeRandomDrawsAreBalanced checks that Probe2, Probe5 and Probe7
// draw both values of their random observation about equally often, and
// that Probe2's reward equals its observation and Probe3's observations are
// [0] then [1].
func TestProbeRandomDrawsAreBalanced(t *testing.T) {
	for _, tc := range []struct {
		id  string
		idx int
	}{{"Probe2-v0", 0}, {"Probe5-v0", 0}, {"Probe7-v0", 1}} {
		env, _ := Make(tc.id, nil)
		counts := map[float32]int{}
		env.Reset(1)
		for range 1000 {
			obs, _ := env.Reset(NoSeed)
			counts[obs[tc.idx]]++
			if tc.id == "Probe2-v0" {
				want := float64(obs[0])
				if _, r, _, _, _ := env.Step([]float32{0}); r != want {
					t.Fatalf("Probe2: reward %v for obs %v", r, want)
				}
			}
		}
		if len(counts) != 2 {
			t.Fatalf("%s: observed values %v, want two", tc.id, counts)
		}
		for v, n := range counts {
			if n < 430 || n > 570 {
				t.Errorf("%s: value %v drawn %d times in 1000", tc.id, v, n)
			}
		}
	}
	env, _ := Make("Probe3-v0", nil)
	obs, _ := env.Reset(0)
	o0 := obs[0]
	obs, r, term, _, _ := env.Step([]float32{0})
	if got := fmt.Sprint(o0, obs[0], r, term); got != "0 1 0 false" {
		t.Fatalf("Probe3 first step: obs0 obs1 reward terminated = %s, want 0 1 0 false", got)
	}
}

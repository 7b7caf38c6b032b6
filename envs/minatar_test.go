package envs

import (
	"math"
	"math/rand/v2"
	"testing"
)

// minatarPolicyStats is one entry of
// ../shared/testdata/minatar/policy_stats.json: statistics of a fixed policy
// over 1,000 episodes of the original MinAtar.
type minatarPolicyStats struct {
	Episodes       int     `json:"episodes"`
	ReturnMean     float64 `json:"return_mean"`
	ReturnStd      float64 `json:"return_std"`
	LengthMean     float64 `json:"length_mean"`
	LengthStd      float64 `json:"length_std"`
	Channels       int     `json:"channels"`
	MinimalActions []int   `json:"minimal_actions"`
}

// minatarPolicy picks a full-set action from an observation.
type minatarPolicy func(obs []float32, rng *rand.Rand) int

func minatarUniform(_ []float32, rng *rand.Rand) int { return rng.IntN(maActions) }

// minatarTrackBall moves Breakout's paddle towards the ball's column.
func minatarTrackBall(obs []float32, _ *rand.Rand) int {
	paddle, ball := -1, -1
	for i := range minatarSize * minatarSize {
		if obs[i] == 1 {
			paddle = i % minatarSize
		}
		if obs[minatarSize*minatarSize+i] == 1 {
			ball = i % minatarSize
		}
	}
	switch {
	case ball < paddle:
		return maLeft
	case ball > paddle:
		return maRight
	}
	return maNoop
}

// minatarStatCases maps each policy_stats.json key to its game and policy.
var minatarStatCases = []struct {
	key, game string
	policy    minatarPolicy
}{
	{"breakout/uniform", "Breakout", minatarUniform},
	{"breakout/track_ball", "Breakout", minatarTrackBall},
	{"asterix/uniform", "Asterix", minatarUniform},
	{"freeway/uniform", "Freeway", minatarUniform},
	{"freeway/action2", "Freeway", func([]float32, *rand.Rand) int { return maUp }},
	{"space_invaders/uniform", "SpaceInvaders", minatarUniform},
	{"seaquest/uniform", "Seaquest", minatarUniform},
}

// minatarEpisodes plays n episodes of policy and returns the returns and
// lengths.
func minatarEpisodes(t testing.TB, game string, policy minatarPolicy, n int, seed uint64) (returns, lengths []float64) {
	env, err := NewMinAtar(game, DefaultMinAtarOptions())
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 99))
	action := []float32{0}
	for ep := range n {
		obs, _ := env.Reset(int64(seed)*1_000_000 + int64(ep))
		ret, length := 0.0, 0
		for {
			action[0] = float32(policy(obs, rng))
			var r float64
			var term, trunc bool
			obs, r, term, trunc, _ = env.Step(action)
			ret += r
			length++
			if term || trunc || length >= 10_000 {
				break
			}
		}
		returns = append(returns, ret)
		lengths = append(lengths, float64(length))
	}
	return returns, lengths
}

func meanStd(xs []float64) (mean, std float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		std += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(std / float64(len(xs)-1))
}

// TestMinAtarAgreesWithOriginal plays 1,000 episodes of each fixed policy of
// ../shared/testdata/minatar and requires each mean (return and length) to
// lie within 4 combined standard errors of the original's.
func TestMinAtarAgreesWithOriginal(t *testing.T) {
	var ref map[string]minatarPolicyStats
	readShared(t, "minatar/policy_stats.json", &ref)
	const n = 1000
	for _, c := range minatarStatCases {
		t.Run(c.key, func(t *testing.T) {
			want, ok := ref[c.key]
			if !ok {
				t.Fatalf("no reference entry %q", c.key)
			}
			returns, lengths := minatarEpisodes(t, c.game, c.policy, n, 1)
			for _, m := range []struct {
				name      string
				xs        []float64
				mean, std float64
			}{
				{"return", returns, want.ReturnMean, want.ReturnStd},
				{"length", lengths, want.LengthMean, want.LengthStd},
			} {
				got, sd := meanStd(m.xs)
				se := math.Sqrt(m.std*m.std/float64(want.Episodes) + sd*sd/n)
				z := 0.0
				if se > 0 {
					z = (got - m.mean) / se
				} else if got != m.mean {
					z = math.Inf(1)
				}
				t.Logf("%s %s: original %.3f (sd %.3f), port %.3f (sd %.3f), z = %+.2f", c.key, m.name, m.mean, m.std, got, sd, z)
				if math.Abs(z) > 4 {
					t.Errorf("%s mean %.3f is %.1f standard errors from the original's %.3f", m.name, got, z, m.mean)
				}
			}
		})
	}
}

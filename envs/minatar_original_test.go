package envs

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/evolverl/evolve/internal/pytest"
)

// minatarConstantFile is written by testdata/minatar/gen_minatar_constant.py
// from the original MinAtar: each game under each constant action.
const minatarConstantFile = "testdata/minatar/constant_actions.json"

// minatarConstantRef is the content of minatarConstantFile.
type minatarConstantRef struct {
	Episodes int                             `json:"episodes"`
	Cap      int                             `json:"cap"`
	Games    map[string]minatarConstantStats `json:"games"` // "<game>/<action>"
}

// minatarConstantStats describes the episodes of one game under one
// constant action.
type minatarConstantStats struct {
	ReturnMean float64 `json:"return_mean"`
	ReturnStd  float64 `json:"return_std"`
	ReturnMin  float64 `json:"return_min"`
	ReturnMax  float64 `json:"return_max"`
	LengthMean float64 `json:"length_mean"`
	LengthStd  float64 `json:"length_std"`
	LengthMin  int     `json:"length_min"`
	LengthMax  int     `json:"length_max"`
	Cut        int     `json:"cut"`
}

// deterministic reports whether every episode had the same length and
// return: the game drew nothing that mattered under that action.
func (s minatarConstantStats) deterministic() bool {
	return s.LengthMin == s.LengthMax && s.ReturnMin == s.ReturnMax
}

// minatarOriginalNames maps MinAtar's module names to the games here.
var minatarOriginalNames = []struct{ module, game string }{
	{"breakout", "Breakout"}, {"asterix", "Asterix"}, {"freeway", "Freeway"},
	{"space_invaders", "SpaceInvaders"}, {"seaquest", "Seaquest"},
}

// minatarConstantEpisodes plays n episodes of game with action throughout
// (no sticky actions, ramping on), episode i seeded with i and cut after
// limit steps, and returns their returns and lengths.
func minatarConstantEpisodes(t testing.TB, game string, action, n, limit int) (returns, lengths []float64) {
	m, err := NewMinAtar(game, MinAtarOptions{DifficultyRamping: true})
	if err != nil {
		t.Fatal(err)
	}
	a := []float32{float32(action)}
	for ep := range n {
		m.Reset(int64(ep))
		ret, length := 0.0, 0
		for length < limit {
			_, r, term, trunc, _ := m.Step(a)
			ret += r
			length++
			if term || trunc {
				break
			}
		}
		returns = append(returns, ret)
		lengths = append(lengths, float64(length))
	}
	return returns, lengths
}

// compareWithOriginal holds the port's episodes of one game and policy to
// the original's statistics over refEpisodes: exactly where the original's
// were all alike, otherwise each mean (return and length) within 4
// combined standard errors. With shortest, the shortest episode must also
// be as short as the original's (it marks the earliest end the rules
// allow; ask for it only where both sides played enough episodes to see
// it).
func compareWithOriginal(t *testing.T, key string, want minatarConstantStats, refEpisodes int, returns, lengths []float64, shortest bool) {
	t.Helper()
	if want.deterministic() {
		for i := range lengths {
			if lengths[i] != float64(want.LengthMin) || returns[i] != want.ReturnMin {
				t.Errorf("%s: episode %d lasted %v steps and returned %v; the original's always last %d and return %v",
					key, i, lengths[i], returns[i], want.LengthMin, want.ReturnMin)
				return
			}
		}
		t.Logf("%s: every episode %d steps, return %v, as in the original", key, want.LengthMin, want.ReturnMin)
		return
	}
	for _, m := range []struct {
		name      string
		xs        []float64
		mean, std float64
	}{
		{"return", returns, want.ReturnMean, want.ReturnStd},
		{"length", lengths, want.LengthMean, want.LengthStd},
	} {
		agreesWithOriginal(t, key+" "+m.name, m.xs, m.mean, m.std, float64(refEpisodes))
	}
	if min := slices.Min(lengths); shortest && min != float64(want.LengthMin) {
		t.Errorf("%s: the shortest episode lasted %v steps, the original's %d", key, min, want.LengthMin)
	}
}

// TestMinAtarConstantActionsAgreeWithOriginal plays every game under every
// constant action 0..5 (no sticky actions, ramping on) as many episodes as
// the recorded original did (a tenth with -short or -race), and holds
// lengths and returns to the original's: exactly where the original's
// episodes were all alike (Space Invaders, Freeway's lengths, …),
// statistically elsewhere.
func TestMinAtarConstantActionsAgreeWithOriginal(t *testing.T) {
	data, err := os.ReadFile(minatarConstantFile)
	if err != nil {
		t.Fatal(err)
	}
	var ref minatarConstantRef
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatalf("%s: %v", minatarConstantFile, err)
	}
	n := ref.Episodes
	if testing.Short() || raceBuild {
		n /= 10
	}
	for _, g := range minatarOriginalNames {
		for action := range maActions {
			key := fmt.Sprintf("%s/%d", g.module, action)
			t.Run(key, func(t *testing.T) {
				want, ok := ref.Games[key]
				if !ok {
					t.Fatalf("%s has no entry %q", minatarConstantFile, key)
				}
				returns, lengths := minatarConstantEpisodes(t, g.game, action, n, ref.Cap)
				compareWithOriginal(t, key, want, ref.Episodes, returns, lengths, n == ref.Episodes)
			})
		}
	}
}

// minatarLiveOptions are the bridge's options that run the original
// MinAtar's game (its Gymnasium class, ids registered by
// minatar.gym.register_envs) without sticky actions.
func minatarLiveOptions(python string) Options {
	return Options{"python": python, "import": []any{"minatar.gym:register_envs"},
		"kwargs": map[string]any{"sticky_action_prob": 0.0}, "timeout": 60}
}

// sameAsOriginal compares the port's observation ([C, 10, 10]) with the
// original's ([10, 10, C]) and describes the first difference ("" if none).
func sameAsOriginal(port, orig []float32, c int) string {
	if len(port) != len(orig) {
		return fmt.Sprintf("%d values, the original's %d", len(port), len(orig))
	}
	for i, v := range port {
		ch, y, x := i/(minatarSize*minatarSize), i/minatarSize%minatarSize, i%minatarSize
		if w := orig[(y*minatarSize+x)*c+ch]; v != w {
			return fmt.Sprintf("channel %d, row %d, column %d is %v, the original's %v", ch, y, x, v, w)
		}
	}
	return ""
}

// TestMinAtarTrajectoriesMatchOriginal plays Space Invaders and Breakout,
// which draw nothing from their random streams after Breakout's start,
// side by side with the original MinAtar run through the bridge, without
// sticky actions, and requires every observation, reward and end to be the
// same: Space Invaders under random actions, Breakout tracking the ball
// nine steps in ten (long games, tunnels through the bricks) with its ball
// started where the original's is. It skips where Python, Gymnasium, NumPy or MinAtar's
// source ($EVOLVE_MINATAR_SRC) is missing.
func TestMinAtarTrajectoriesMatchOriginal(t *testing.T) {
	python := pytest.MinAtar(t)
	episodes := 40
	if testing.Short() {
		episodes = 5
	}
	for _, game := range []string{"SpaceInvaders", "Breakout"} {
		t.Run(game, func(t *testing.T) {
			orig, err := Make("gym:MinAtar/"+game+"-v0", minatarLiveOptions(python))
			if err != nil {
				t.Fatal(err)
			}
			defer Close(orig)
			port, err := NewMinAtar(game, MinAtarOptions{DifficultyRamping: true})
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(7, uint64(len(game))))
			policy := minatarUniform
			if game == "Breakout" {
				policy = func(obs []float32, rng *rand.Rand) int {
					if rng.IntN(50) == 0 {
						return rng.IntN(maActions)
					}
					return minatarTrackBall(obs, rng)
				}
			}
			steps := 0
			for ep := range episodes {
				steps += minatarSideBySide(t, orig, port, int64(ep), policy, rng)
			}
			t.Logf("%s: %d episodes, %d steps, every observation, reward and end as in the original", game, episodes, steps)
		})
	}
}

// minatarSideBySide plays one episode of port and the original (orig)
// with the same actions, policy's on the port's observations, and returns
// its length.
func minatarSideBySide(t *testing.T, orig Env, port *MinAtar, seed int64, policy minatarPolicy, rng *rand.Rand) int {
	t.Helper()
	c := port.game.channels()
	want, _ := orig.Reset(seed)
	if want == nil {
		t.Fatalf("original reset: %v", Unwrapped(orig).(*GymEnv).Err())
	}
	got, _ := port.Reset(seed)
	if b, ok := port.game.(*breakout); ok {
		// The ball starts in column 0 heading right or in column 9
		// heading left: put it where the original's is.
		b.ballX, b.dx = 0, 1
		if want[(3*minatarSize+minatarSize-1)*c+1] == 1 {
			b.ballX, b.dx = minatarSize-1, -1
		}
		b.lastX = b.ballX
		got = port.observe()
	}
	if d := sameAsOriginal(got, want, c); d != "" {
		t.Fatalf("seed %d, first observation: %s", seed, d)
	}
	for step := 1; step <= 10_000; step++ {
		a := []float32{float32(policy(got, rng))}
		want, wr, wterm, _, _ := orig.Step(a)
		if want == nil {
			t.Fatalf("original step: %v", Unwrapped(orig).(*GymEnv).Err())
		}
		got, r, term, _, _ := port.Step(a)
		if d := sameAsOriginal(got, want, c); d != "" || r != wr || term != wterm {
			t.Fatalf("seed %d, step %d (action %v): reward %v, terminated %v, the original's %v, %v; observation: %s",
				seed, step, a[0], r, term, wr, wterm, d)
		}
		if term {
			return step
		}
	}
	return 10_000
}

// TestMinAtarConstantActionsMatchOriginal runs the original MinAtar through
// the bridge (a vector of 10 envs per game, seeded with 63-bit SubSeeds
// that the bridge folds for NumPy's RandomState) under every constant
// action, 100 episodes each (20 with -short) cut at 1,000 steps, and holds
// the port's 1,000 episodes to them as TestMinAtarConstantActionsAgreeWithOriginal
// does to the recorded ones: exactly where the original's episodes were
// all alike. It skips where Python, Gymnasium, NumPy or MinAtar's source
// ($EVOLVE_MINATAR_SRC) is missing.
func TestMinAtarConstantActionsMatchOriginal(t *testing.T) {
	python := pytest.MinAtar(t)
	const envs, limit, portEpisodes = 10, 1000, 1000
	perEnv := 10
	if testing.Short() {
		perEnv = 2
	}
	for _, g := range minatarOriginalNames {
		t.Run(g.game, func(t *testing.T) {
			opts := minatarLiveOptions(python)
			opts["max_episode_steps"] = limit
			vec, err := MakeVector("gym:MinAtar/"+g.game+"-v0", envs, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer vec.Close()
			for action := range maActions {
				key := fmt.Sprintf("%s/%d", g.module, action)
				want := minatarBridgedStats(t, vec, action, perEnv)
				returns, lengths := minatarConstantEpisodes(t, g.game, action, portEpisodes, limit)
				compareWithOriginal(t, key, want, envs*perEnv, returns, lengths, false)
			}
		})
	}
}

// minatarBridgedStats plays the vector's envs under action until each has
// finished perEnv episodes (the first perEnv of every env, so that short
// episodes are not favoured) and describes those episodes.
func minatarBridgedStats(t *testing.T, vec *Vector, action, perEnv int) minatarConstantStats {
	t.Helper()
	if _, err := vec.Reset(int64(action)); err != nil {
		t.Fatal(err)
	}
	actions := make([]float32, vec.Len())
	for i := range actions {
		actions[i] = float32(action)
	}
	done := make([]int, vec.Len())
	var returns, lengths []float64
	for len(returns) < perEnv*vec.Len() {
		res, err := vec.Step(actions)
		if err != nil {
			t.Fatal(err)
		}
		for i := range done {
			if res.Done(i) && done[i] < perEnv {
				done[i]++
				returns = append(returns, res.EpisodeReturns[i])
				lengths = append(lengths, float64(res.EpisodeLengths[i]))
			}
		}
	}
	s := minatarConstantStats{ReturnMin: slices.Min(returns), ReturnMax: slices.Max(returns),
		LengthMin: int(slices.Min(lengths)), LengthMax: int(slices.Max(lengths))}
	s.ReturnMean, s.ReturnStd = meanStd(returns)
	s.LengthMean, s.LengthStd = meanStd(lengths)
	return s
}

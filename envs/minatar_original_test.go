package envs

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"testing"
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
// combined standard errors. With as many episodes as the reference, the
// shortest episode must also be as short as the original's (it marks the
// earliest end the rules allow).
func compareWithOriginal(t *testing.T, key string, want minatarConstantStats, refEpisodes int, returns, lengths []float64) {
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
		got, sd := meanStd(m.xs)
		se := math.Sqrt(m.std*m.std/float64(refEpisodes) + sd*sd/float64(len(m.xs)))
		z := 0.0
		if se > 0 {
			z = (got - m.mean) / se
		} else if got != m.mean {
			z = math.Inf(1)
		}
		t.Logf("%s %s: original %.3f (sd %.3f), port %.3f (sd %.3f), z = %+.2f", key, m.name, m.mean, m.std, got, sd, z)
		if math.Abs(z) > 4 {
			t.Errorf("%s: mean %s %.3f is %.1f standard errors from the original's %.3f", key, m.name, got, z, m.mean)
		}
	}
	if shortest := slices.Min(lengths); len(lengths) >= refEpisodes && shortest != float64(want.LengthMin) {
		t.Errorf("%s: the shortest episode lasted %v steps, the original's %d", key, shortest, want.LengthMin)
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
				compareWithOriginal(t, key, want, ref.Episodes, returns, lengths)
			})
		}
	}
}

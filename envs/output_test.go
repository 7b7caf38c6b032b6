package envs

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// TestCheckOutputNamesWhatIsWrong: each kind of bad output is an error
// matching ErrBadOutput that names the env (its type under its wrappers),
// the call and what is wrong; good output is nil.
func TestCheckOutputNamesWhatIsWrong(t *testing.T) {
	env := NewTimeLimit(NewCartPole(), 10)
	box, disc := NewBox(-1, 1, 2), Discrete{N: 3}
	good := []float32{0, 0}
	for _, tc := range []struct {
		name   string
		act    Space
		obs    []float32
		reward float64
		mask   []bool
		want   string // "" for no error
	}{
		{"good", disc, good, 1, []bool{true, false, true}, ""},
		{"short", disc, []float32{0}, 0, nil, "returned 1 observation values, want 2"},
		{"nan", disc, []float32{0, float32(math.NaN())}, 0, nil, "returned observation[1] = NaN"},
		{"reward", disc, good, math.Inf(1), nil, "returned reward +Inf"},
		{"mask length", disc, good, 0, []bool{true}, "returned an action mask of 1 entries, want 3 for Discrete(3)"},
		{"dead mask", disc, good, 0, []bool{false, false, false}, "returned an action mask that leaves no legal action"},
		{"mask for a box", box, good, 0, []bool{true}, "returned an action mask, but Box("},
	} {
		err := CheckOutput(env, box, tc.act, "step", tc.obs, tc.reward, Info{ActionMask: tc.mask})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), "env *envs.CartPole step "+tc.want) || !errors.Is(err, ErrBadOutput)):
			t.Errorf("%s: %v, want ErrBadOutput naming *envs.CartPole and %q", tc.name, err, tc.want)
		}
	}
}

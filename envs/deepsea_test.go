package envs

import (
	"image/color"
	"math"
	"strings"
	"testing"
)

func newDeepSea(t *testing.T, c DeepSeaConfig) *DeepSea {
	t.Helper()
	d, err := NewDeepSea(c)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// play runs one episode choosing each step's action with policy(row, col)
// and returns its return, length and the cells visited.
func playDeepSea(t *testing.T, d *DeepSea, seed int64, policy func(row, col int) int) (ret float64, steps int, cells [][2]int) {
	t.Helper()
	obs, _ := d.Reset(seed)
	n := d.size
	for {
		row, col := d.Position()
		if onehot(obs) != row*n+col {
			t.Fatalf("step %d: observation's 1 at %d, the agent at row %d col %d", steps, onehot(obs), row, col)
		}
		cells = append(cells, [2]int{row, col})
		var r float64
		var term, trunc bool
		obs, r, term, trunc, _ = d.Step([]float32{float32(policy(row, col))})
		ret += r
		steps++
		if trunc {
			t.Fatal("DeepSea truncated an episode")
		}
		if term {
			if onehot(obs) != -1 {
				t.Fatalf("the final observation is not all zeros: %v", obs)
			}
			return ret, steps, cells
		}
	}
}

// onehot returns the index of the single 1 of obs, -1 if obs is all zeros,
// and -2 otherwise.
func onehot(obs []float32) int {
	at := -1
	for i, v := range obs {
		switch {
		case v == 1 && at == -1:
			at = i
		case v != 0:
			return -2
		}
	}
	return at
}

// TestDeepSeaRules: the optimal policy (the action that moves right in
// every cell) falls along the diagonal and earns 1 − move_cost in N steps;
// always moving left stays in column 0 and earns 0; the first wrong move
// costs the +1 whatever follows; every move right costs move_cost/N.
func TestDeepSeaRules(t *testing.T) {
	for _, n := range []int{1, 5, 20} {
		d := newDeepSea(t, DeepSeaConfig{Size: n, Deterministic: true, MoveCost: 0.01, RandomizeActions: true, MappingSeed: 3})
		right := func(row, col int) int { return d.RightAction(row, col) }
		left := func(row, col int) int { return 1 - d.RightAction(row, col) }
		ret, steps, cells := playDeepSea(t, d, 1, right)
		if math.Abs(ret-0.99) > 1e-12 || steps != n {
			t.Errorf("N %d, always right: return %v in %d steps, want 0.99 in %d", n, ret, steps, n)
		}
		for i, c := range cells {
			if c != [2]int{i, i} {
				t.Fatalf("N %d, always right: step %d at %v, want the diagonal", n, i, c)
			}
		}
		if ret, steps, cells := playDeepSea(t, d, 2, left); ret != 0 || steps != n || cells[n-1] != [2]int{n - 1, 0} {
			t.Errorf("N %d, always left: return %v in %d steps ending at %v, want 0 in %d at column 0", n, ret, steps, cells[n-1], n)
		}
		if n < 2 {
			continue
		}
		// One wrong move on the last step: all the costs, no reward.
		lastWrong := func(row, col int) int {
			if row == n-1 {
				return left(row, col)
			}
			return right(row, col)
		}
		if ret, _, _ := playDeepSea(t, d, 3, lastWrong); math.Abs(ret-(-0.01*float64(n-1)/float64(n))) > 1e-12 {
			t.Errorf("N %d, wrong at the last step: return %v, want %v", n, ret, -0.01*float64(n-1)/float64(n))
		}
		// Wrong at the first step: the diagonal is out of reach.
		firstWrong := func(row, col int) int {
			if row == 0 {
				return left(row, col)
			}
			return right(row, col)
		}
		if ret, _, _ := playDeepSea(t, d, 4, firstWrong); ret > 0 {
			t.Errorf("N %d, wrong at the first step: return %v, want no reward", n, ret)
		}
	}
}

// TestDeepSeaActionMapping: the mapping is drawn once per env from its
// mapping seed — the same after every reset whatever the episode's seed,
// the same for every env built with that seed, another for another seed —
// about half its cells move right with action 1; randomize_actions = false
// makes 1 move right everywhere.
func TestDeepSeaActionMapping(t *testing.T) {
	c := DeepSeaConfig{Size: 30, Deterministic: true, MoveCost: 0.01, RandomizeActions: true, MappingSeed: 7}
	a, b := newDeepSea(t, c), newDeepSea(t, c)
	c.MappingSeed = 8
	other := newDeepSea(t, c)
	a.Reset(1)
	before := append([]int8(nil), a.right...)
	a.Reset(99)
	ones, diff := 0, 0
	for i := range a.right {
		if a.right[i] != before[i] || a.right[i] != b.right[i] {
			t.Fatalf("cell %d: the mapping changed with the episode's seed or between envs of one mapping seed", i)
		}
		ones += int(a.right[i])
		if a.right[i] != other.right[i] {
			diff++
		}
	}
	cells := float64(len(a.right))
	// Binomial(900, ½): mean 450, sd 15; 5 sd either way.
	if math.Abs(float64(ones)-cells/2) > 5*math.Sqrt(cells)/2 || math.Abs(float64(diff)-cells/2) > 5*math.Sqrt(cells)/2 {
		t.Errorf("%d of %v cells move right with action 1, %d differ from another seed's: want about half each", ones, cells, diff)
	}
	c.RandomizeActions = false
	fixed := newDeepSea(t, c)
	for i, r := range fixed.right {
		if r != 1 {
			t.Fatalf("randomize_actions = false: cell %d moves right with action %d", i, r)
		}
	}
}

// TestDeepSeaStochastic: in the stochastic variant a move right fails with
// probability 1/N, so the optimal policy earns (1 − 1/N)^(N−1) on average,
// and the bottom-right corner adds N(0, 1) noise to the +1 (each within 5
// standard errors over many episodes).
func TestDeepSeaStochastic(t *testing.T) {
	const n, episodes = 5, 20000
	d := newDeepSea(t, DeepSeaConfig{Size: n, MoveCost: 0, RandomizeActions: true, MappingSeed: 1})
	failed, tries := 0, 0
	var rets, noise []float64
	for ep := range episodes {
		seed := NoSeed
		if ep == 0 {
			seed = 5
		}
		d.Reset(seed)
		ret := 0.0
		for {
			row, col := d.Position()
			_, r, term, _, _ := d.Step([]float32{float32(d.RightAction(row, col))})
			ret += r
			if _, c := d.Position(); col < n-1 {
				tries++
				if c == col {
					failed++
				}
			}
			if row == n-1 && col == n-1 {
				noise = append(noise, r-1)
			}
			if term {
				break
			}
		}
		rets = append(rets, ret)
	}
	p, se := float64(failed)/float64(tries), math.Sqrt(0.2*0.8/float64(tries))
	if math.Abs(p-1.0/n) > 5*se {
		t.Errorf("moves right failed %.4f of the time, want 1/N = %.2f (± %.4f)", p, 1.0/n, se)
	}
	mean, want := meanOf(rets), math.Pow(1-1.0/n, n-1) // every move right before the last must succeed
	if math.Abs(mean-want) > 5*math.Sqrt(1.3/float64(len(rets))) {
		t.Errorf("mean return %.4f, want (1 − 1/N)^(N−1) = %.4f", mean, want)
	}
	m := meanOf(noise)
	v := 0.0
	for _, x := range noise {
		v += (x - m) * (x - m)
	}
	v /= float64(len(noise) - 1)
	k := float64(len(noise))
	if math.Abs(m) > 5/math.Sqrt(k) || math.Abs(v-1) > 5*math.Sqrt(2/k) {
		t.Errorf("the bottom-right noise over %v episodes: mean %.4f, variance %.4f, want N(0, 1)", k, m, v)
	}
}

func meanOf(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// TestDeepSeaOptionsAndCheck: the registered env takes its options, refuses
// bad ones naming them, and passes envs.Check in both variants.
func TestDeepSeaOptionsAndCheck(t *testing.T) {
	for _, opts := range []Options{nil, {"size": 20, "deterministic": false, "mapping_seed": 4}} {
		env, err := Make("DeepSea-v0", opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := Check(env, CheckOptions{Steps: 2000}); err != nil {
			t.Errorf("%v: %v", opts, err)
		}
	}
	for _, flat := range []bool{false, true} {
		env, _ := Make("DeepSea-v0", Options{"size": 20, "flat": flat})
		want := NewBox(0, 1, 1, 20, 20)
		if flat {
			want = NewBox(0, 1, 400)
		}
		if got := env.ObservationSpace(); !SameSpace(got, want) {
			t.Errorf("size 20, flat %v: observation space %v, want %v", flat, got, want)
		}
	}
	for _, c := range []struct {
		opts Options
		want string
	}{
		{Options{"size": 0}, "size = 0"},
		{Options{"size": 2.5}, `"size"`},
		{Options{"move_cost": -1.0}, "move_cost = -1"},
		{Options{"mapping_seed": -1}, `"mapping_seed" = -1`},
		{Options{"deterministic": "yes"}, `"deterministic"`},
		{Options{"sizee": 10}, "sizee"},
	} {
		if _, err := Make("DeepSea-v0", c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error containing %q", c.opts, err, c.want)
		}
	}
}

// TestDeepSeaRender: the picture is deepSeaCell pixels a cell, the agent's
// disc is at its cell (the centre pixel is the agent's colour), the goal
// cell gold, and no disc is drawn after the last step.
func TestDeepSeaRender(t *testing.T) {
	d := newDeepSea(t, DeepSeaConfig{Size: 6, Deterministic: true, MoveCost: 0.01, RandomizeActions: true})
	d.Reset(0)
	d.Step([]float32{float32(d.RightAction(0, 0))})
	cell := deepSeaCell(6)
	img := d.Render()
	if b := img.Bounds(); b.Dx() != 6*cell || b.Dy() != 6*cell {
		t.Fatalf("image %v, want %d×%d", b, 6*cell, 6*cell)
	}
	centre := func(row, col int) color.RGBA {
		return color.RGBAModel.Convert(img.At(col*cell+cell/2, row*cell+cell/2)).(color.RGBA)
	}
	if got := centre(1, 1); got != deepSeaAgent {
		t.Errorf("the agent's cell (1, 1) is %v at its centre, want %v", got, deepSeaAgent)
	}
	if got := centre(5, 5); got != deepSeaGoal {
		t.Errorf("the goal cell is %v, want %v", got, deepSeaGoal)
	}
	for range 5 {
		row, col := d.Position()
		d.Step([]float32{float32(d.RightAction(row, col))})
	}
	img = d.Render()
	if got := centre(5, 5); got != deepSeaGoal {
		t.Errorf("after the last step the goal cell is %v, want %v (no agent)", got, deepSeaGoal)
	}
}

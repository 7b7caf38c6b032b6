package envs

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ByteArena/box2d"
)

// landerHeuristic is the hand-written controller Gymnasium ships with
// LunarLander for testing and demonstration, written here from its
// description: aim the lander's angle at the pad (half the x offset plus
// the x velocity, at most 0.4 rad), hover at a height of 0.55·|x|, damp
// both errors with the angular and vertical velocities, and once a leg
// touches only brake the fall. The discrete form fires the main engine
// when the hover error dominates and exceeds 0.05, else the side engine
// that corrects an angle error above 0.05; the continuous form sets the
// throttles to 20·hover−1 and −20·angle, clipped to [−1, 1]. It writes the
// action into dst and returns the part of it the env takes.
func landerHeuristic(s []float32, continuous bool, dst []float32) []float32 {
	x, y, vx, vy := float64(s[0]), float64(s[1]), float64(s[2]), float64(s[3])
	angle, angVel := float64(s[4]), float64(s[5])
	angleTarget := clip(x*0.5+vx, -0.4, 0.4)
	hoverTarget := 0.55 * math.Abs(x)
	angleTodo := (angleTarget-angle)*0.5 - angVel
	hoverTodo := (hoverTarget-y)*0.5 - vy*0.5
	if s[6] != 0 || s[7] != 0 {
		angleTodo = 0
		hoverTodo = -vy * 0.5
	}
	if continuous {
		dst[0] = float32(clip(hoverTodo*20-1, -1, 1))
		dst[1] = float32(clip(-angleTodo*20, -1, 1))
		return dst[:2]
	}
	a := 0
	switch {
	case hoverTodo > math.Abs(angleTodo) && hoverTodo > 0.05:
		a = 2
	case angleTodo < -0.05:
		a = 3
	case angleTodo > 0.05:
		a = 1
	}
	dst[0] = float32(a)
	return dst[:1]
}

func makeLander(t testing.TB, id string, opts Options) (Env, *LunarLander) {
	t.Helper()
	env, err := Make(id, opts)
	if err != nil {
		t.Fatal(err)
	}
	return env, Unwrapped(env).(*LunarLander)
}

// TestLunarLanderHeuristicLands runs Gymnasium's heuristic for 20 seeded
// episodes of each variant. Over 1,000 episodes Gymnasium's own
// LunarLander-v3 gives it 236.9 ± 105.8 (discrete) and 283.9 ± 18.9
// (continuous), as recorded by EnvPool's correctness test; this port gives
// 237.7 ± 100.4 and 281.8 ± 25.3 over seeds 0…999. The discrete heuristic
// sometimes tips over after landing, hence the wide spread.
func TestLunarLanderHeuristicLands(t *testing.T) {
	for _, id := range []string{"LunarLander-v3", "LunarLanderContinuous-v3"} {
		t.Run(id, func(t *testing.T) {
			env, ll := makeLander(t, id, nil)
			continuous := ll.Params().Continuous
			const episodes = 20
			var total float64
			landed := 0
			buf := make([]float32, 2)
			for seed := range int64(episodes) {
				obs, _ := env.Reset(seed)
				ret := 0.0
				for {
					var r float64
					var term, trunc bool
					obs, r, term, trunc, _ = env.Step(landerHeuristic(obs, continuous, buf))
					ret += r
					if term || trunc {
						if term && r == 100 && !ll.lander.IsAwake() {
							landed++
						}
						break
					}
				}
				total += ret
			}
			mean := total / episodes
			t.Logf("%s: heuristic mean return %.1f over %d episodes, %d came to rest", id, mean, episodes, landed)
			if mean <= 200 {
				t.Errorf("heuristic mean return %.1f, want > 200", mean)
			}
			if landed < episodes/2 {
				t.Errorf("only %d of %d episodes ended at rest with +100", landed, episodes)
			}
		})
	}
}

type landerTrace struct {
	obs     [][]float32
	rewards []float64
	flags   [][2]bool
}

// landerRun plays steps random actions (from their own seeded generator)
// after Reset(seed), resetting with NoSeed at episode ends.
func landerRun(env Env, seed int64, steps int) landerTrace {
	var tr landerTrace
	rng := rand.New(rand.NewPCG(42, 42))
	action := make([]float32, env.ActionSpace().FlatSize())
	obs, _ := env.Reset(seed)
	tr.obs = append(tr.obs, slices.Clone(obs))
	for range steps {
		env.ActionSpace().Sample(rng, action)
		obs, r, term, trunc, _ := env.Step(action)
		tr.obs = append(tr.obs, slices.Clone(obs))
		tr.rewards = append(tr.rewards, r)
		tr.flags = append(tr.flags, [2]bool{term, trunc})
		if term || trunc {
			obs, _ = env.Reset(NoSeed)
			tr.obs = append(tr.obs, slices.Clone(obs))
		}
	}
	return tr
}

func sameTrace(a, b landerTrace) bool {
	if len(a.obs) != len(b.obs) || !slices.Equal(a.rewards, b.rewards) || !slices.Equal(a.flags, b.flags) {
		return false
	}
	for i := range a.obs {
		if !slices.Equal(a.obs[i], b.obs[i]) {
			return false
		}
	}
	return true
}

func TestLunarLanderSeeding(t *testing.T) {
	for _, id := range []string{"LunarLander-v3", "LunarLanderContinuous-v3"} {
		t.Run(id, func(t *testing.T) {
			env, _ := makeLander(t, id, Options{"enable_wind": true})
			first := landerRun(env, 7, 400)
			// Same seed after other episodes: the world is rebuilt, so
			// nothing of the past leaks in.
			again := landerRun(env, 7, 400)
			if !sameTrace(first, again) {
				t.Error("same seed gave a different episode")
			}
			other, _ := makeLander(t, id, Options{"enable_wind": true})
			if !sameTrace(first, landerRun(other, 7, 400)) {
				t.Error("same seed gave a different episode in a second env")
			}
			if sameTrace(first, landerRun(env, 8, 400)) {
				t.Error("seeds 7 and 8 gave the same episode")
			}
			// NoSeed continues the stream: two starts differ.
			a, _ := env.Reset(NoSeed)
			a = slices.Clone(a)
			b, _ := env.Reset(NoSeed)
			if slices.Equal(a, b) {
				t.Error("two NoSeed resets gave the same first observation")
			}
		})
	}
}

// TestLunarLanderParallel steps envs in parallel goroutines, as the trainer
// does, and expects exactly the episodes each gives alone (run it with
// -race too: see box2dStepMu).
func TestLunarLanderParallel(t *testing.T) {
	const n = 3
	var alone, together [n]landerTrace
	for i := range n {
		env, _ := makeLander(t, "LunarLanderContinuous-v3", nil)
		alone[i] = landerRun(env, int64(i), 300)
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			env, err := Make("LunarLanderContinuous-v3", nil)
			if err != nil {
				t.Error(err)
				return
			}
			together[i] = landerRun(env, int64(i), 300)
		})
	}
	wg.Wait()
	for i := range n {
		if !sameTrace(alone[i], together[i]) {
			t.Errorf("env %d: episode in parallel differs from the one alone", i)
		}
	}
}

func TestLunarLanderSpaces(t *testing.T) {
	env, _ := makeLander(t, "LunarLander-v3", nil)
	box := env.ObservationSpace().(Box)
	twoPi := float32(2 * math.Pi)
	wantHigh := []float32{2.5, 2.5, 10, 10, twoPi, 10, 1, 1}
	wantLow := []float32{-2.5, -2.5, -10, -10, -twoPi, -10, 0, 0}
	if !slices.Equal(box.High, wantHigh) || !slices.Equal(box.Low, wantLow) {
		t.Errorf("observation space %v, want Gymnasium v3's bounds %v…%v", box, wantLow, wantHigh)
	}
	if got := env.ActionSpace(); got != (Discrete{N: 4}) {
		t.Errorf("discrete action space %v", got)
	}
	cont, _ := makeLander(t, "LunarLanderContinuous-v3", nil)
	ab := cont.ActionSpace().(Box)
	if !slices.Equal(ab.Dims, []int{2}) || !slices.Equal(ab.Low, []float32{-1, -1}) || !slices.Equal(ab.High, []float32{1, 1}) {
		t.Errorf("continuous action space %v, want Box(-1, 1, [2])", ab)
	}
	if spec, _ := Lookup("LunarLander-v3"); spec.MaxEpisodeSteps != 1000 {
		t.Errorf("time limit %d, want 1000", spec.MaxEpisodeSteps)
	}
	// The first observation: the lander starts at the top centre, legs up.
	obs, _ := env.Reset(0)
	if math.Abs(float64(obs[0])) > 0.05 || obs[1] < 1.3 || obs[1] > 1.6 || obs[6] != 0 || obs[7] != 0 {
		t.Errorf("first observation %v, want the lander at the top centre", obs)
	}
}

// TestLunarLanderCrash lets the lander fall with its engines off: the hull
// hits the ground, which ends the episode with −100.
func TestLunarLanderCrash(t *testing.T) {
	env, ll := makeLander(t, "LunarLander-v3", nil)
	for seed := range int64(5) {
		env.Reset(seed)
		for n := 1; ; n++ {
			obs, r, term, trunc, _ := env.Step([]float32{0})
			if trunc || n > 500 {
				t.Fatalf("seed %d: no crash after %d steps", seed, n)
			}
			if term {
				if r != -100 || !ll.gameOver {
					t.Errorf("seed %d: fell and ended with reward %v, hull contact %v; want -100 from a crash", seed, r, ll.gameOver)
				}
				if math.Abs(float64(obs[0])) >= 1 {
					t.Errorf("seed %d: left the screen (x %v) instead of crashing", seed, obs[0])
				}
				break
			}
		}
	}
}

// TestLunarLanderLeavesScreen sends the lander sideways (by setting its
// velocity, as no engine pushes that hard) until |x| ≥ 1 ends the episode
// with −100 before anything touches the ground.
func TestLunarLanderLeavesScreen(t *testing.T) {
	env, ll := makeLander(t, "LunarLander-v3", nil)
	for _, vx := range []float64{-40, 40} {
		env.Reset(3)
		for _, b := range []*box2d.B2Body{ll.lander, ll.legs[0], ll.legs[1]} {
			b.SetLinearVelocity(box2d.MakeB2Vec2(vx, 0))
		}
		for n := 1; ; n++ {
			obs, r, term, _, _ := env.Step([]float32{0})
			if n > 100 {
				t.Fatalf("vx %v: still flying after %d steps", vx, n)
			}
			if !term {
				if math.Abs(float64(obs[0])) >= 1 {
					t.Fatalf("vx %v: x = %v but not terminated", vx, obs[0])
				}
				continue
			}
			if r != -100 || math.Abs(float64(obs[0])) < 1 || ll.gameOver {
				t.Errorf("vx %v: ended at x %v with reward %v (hull contact %v), want |x| >= 1 and -100", vx, obs[0], r, ll.gameOver)
			}
			break
		}
	}
}

// shapingOf recomputes Gymnasium's shaping from an observation.
func shapingOf(s []float32) float64 {
	f := func(i int) float64 { return float64(s[i]) }
	return -100*math.Hypot(f(0), f(1)) - 100*math.Hypot(f(2), f(3)) - 100*math.Abs(f(4)) + 10*f(6) + 10*f(7)
}

// TestLunarLanderEngineRules checks which actions fire which engine, at
// what throttle, and that the reward charges 0.3 per unit of main throttle
// and 0.03 per unit of side throttle on top of the shaping difference.
func TestLunarLanderEngineRules(t *testing.T) {
	tests := []struct {
		id             string
		action         []float32
		mPower, sPower float64
	}{
		{"LunarLander-v3", []float32{0}, 0, 0},
		{"LunarLander-v3", []float32{1}, 0, 1},
		{"LunarLander-v3", []float32{2}, 1, 0},
		{"LunarLander-v3", []float32{3}, 0, 1},
		{"LunarLanderContinuous-v3", []float32{0, 0}, 0, 0},
		{"LunarLanderContinuous-v3", []float32{-1, 0.5}, 0, 0},    // a0 <= 0: main off; |a1| <= 0.5: sides off
		{"LunarLanderContinuous-v3", []float32{-0.3, -0.5}, 0, 0}, // |a1| = 0.5 still off
		{"LunarLanderContinuous-v3", []float32{1e-6, 0.51}, (1e-6 + 1) / 2, 0.51},
		{"LunarLanderContinuous-v3", []float32{0.5, -0.7}, 0.75, 0.7},
		{"LunarLanderContinuous-v3", []float32{1, 1}, 1, 1},
		{"LunarLanderContinuous-v3", []float32{7, -3}, 1, 1}, // clipped to the bounds
	}
	for _, tt := range tests {
		env, ll := makeLander(t, tt.id, nil)
		prev, _ := env.Reset(5)
		prevShaping := shapingOf(prev)
		for range 20 {
			obs, r, term, _, _ := env.Step(tt.action)
			if term {
				t.Fatalf("%s %v: terminated in the air", tt.id, tt.action)
			}
			if math.Abs(ll.mPower-tt.mPower) > 1e-7 || math.Abs(ll.sPower-tt.sPower) > 1e-7 {
				t.Fatalf("%s %v: main, side throttle %v, %v; want %v, %v", tt.id, tt.action, ll.mPower, ll.sPower, tt.mPower, tt.sPower)
			}
			// The observation is the float32 rounding of the state the
			// shaping is computed from, so allow for that rounding.
			s := shapingOf(obs)
			if want := s - prevShaping - 0.3*tt.mPower - 0.03*tt.sPower; math.Abs(r-want) > 1e-3 {
				t.Fatalf("%s %v: reward %v, want shaping change minus fuel %v", tt.id, tt.action, r, want)
			}
			prevShaping = s
		}
	}

	// Actions that fire nothing give exactly the trajectory of doing
	// nothing; a tiny positive a0 does not.
	noop := func(a []float32) landerTrace {
		env, _ := makeLander(t, "LunarLanderContinuous-v3", nil)
		var tr landerTrace
		env.Reset(11)
		for range 60 {
			obs, r, term, trunc, _ := env.Step(a)
			tr.obs = append(tr.obs, slices.Clone(obs))
			tr.rewards = append(tr.rewards, r)
			tr.flags = append(tr.flags, [2]bool{term, trunc})
		}
		return tr
	}
	base := noop([]float32{0, 0})
	for _, a := range [][]float32{{-1, 0.5}, {-0.01, -0.5}, {0, 0.49}} {
		if !sameTrace(base, noop(a)) {
			t.Errorf("action %v changed the trajectory of doing nothing", a)
		}
	}
	if sameTrace(base, noop([]float32{0.01, 0})) {
		t.Error("a0 = 0.01 fired no main engine")
	}
	if sameTrace(base, noop([]float32{0, 0.51})) {
		t.Error("a1 = 0.51 fired no side engine")
	}
}

func TestLunarLanderBadActionsPanic(t *testing.T) {
	mustPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s: no panic", name)
			}
		}()
		f()
	}
	ll, err := NewLunarLander(DefaultLunarLanderParams())
	if err != nil {
		t.Fatal(err)
	}
	mustPanic("step before reset", func() { ll.Step([]float32{0}) })
	ll.Reset(0)
	mustPanic("action 4", func() { ll.Step([]float32{4}) })
	mustPanic("action 1.5", func() { ll.Step([]float32{1.5}) })
	mustPanic("two values", func() { ll.Step([]float32{0, 0}) })
	p := DefaultLunarLanderParams()
	p.Continuous = true
	cl, _ := NewLunarLander(p)
	cl.Reset(0)
	mustPanic("one value", func() { cl.Step([]float32{0}) })
}

// TestLunarLanderWind checks that wind pushes the lander (same random
// draws, only the wind's strength differs), that its phases are drawn anew
// every episode as in v3, and that it stops once a leg touches down.
func TestLunarLanderWind(t *testing.T) {
	run := func(opts Options) landerTrace {
		env, _ := makeLander(t, "LunarLander-v3", opts)
		var tr landerTrace
		obs, _ := env.Reset(4)
		tr.obs = append(tr.obs, slices.Clone(obs))
		for range 50 {
			obs, _, _, _, _ := env.Step([]float32{0})
			tr.obs = append(tr.obs, slices.Clone(obs))
		}
		return tr
	}
	calm := run(Options{"enable_wind": true, "wind_power": 0, "turbulence_power": 0})
	windy := run(Options{"enable_wind": true})
	gusty := run(Options{"enable_wind": true, "wind_power": 20.0, "turbulence_power": int64(2)})
	if sameTrace(calm, windy) || sameTrace(windy, gusty) {
		t.Error("wind did not change the trajectory")
	}
	if sameTrace(calm, run(Options{"enable_wind": true, "turbulence_power": 0})) {
		t.Error("the wind force alone did not change the trajectory")
	}
	if sameTrace(calm, run(Options{"enable_wind": true, "wind_power": 0})) {
		t.Error("the turbulence torque alone did not change the trajectory")
	}
	if !sameTrace(calm, run(Options{"enable_wind": true, "wind_power": 0, "turbulence_power": 0})) {
		t.Error("wind runs are not reproducible")
	}

	env, ll := makeLander(t, "LunarLander-v3", Options{"enable_wind": true})
	env.Reset(1)
	w1, t1 := ll.windIdx, ll.torqueIdx
	env.Reset(NoSeed)
	if ll.windIdx == w1 && ll.torqueIdx == t1 {
		t.Error("wind phases not redrawn at reset")
	}
	env.Reset(1)
	if ll.windIdx != w1 || ll.torqueIdx != t1 {
		t.Error("same seed gave different wind phases")
	}
	if w1 < -9999 || w1 > 9998 || t1 < -9999 || t1 > 9998 {
		t.Errorf("wind phases %d, %d outside [-9999, 9998]", w1, t1)
	}
	// Land, then check the wind index stops advancing while a leg touches.
	buf := make([]float32, 2)
	obs, _ := env.Reset(1)
	for range 1000 {
		before := ll.windIdx
		touching := ll.legContact[0] || ll.legContact[1]
		var term, trunc bool
		obs, _, term, trunc, _ = env.Step(landerHeuristic(obs, false, buf))
		if touching && ll.windIdx != before {
			t.Fatal("wind blew while a leg touched the ground")
		}
		if !touching && ll.windIdx != before+1 {
			t.Fatal("wind did not blow in the air")
		}
		if term || trunc {
			break
		}
	}
}

func TestLunarLanderOptions(t *testing.T) {
	bad := []struct {
		opts Options
		want string
	}{
		{Options{"gravity": -12.0}, "gravity"},
		{Options{"gravity": 0}, "gravity"},
		{Options{"gravity": 3.5}, "gravity"},
		{Options{"gravity": "low"}, "gravity"},
		{Options{"enable_wind": "yes"}, "enable_wind"},
		{Options{"wind_power": math.NaN()}, "wind_power"},
		{Options{"turbulence_power": true}, "turbulence_power"},
		{Options{"continuous": true}, "continuous"},
		{Options{"wnd_power": 3, "gravity": -5}, "wnd_power"},
	}
	for _, id := range []string{"LunarLander-v3", "LunarLanderContinuous-v3"} {
		for _, tt := range bad {
			_, err := Make(id, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s %v: error %v, want one naming %q", id, tt.opts, err, tt.want)
			}
		}
	}
	_, ll := makeLander(t, "LunarLanderContinuous-v3", Options{"gravity": int64(-5), "enable_wind": true, "wind_power": 25.0, "turbulence_power": 0.5})
	want := LunarLanderParams{Continuous: true, Gravity: -5, EnableWind: true, WindPower: 25, TurbulencePower: 0.5}
	if ll.Params() != want {
		t.Errorf("params %+v, want %+v", ll.Params(), want)
	}
	if _, err := NewLunarLander(LunarLanderParams{}); err == nil {
		t.Error("zero params (gravity 0) accepted")
	}

	// Weaker gravity: the lander falls more slowly.
	fall := func(g float64) float32 {
		env, _ := makeLander(t, "LunarLander-v3", Options{"gravity": g})
		env.Reset(2)
		var obs []float32
		for range 30 {
			obs, _, _, _, _ = env.Step([]float32{0})
		}
		return obs[3]
	}
	if fall(-2) <= fall(-10) {
		t.Error("gravity -2 made the lander fall as fast as gravity -10")
	}
}

// BenchmarkLunarLanderStep times one step under the heuristic controller,
// with the resets at episode ends (about one per 250 steps) included.
func BenchmarkLunarLanderStep(b *testing.B) {
	env, err := Make("LunarLander-v3", nil)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]float32, 2)
	obs, _ := env.Reset(0)
	b.ReportAllocs()
	for b.Loop() {
		var term, trunc bool
		obs, _, term, trunc, _ = env.Step(landerHeuristic(obs, false, buf))
		if term || trunc {
			obs, _ = env.Reset(NoSeed)
		}
	}
}

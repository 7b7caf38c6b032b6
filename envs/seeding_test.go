package envs

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"testing"

	"github.com/ByteArena/box2d"

	"github.com/evolverl/evolve/internal/pytest"
)

// gymnasiumResets is testdata/gymnasium_resets.json, written by
// testdata/gen_gymnasium_resets.py with Gymnasium 0.29.1.
type gymnasiumResets struct {
	Envs []struct {
		EnvID string `json:"env_id"`
		Runs  []struct {
			Seed int64 `json:"seed"`
			// Resets are reset(seed=Seed), then unseeded reset() calls.
			Resets []gymStart `json:"resets"`
		} `json:"runs"`
	} `json:"envs"`
	LunarLander []struct {
		Seed      int64     `json:"seed"`
		SmoothY   []float64 `json:"smooth_y"`
		WindIdx   int       `json:"wind_idx"`
		TorqueIdx int       `json:"torque_idx"`
	} `json:"lunar_lander_v3_draws"`
}

// gymStart is one start of an episode: the observation reset returned and
// env.unwrapped.state, both widened to float64 without loss.
type gymStart struct {
	Obs   []float64 `json:"obs"`
	State []float64 `json:"state"`
}

func readGymnasiumResets(t *testing.T) gymnasiumResets {
	t.Helper()
	data, err := os.ReadFile("testdata/gymnasium_resets.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref gymnasiumResets
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatalf("testdata/gymnasium_resets.json: %v", err)
	}
	if len(ref.Envs) == 0 || len(ref.LunarLander) == 0 {
		t.Fatal("testdata/gymnasium_resets.json is missing envs or lander draws")
	}
	return ref
}

// TestResetsMatchGymnasium replays the recorded starts: Reset(seed) and the
// NoSeed resets after it give Gymnasium's reset(seed=seed) and unseeded
// reset() states and observations bit for bit (see diffStart for the one
// exception, allowed but absent from the recording).
func TestResetsMatchGymnasium(t *testing.T) {
	ref := readGymnasiumResets(t)
	for _, e := range ref.Envs {
		t.Run(e.EnvID, func(t *testing.T) {
			env, err := Make(e.EnvID, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, run := range e.Runs {
				for k, want := range run.Resets {
					seed := NoSeed
					if k == 0 {
						seed = run.Seed
					}
					obs, _ := env.Reset(seed)
					if msg := diffStart(env, obs, want); msg != "" {
						t.Errorf("seed %d, reset %d: %s", run.Seed, k, msg)
					}
				}
			}
		})
	}
}

// diffStart describes how an env's start differs from Gymnasium's, or
// returns "" when they agree: the state in every bit, and the observation in
// every bit but for one exception. Acrobot's first observation holds the
// cosines and sines of its float32 start angles, which NumPy computes in
// float32 with code that depends on its version and the CPU (on AVX2 and
// AVX-512, NumPy 1.24's polynomial misses the correctly rounded value in
// about 0.1 % of resets); the port rounds correctly, so there, and only
// there, one float32 ulp is allowed.
func diffStart(env Env, obs []float32, want gymStart) string {
	state := Unwrapped(env).(physics).physicsState()
	if !equalBits64(state, want.State) {
		return fmt.Sprintf("state %v, want %v", state, want.State)
	}
	if len(obs) != len(want.Obs) {
		return fmt.Sprintf("obs %v, want %v", obs, want.Obs)
	}
	_, acrobot := Unwrapped(env).(*Acrobot)
	for i := range obs {
		w := float32(want.Obs[i])
		if obs[i] == w || acrobot && i < 4 && ulpsApart32(obs[i], w) <= 1 {
			continue
		}
		return fmt.Sprintf("obs %v, want %v (index %d)", obs, want.Obs, i)
	}
	return ""
}

// ulpsApart32 counts the float32 values between a and b (of one sign).
func ulpsApart32(a, b float32) int64 {
	d := int64(math.Float32bits(a)) - int64(math.Float32bits(b))
	if (a < 0) != (b < 0) {
		return math.MaxInt64
	}
	return max(d, -d)
}

func equalBits64(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// TestLunarLanderDrawsMatchNumPy checks LunarLander-v3's reset draws
// against the recorded ones of Gymnasium's np_random (no Box2D needed to
// record them): the smoothed terrain heights, and the wind and torque
// phases, which follow the two initial-force draws. Reset ends with one
// airborne step, which advances both phases by one.
func TestLunarLanderDrawsMatchNumPy(t *testing.T) {
	ref := readGymnasiumResets(t)
	env, ll := makeLander(t, "LunarLander-v3", Options{"enable_wind": true})
	for _, want := range ref.LunarLander {
		env.Reset(want.Seed)
		if got := landerTerrain(ll); !equalBits64(got, want.SmoothY) {
			t.Errorf("seed %d: terrain heights %v, want %v", want.Seed, got, want.SmoothY)
		}
		if ll.windIdx-1 != want.WindIdx || ll.torqueIdx-1 != want.TorqueIdx {
			t.Errorf("seed %d: wind and torque phases %d, %d, want %d, %d",
				want.Seed, ll.windIdx-1, ll.torqueIdx-1, want.WindIdx, want.TorqueIdx)
		}
	}
}

// landerTerrain returns the heights of the terrain's points, left to
// right, from the edges of the static body (all but the floor).
func landerTerrain(ll *LunarLander) []float64 {
	var edges []*box2d.B2EdgeShape
	for b := ll.world.GetBodyList(); b != nil; b = b.GetNext() {
		if b.GetType() != box2d.B2BodyType.B2_staticBody {
			continue
		}
		for f := b.GetFixtureList(); f != nil; f = f.GetNext() {
			edge, ok := f.GetShape().(*box2d.B2EdgeShape)
			if ok && edge.M_vertex1.X != edge.M_vertex2.X-llViewportW/llScale {
				edges = append(edges, edge)
			}
		}
	}
	slices.SortFunc(edges, func(a, b *box2d.B2EdgeShape) int { return cmp.Compare(a.M_vertex1.X, b.M_vertex1.X) })
	var ys []float64
	for i, e := range edges {
		if i == 0 {
			ys = append(ys, e.M_vertex1.Y)
		}
		ys = append(ys, e.M_vertex2.Y)
	}
	return ys
}

// liveResets is the Python side of TestResetsMatchLiveGymnasium: it reads
// env ids and seeds as JSON from stdin and prints, per id and seed, the
// start of reset(seed=seed) and of three unseeded reset() calls after it.
const liveResets = `
import json, sys
import numpy as np
import gymnasium as gym
req = json.load(sys.stdin)
out = {}
for env_id in req["ids"]:
    env = gym.make(env_id)
    runs = []
    for seed in req["seeds"]:
        starts = []
        for k in range(4):
            obs, _ = env.reset(seed=seed if k == 0 else None)
            starts.append({"obs": [float(x) for x in np.asarray(obs, dtype=np.float64)],
                           "state": [float(x) for x in np.asarray(env.unwrapped.state, dtype=np.float64)]})
        runs.append(starts)
    out[env_id] = runs
json.dump(out, sys.stdout)
`

// TestResetsMatchLiveGymnasium draws fresh seeds on every run (logged, so a
// failure can be replayed), small and up to 2⁶³−1, and compares every
// classic-control env's starts with Gymnasium's own, bit for bit. It runs
// where a Python with Gymnasium is found (see internal/pytest).
func TestResetsMatchLiveGymnasium(t *testing.T) {
	python := pytest.Gymnasium(t)
	ids := []string{"CartPole-v1", "Acrobot-v1", "MountainCar-v0", "MountainCarContinuous-v0", "Pendulum-v1"}
	seeds := []int64{0, 1 << 32, math.MaxInt64}
	for range 20 {
		seeds = append(seeds, int64(rand.Uint32()), rand.Int64())
	}
	t.Logf("seeds %v", seeds)
	req, _ := json.Marshal(map[string]any{"ids": ids, "seeds": seeds})
	cmd := exec.Command(python, "-c", liveResets)
	cmd.Stdin = bytes.NewReader(req)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.Bytes())
	}
	var got map[string][][]gymStart
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		env, _ := Make(id, nil)
		inexact := 0
		for j, seed := range seeds {
			for k, want := range got[id][j] {
				s := NoSeed
				if k == 0 {
					s = seed
				}
				obs, _ := env.Reset(s)
				if msg := diffStart(env, obs, want); msg != "" {
					t.Errorf("%s seed %d, reset %d: %s", id, seed, k, msg)
				}
				for i, x := range obs {
					if float64(x) != want.Obs[i] {
						inexact++
						break
					}
				}
			}
		}
		if inexact > 0 {
			t.Logf("%s: %d of %d first observations one float32 ulp from NumPy's in a cosine or sine", id, inexact, 4*len(seeds))
		}
	}
}

// TestSubSeedRange: derived seeds lie in [0, 2³²), as NumPy's RandomState
// requires, and the seeds of 64 base seeds × 64 streams (including the
// extremes of the base seed) are all different, so no stream replays
// another, as seed+i would.
func TestSubSeedRange(t *testing.T) {
	seen := make(map[int64][2]int64)
	for s := range int64(64) {
		base := s
		if s == 63 {
			base = math.MaxInt64
		}
		for i := range 64 {
			sub := SubSeed(base, i)
			if sub < 0 || sub >= 1<<32 {
				t.Fatalf("SubSeed(%d, %d) = %d, outside [0, 2^32)", base, i, sub)
			}
			if prev, ok := seen[sub]; ok {
				t.Fatalf("SubSeed(%d, %d) = SubSeed(%d, %d) = %d", base, i, prev[0], prev[1], sub)
			}
			seen[sub] = [2]int64{base, int64(i)}
		}
	}
}

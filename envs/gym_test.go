package envs

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evolverl/evolve/internal/pytest"
)

// gymTestOptions points the bridge at the standard-library test envs in
// testdata/gymtest, or skips the test when there is no python3.
func gymTestOptions(t *testing.T, class string) Options {
	t.Helper()
	pytest.StdlibEnvs(t, "testdata/gymtest")
	return Options{"module_env": "gymtest:" + class, "timeout": 20}
}

func makeGym(t *testing.T, opts Options) (Env, *GymEnv) {
	t.Helper()
	env, err := Make("gym:test", opts)
	if err != nil {
		t.Fatal(err)
	}
	g := Unwrapped(env).(*GymEnv)
	t.Cleanup(func() { g.Close() })
	return env, g
}

func TestGymSpacesAndActionsRoundTrip(t *testing.T) {
	opts := gymTestOptions(t, "AllSpaces")
	opts["kwargs"] = map[string]any{"scale": 0.5}
	env, _ := makeGym(t, opts)
	box := Box{Dims: []int{2, 3},
		Low:  []float32{-1, float32(math.Inf(-1)), 0, -2, -2, -2},
		High: []float32{1, 5, float32(math.Inf(1)), 2, 2, 2}}
	wantObs, _ := NewDict([]string{"box", "d", "md", "mb"},
		[]Space{box, Discrete{N: 3, Start: 1}, MultiDiscrete{Nvec: []int{2, 3}}, MultiBinary{N: 2}})
	wantAct, _ := NewDict([]string{"d", "md", "mb", "box"},
		[]Space{Discrete{N: 3, Start: 1}, MultiDiscrete{Nvec: []int{2, 3}}, MultiBinary{N: 2}, NewBox(-1, 1, 2)})
	if got := env.ObservationSpace().String(); got != wantObs.String() {
		t.Errorf("observation space %s, want %s", got, wantObs)
	}
	if got := env.ActionSpace().String(); got != wantAct.String() {
		t.Errorf("action space %s, want %s", got, wantAct)
	}
	obs, _ := env.Reset(3)
	if len(obs) != 11 || !slices.Equal(obs[6:], []float32{1, 0, 0, 0, 0}) {
		t.Fatalf("reset obs %v", obs)
	}
	for _, v := range obs[:6] {
		if math.Abs(float64(v)) > 0.5 {
			t.Errorf("box value %v: kwargs scale 0.5 not applied", v)
		}
	}
	obs, r, term, trunc, _ := env.Step([]float32{2, 1, 2, 1, 0, 0.25, 0.5})
	if got := obs[6:]; !slices.Equal(got, []float32{2, 1, 2, 1, 0}) {
		t.Errorf("echoed action %v, want [2 1 2 1 0]", got)
	}
	if r != 0.75 || term || trunc {
		t.Errorf("reward %v, terminated %v, truncated %v; want 0.75, false, false", r, term, trunc)
	}
	if _, _, term, _, _ = env.Step([]float32{3, 0, 0, 0, 0, 0, 0}); !term {
		t.Error("action d = 3 should terminate")
	}
}

func TestGymSeedingIsDeterministic(t *testing.T) {
	run := func(seed int64) []float32 {
		env, _ := makeGym(t, gymTestOptions(t, "AllSpaces"))
		var all []float32
		obs, _ := env.Reset(seed)
		all = append(all, obs...)
		for range 3 {
			obs, _, _, _, _ = env.Step([]float32{1, 0, 0, 0, 0, 0, 0})
			all = append(all, obs...)
		}
		return all
	}
	a, b, c := run(7), run(7), run(8)
	if !slices.Equal(a, b) {
		t.Error("same seed gave different observations")
	}
	if slices.Equal(a, c) {
		t.Error("different seeds gave the same observations")
	}
}

func TestGymActionMaskAndVector(t *testing.T) {
	opts := gymTestOptions(t, "Masked")
	opts["max_episode_steps"] = 3
	v, err := MakeVector("gym:masked", 2, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	res, err := v.Reset(1)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if len(res.Infos[i].ActionMask) != 4 {
			t.Fatalf("env %d: mask %v, want 4 entries", i, res.Infos[i].ActionMask)
		}
	}
	for step := 1; step <= 3; step++ {
		actions := make([]float32, 2)
		for i := range 2 {
			actions[i] = float32(slices.Index(res.Infos[i].ActionMask, true))
		}
		if res, err = v.Step(actions); err != nil {
			t.Fatal(err)
		}
	}
	if !res.Done(0) || !res.Truncated[0] || res.EpisodeLengths[0] != 3 {
		t.Errorf("max_episode_steps 3: done %v truncated %v length %d", res.Done(0), res.Truncated[0], res.EpisodeLengths[0])
	}
}

func TestGymPythonExceptionIsAnError(t *testing.T) {
	env, g := makeGym(t, gymTestOptions(t, "Raises"))
	env.Reset(0)
	obs, _, _, _, _ := env.Step([]float32{0})
	err := g.Err()
	if obs != nil || err == nil {
		t.Fatalf("step gave obs %v, error %v; want nil and an error", obs, err)
	}
	if first, _, _ := strings.Cut(err.Error(), "\n"); !strings.HasSuffix(first, "python exception: ValueError: boom from gymtest") {
		t.Errorf("first line %q, want the exception's own line last on it", first)
	}
	for _, want := range []string{"gym:test", "step", "ValueError: boom from gymtest", `File "envs/gymbridge.py"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	// The child survives an exception.
	if obs, _ := env.Reset(0); obs == nil {
		t.Errorf("reset after an exception: %v", g.Err())
	}
}

// An env of the old Gym API (reset returning the observation alone, step
// four values) fails saying so, instead of with an unpacking error or a
// wrong observation size.
func TestGymOldAPIIsNamed(t *testing.T) {
	env, g := makeGym(t, gymTestOptions(t, "OldAPI"))
	if obs, _ := env.Reset(0); obs != nil || g.Err() == nil ||
		!strings.Contains(g.Err().Error(), "reset() returned a list, want (observation, info); an env of the old Gym API (gym < 0.26) returns the observation alone") {
		t.Errorf("old reset: obs %v, error %v", obs, g.Err())
	}
	env, g = makeGym(t, gymTestOptions(t, "OldStep"))
	env.Reset(0)
	if obs, _, _, _, _ := env.Step([]float32{0}); obs != nil || g.Err() == nil ||
		!strings.Contains(g.Err().Error(), "step() returned 4 values, want (observation, reward, terminated, truncated, info); an env of the old Gym API (gym < 0.26) returns four") {
		t.Errorf("old step: obs %v, error %v", obs, g.Err())
	}
}

func TestGymVectorReportsTheCause(t *testing.T) {
	v, err := MakeVector("gym:test", 1, gymTestOptions(t, "Raises"))
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if _, err := v.Reset(0); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Step([]float32{0}); err == nil || !strings.Contains(err.Error(), "boom from gymtest") {
		t.Errorf("vector step error %v, want the Python exception", err)
	}
}

func TestGymCrashAndHangAreErrors(t *testing.T) {
	for _, tc := range []struct {
		class, want string
	}{
		{"Crashes", "died (exit status 3)"},
		{"Hangs", "did not answer within 1s"},
	} {
		t.Run(tc.class, func(t *testing.T) {
			opts := gymTestOptions(t, tc.class)
			// Long enough for the reset before the hang on a loaded
			// machine (a 0.3 s timeout failed there), short for a test.
			opts["timeout"] = 1
			env, g := makeGym(t, opts)
			env.Reset(0)
			pid := g.pid()
			start := time.Now()
			env.Step([]float32{0})
			if err := g.Err(); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "gym:test") {
				t.Fatalf("error %v, want one naming gym:test and %q", err, tc.want)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("failure took %v", d)
			}
			if !processGone(pid) {
				t.Errorf("child %d still exists after the failure", pid)
			}
			// Later calls fail at once.
			if obs, _ := env.Reset(0); obs != nil || g.Err() == nil {
				t.Error("reset after the child is gone succeeded")
			}
		})
	}
}

func TestGymCloseReapsTheChild(t *testing.T) {
	opts := gymTestOptions(t, "Masked")
	opts["max_episode_steps"] = 10
	env, g := makeGym(t, opts)
	env.Reset(0)
	pid := g.pid()
	if processGone(pid) {
		t.Fatal("child not running before Close")
	}
	if err := env.(io.Closer).Close(); err != nil {
		t.Fatal(err)
	}
	if !processGone(pid) {
		t.Errorf("child %d still exists (or is a zombie) after Close", pid)
	}
	if err := g.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// processGone reports whether pid no longer exists, not even as a zombie.
func processGone(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return true
	}
	if errors.Is(p.Signal(syscall.Signal(0)), os.ErrProcessDone) {
		return true
	}
	_, err = os.Stat("/proc/" + strconv.Itoa(pid))
	return os.IsNotExist(err)
}

func TestGymMakeFailures(t *testing.T) {
	opts := gymTestOptions(t, "Masked")
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{"no interpreter", Options{"python": "no-such-python-3"}, "no-such-python-3"},
		{"no module", Options{"module_env": "no_such_module:Env"}, "No module named 'no_such_module' (interpreter python3, "},
		{"no class", Options{"module_env": "gymtest:NoSuchClass"}, "NoSuchClass"},
		{"constructor raises", Options{"module_env": "gymtest:FailsInit"}, "cannot build gymtest env"},
		{"unsupported space", Options{"module_env": "gymtest:BadSpace"}, "unsupported action space"},
		{"unknown option", Options{"module_env": "gymtest:Masked", "typo": 1}, "typo"},
		{"bad import", Options{"module_env": "gymtest:Masked", "import": []any{"no_such_plugin"}}, "no_such_plugin"},
		{"slow start", Options{"module_env": "gymtest:SlowInit", "start_timeout": 0.3}, "did not answer within 300ms"},
		{"bad start_timeout", Options{"module_env": "gymtest:Masked", "start_timeout": -1}, `"start_timeout" = -1`},
		{"import function missing", Options{"module_env": "gymtest:Masked", "import": []any{"gymtest:nothere"}},
			"option import[0] = 'gymtest:nothere': AttributeError"},
		{"import not a function", Options{"module_env": "gymtest:Masked", "import": []any{"gymtest", "gymtest:REGISTERED"}},
			"option import[1] = 'gymtest:REGISTERED': TypeError: gymtest.REGISTERED is a list, not a function"},
		{"import not called", Options{"module_env": "gymtest:NeedsRegister", "import": []any{"gymtest"}}, "call gymtest.register() first"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{"timeout": opts["timeout"]}
			for k, v := range tc.opts {
				o[k] = v
			}
			env, err := Make("gym:test", o)
			if err == nil {
				Close(env)
				t.Fatal("Make succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "gym:test") {
				t.Errorf("error %q, want one naming gym:test and %q", err, tc.want)
			}
		})
	}
}

// TestGymCartPoleMatchesBuiltIn runs Gymnasium's own CartPole-v1 through the
// bridge when a Python with Gymnasium and NumPy is found: seeded alike, the
// built-in port and the original give the same episodes, observation for
// observation, starting and after the automatic resets of a vector.
func TestGymCartPoleMatchesBuiltIn(t *testing.T) {
	python := pytest.Gymnasium(t)
	const n = 3
	bridged, err := MakeVector("gym:CartPole-v1", n, Options{"python": python})
	if err != nil {
		t.Fatal(err)
	}
	defer bridged.Close()
	builtIn, _ := MakeVector("CartPole-v1", n, nil)
	a, err := bridged.Reset(5)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := builtIn.Reset(5)
	actions := make([]float32, n)
	ends := 0
	for step := 0; step <= 600; step++ {
		for i := range n {
			if a.Terminated[i] || a.Truncated[i] {
				ends++
			}
		}
		if !slices.Equal(a.Obs, b.Obs) || !slices.Equal(a.Terminated, b.Terminated) || !slices.Equal(a.Truncated, b.Truncated) {
			t.Fatalf("step %d: bridged obs %v (terminated %v, truncated %v), built-in %v (%v, %v)",
				step, a.Obs, a.Terminated, a.Truncated, b.Obs, b.Terminated, b.Truncated)
		}
		for i := range actions {
			actions[i] = float32((step / (i + 1)) % 2)
		}
		if a, err = bridged.Step(actions); err != nil {
			t.Fatal(err)
		}
		b, _ = builtIn.Step(actions)
	}
	if ends < n {
		t.Errorf("%d episodes ended, want at least %d to test the resets", ends, n)
	}
	t.Logf("%d episodes ended and restarted alike", ends)
}

func TestGymRender(t *testing.T) {
	opts := gymTestOptions(t, "Paints")
	opts["kwargs"] = map[string]any{"render_mode": "rgb_array"}
	env, g := makeGym(t, opts)
	env.Reset(0)
	env.Step([]float32{0})
	img, ok := Render(env)
	if !ok {
		t.Fatalf("Render: %v", g.Err())
	}
	if b := img.Bounds(); b.Dx() != 3 || b.Dy() != 2 {
		t.Fatalf("frame of %v, want 3×2", b)
	}
	if r, gr, bl, _ := img.At(2, 1).RGBA(); r>>8 != 1 || gr>>8 != 12 || bl>>8 != 255 {
		t.Errorf("pixel (2, 1) = %d %d %d, want 1 12 255", r>>8, gr>>8, bl>>8)
	}

	// render_mode "rgb_array_list" renders the frames since the last call:
	// the newest is the frame.
	opts["kwargs"] = map[string]any{"render_mode": "rgb_array_list"}
	listed, g := makeGym(t, opts)
	listed.Reset(0)
	listed.Step([]float32{0})
	if img, ok := Render(listed); !ok {
		t.Errorf("Render with rgb_array_list: %v", g.Err())
	} else if r, gr, bl, _ := img.At(2, 1).RGBA(); r>>8 != 1 || gr>>8 != 12 || bl>>8 != 255 {
		t.Errorf("rgb_array_list: pixel (2, 1) = %d %d %d, want 1 12 255 (the newest frame's)", r>>8, gr>>8, bl>>8)
	}

	plain, g := makeGym(t, gymTestOptions(t, "Paints"))
	plain.Reset(0)
	if _, ok := Render(plain); ok || g.Err() == nil || !strings.Contains(g.Err().Error(), `render_mode = "rgb_array"`) {
		t.Errorf("an env that renders nothing: ok %v, error %v; want false and a hint", ok, g.Err())
	}
}

// An "import" entry "module:function" imports the module and calls the
// function, as MinAtar's envs need (minatar.gym:register_envs); malformed
// entries fail before Python starts, naming the option and the entry.
func TestGymImportCallsARegisterFunction(t *testing.T) {
	opts := gymTestOptions(t, "NeedsRegister")
	opts["import"] = []any{"gymtest:register"}
	env, _ := makeGym(t, opts)
	if obs, _ := env.Reset(0); len(obs) != 1 {
		t.Errorf("reset observation %v", obs)
	}
	for _, entry := range []string{"gymtest:", ":register", "gym test", "gymtest:register:again", "gymtest.", "gymtest:register()"} {
		_, err := Make("gym:test", Options{"module_env": "gymtest:NeedsRegister", "import": []any{"gymtest", entry}})
		want := fmt.Sprintf("option \"import\"[1] = %q: want \"package.module\", or \"package.module:function\"", entry)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("import entry %q: error %v, want %s", entry, err, want)
		}
	}
}

// Seeds of 2^32 and more are folded into 32 bits (GymSeed) before they
// reach the child, smaller ones pass as they are; a vector's SubSeeds too.
func TestGymSeedsFoldInto32Bits(t *testing.T) {
	env, g := makeGym(t, gymTestOptions(t, "SeedEcho"))
	for _, tc := range []struct{ seed, want int64 }{
		{0, 0}, {12345, 12345}, {1<<32 - 1, 1<<32 - 1},
		{1 << 32, 1}, {1<<40 + 7, 7 ^ 1<<8}, {math.MaxInt64, 1 << 31},
	} {
		if got := GymSeed(tc.seed); got != tc.want {
			t.Errorf("GymSeed(%d) = %d, want %d", tc.seed, got, tc.want)
		}
		obs, _ := env.Reset(tc.seed)
		if obs == nil {
			t.Fatalf("reset(%d): %v", tc.seed, g.Err())
		}
		if got := int64(obs[0])<<16 | int64(obs[1]); got != tc.want {
			t.Errorf("reset(%d): the env got seed %d, want %d", tc.seed, got, tc.want)
		}
	}
	v, err := MakeVector("gym:test", 3, gymTestOptions(t, "SeedEcho"))
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	res, err := v.Reset(1)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		got := int64(res.Obs[2*i])<<16 | int64(res.Obs[2*i+1])
		if want := GymSeed(SubSeed(1, i)); got != want {
			t.Errorf("vector env %d got seed %d, want GymSeed(SubSeed(1, %d)) = %d", i, got, i, want)
		}
	}
}

// An env that seeds NumPy's legacy RandomState (as MinAtar does) takes any
// seed: a large one plays as its folded form.
func TestGymSeedsReachLegacyRandomState(t *testing.T) {
	opts := gymTestOptions(t, "LegacyRandom")
	opts["python"] = pytest.NumPy(t)
	env, g := makeGym(t, opts)
	draw := func(seed int64) []float32 {
		obs, _ := env.Reset(seed)
		if obs == nil {
			t.Fatalf("reset(%d): %v", seed, g.Err())
		}
		return slices.Clone(obs)
	}
	big := int64(1<<40 + 7)
	first := draw(big)
	if again, folded := draw(big), draw(GymSeed(big)); !slices.Equal(first, again) || !slices.Equal(first, folded) {
		t.Errorf("seed %d drew %v, then %v; seed %d drew %v", big, first, again, GymSeed(big), folded)
	}
}

// Observations whose dtype is not their space's (bools in a uint8 Box, as
// MinAtar's Gymnasium class gives them) arrive as numbers.
func TestGymBoolObservationsInAUint8Box(t *testing.T) {
	check := func(t *testing.T, opts Options) {
		env, g := makeGym(t, opts)
		if got := env.ObservationSpace().String(); got != NewBox(0, 1, 2, 2).String() {
			t.Errorf("observation space %s, want Box(0, 1, [2 2])", got)
		}
		if obs, _ := env.Reset(0); !slices.Equal(obs, []float32{0, 0, 0, 1}) {
			t.Errorf("reset observation %v (%v), want [0 0 0 1]", obs, g.Err())
		}
		if obs, _, _, _, _ := env.Step([]float32{3}); !slices.Equal(obs, []float32{1, 1, 0, 1}) {
			t.Errorf("observation after action 3: %v (%v), want [1 1 0 1]", obs, g.Err())
		}
	}
	t.Run("python bools", func(t *testing.T) { check(t, gymTestOptions(t, "BoolObs")) })
	t.Run("numpy bools", func(t *testing.T) {
		opts := gymTestOptions(t, "BoolObs")
		opts["python"] = pytest.NumPy(t)
		check(t, opts)
	})
}

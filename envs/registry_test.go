package envs

import (
	"strings"
	"testing"
)

func TestMakeAppliesRegisteredTimeLimit(t *testing.T) {
	tests := []struct {
		id    string
		opts  Options
		limit int
	}{
		{"CartPole-v1", nil, 500},
		{"Acrobot-v1", nil, 500},
		{"MountainCar-v0", nil, 200},
		{"MountainCarContinuous-v0", nil, 999},
		{"Pendulum-v1", nil, 200},
		{"CartPoleNoVel-v1", nil, 500},
		{"PendulumNoVel-v1", nil, 200},
		{"Pendulum-v1", Options{"max_episode_steps": int64(50)}, 50},
		{"Pendulum-v1", Options{"max_episode_steps": 0}, 0},
		{"Probe1-v0", nil, 0},
	}
	for _, tt := range tests {
		env, err := Make(tt.id, tt.opts)
		if err != nil {
			t.Fatalf("%s: %v", tt.id, err)
		}
		tl, ok := env.(*TimeLimit)
		if tt.limit == 0 {
			if ok {
				t.Errorf("%s %v: wrapped in a %d-step limit, want none", tt.id, tt.opts, tl.Limit())
			}
			continue
		}
		if !ok || tl.Limit() != tt.limit {
			t.Errorf("%s %v: limit %v, want %d", tt.id, tt.opts, env, tt.limit)
		}
	}
}

func TestMakeRejectsBadInput(t *testing.T) {
	tests := []struct {
		id   string
		opts Options
		want string
	}{
		{"CartPole-v2", nil, `unknown env id "CartPole-v2"`},
		{"CartPole-v1", Options{"gravity": 3.0}, "unknown option(s) gravity"},
		{"Pendulum-v1", Options{"g": "strong"}, `option "g" = strong`},
		{"Pendulum-v1", Options{"max_episode_steps": -5}, "max_episode_steps"},
		{"Pendulum-v1", Options{"max_episode_steps": 2.5}, "want an integer"},
	}
	for _, tt := range tests {
		_, err := Make(tt.id, tt.opts)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.id) {
			t.Errorf("Make(%q, %v): error %v, want one naming the id and %q", tt.id, tt.opts, err, tt.want)
		}
	}
}

func TestMakePassesOptions(t *testing.T) {
	env, err := Make("Pendulum-v1", Options{"g": 9.81})
	if err != nil {
		t.Fatal(err)
	}
	if g := Unwrapped(env).(*Pendulum).g; g != 9.81 {
		t.Fatalf("g = %v, want 9.81", g)
	}
}

func TestRegisterUserEnv(t *testing.T) {
	id := "TestCounter-v0"
	err := Register(Spec{ID: id, MaxEpisodeSteps: 3, New: func(o Options) (Env, error) {
		n, err := o.Int("length", 10)
		if err != nil {
			return nil, err
		}
		return &countEnv{length: n}, o.Only("length")
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := Register(Spec{ID: id, New: func(Options) (Env, error) { return nil, nil }}); err == nil {
		t.Fatal("registering an id twice: no error")
	}
	// A "gym:" id would shadow the Python bridge's env of that name.
	if err := Register(Spec{ID: "gym:Mine-v0", New: func(Options) (Env, error) { return nil, nil }}); err == nil {
		t.Fatal(`registering a "gym:" id: no error`)
	}
	env, err := Make(id, Options{"length": int64(2)})
	if err != nil {
		t.Fatal(err)
	}
	env.Reset(0)
	if _, _, term, _, _ := env.Step([]float32{0}); term {
		t.Fatal("terminated after one step of two")
	}
	if _, _, term, _, _ := env.Step([]float32{0}); !term {
		t.Fatal("user option length = 2 not applied")
	}
	found := false
	for _, x := range IDs() {
		found = found || x == id
	}
	if !found {
		t.Fatalf("IDs() = %v, missing %s", IDs(), id)
	}
}

// TestMakeSaysWhatWasMeant: a mistyped id or option gets a did-you-mean,
// the case-insensitive match first, and the options allowed include the
// time limit Make applies itself.
func TestMakeSaysWhatWasMeant(t *testing.T) {
	for _, c := range []struct {
		id   string
		opts Options
		want []string
	}{
		{"Cartpole-v1", nil, []string{`did you mean "CartPole-v1"?`}},
		{"Acrobat-v1", nil, []string{`did you mean "Acrobot-v1"?`}},
		{"NoSuchThing-v0", nil, []string{"registered: ", "CartPole-v1", "gym:<id>"}},
		{"CartPole-v1", Options{"max_episode_step": 10}, []string{"allowed: max_episode_steps", "max_episode_step: did you mean max_episode_steps?"}},
		{"MinAtar/Breakout-v0", Options{"sticky_actions_prob": 0.1}, []string{"sticky_action_prob", "max_episode_steps", "did you mean sticky_action_prob?"}},
	} {
		_, err := Make(c.id, c.opts)
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("Make(%q, %v): %v; want it to say %q", c.id, c.opts, err, w)
			}
		}
	}
}

// TestMakeRefusesAConstructorWithoutAnEnv: a registered constructor that
// returns no env (nil, or a nil pointer) and no error is an error naming
// the id, not a nil-pointer panic inside Make or a run.
func TestMakeRefusesAConstructorWithoutAnEnv(t *testing.T) {
	for id, ctor := range map[string]func(Options) (Env, error){
		"TestNilEnv-v0":        func(Options) (Env, error) { return nil, nil },
		"TestNilPointerEnv-v0": func(Options) (Env, error) { var e *countEnv; return e, nil },
	} {
		if err := Register(Spec{ID: id, New: ctor}); err != nil {
			t.Fatal(err)
		}
		if _, err := Make(id, nil); err == nil || !strings.Contains(err.Error(), id) || !strings.Contains(err.Error(), "no env") {
			t.Errorf("Make(%s): %v; want an error naming the id", id, err)
		}
	}
}

// TestOptionsText: a string option, its default, and a value outside the
// allowed ones or of another type refused naming what is wanted (an env
// with a string option wrote its own type assertion and message).
func TestOptionsText(t *testing.T) {
	o := Options{"mode": "hard", "n": int64(3)}
	if v, err := o.Text("mode", "easy", "easy", "hard"); err != nil || v != "hard" {
		t.Errorf("Text(mode) = %q, %v", v, err)
	}
	if v, err := o.Text("missing", "easy"); err != nil || v != "easy" {
		t.Errorf("Text(missing) = %q, %v: want the default", v, err)
	}
	if _, err := o.Text("mode", "easy", "easy", "medium"); err == nil || !strings.Contains(err.Error(), `want one of "easy", "medium"`) {
		t.Errorf("Text(mode) outside the allowed: %v", err)
	}
	if _, err := o.Text("n", ""); err == nil || !strings.Contains(err.Error(), "want a string") {
		t.Errorf("Text(n) of an integer: %v", err)
	}
}

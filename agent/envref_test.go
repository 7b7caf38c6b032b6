package agent

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evolverl/evolve/envs"
)

// TestAgentFileRecordsItsEnv: an agent that knows its env saves it (file
// version 2) and loads it back, options included, ready for envs.Make; one
// that does not writes version 1, as earlier builds did; clones keep it.
func TestAgentFileRecordsItsEnv(t *testing.T) {
	ta := testAgents(t, tinyNet)[0] // CartPole-v1's spaces
	a := ta.build(t, 3)

	_, meta, err := decodeSafetensors(saveBytes(t, a))
	if err != nil {
		t.Fatal(err)
	}
	if meta["version"] != "1" || strings.Contains(meta["agent"], `"env"`) {
		t.Errorf("an agent without an env wrote version %q, description %.80s…; want version 1 without env", meta["version"], meta["agent"])
	}

	// Options as TOML decodes them: int64, float64, bool, string, list.
	a.Env = EnvRef{ID: "CartPole-v1", Options: envs.Options{"max_episode_steps": int64(200), "x": 0.5, "y": true,
		"z": "s", "w": []any{"a", int64(2)}}}
	file := saveBytes(t, a)
	_, meta, err = decodeSafetensors(file)
	if err != nil {
		t.Fatal(err)
	}
	if meta["version"] != "2" {
		t.Errorf("an agent with an env wrote version %q, want 2", meta["version"])
	}
	b, err := Decode(file)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(b.Env)
	want, _ := json.Marshal(a.Env)
	if !bytes.Equal(got, want) {
		t.Errorf("loaded env %s, want %s", got, want)
	}
	if n, err := b.Env.Options.Int("max_episode_steps", 0); err != nil || n != 200 {
		t.Errorf("max_episode_steps after loading: %d, %v", n, err)
	}
	b.Env.Options = envs.Options{"max_episode_steps": b.Env.Options["max_episode_steps"]}
	env, err := b.Env.Make()
	if err != nil {
		t.Fatalf("making the recorded env: %v", err)
	}
	envs.Close(env)

	c := a.Clone(9)
	c.Env.Options["x"] = 1.5
	if c.Env.ID != a.Env.ID || a.Env.Options["x"] != 0.5 {
		t.Errorf("clone's env %+v (original's options %v): want a copy", c.Env, a.Env.Options)
	}

	// What a file cannot hold is refused when saving.
	a.Env.Options = envs.Options{"f": func() {}}
	if err := a.Save(filepath.Join(t.TempDir(), "a.safetensors")); err == nil || !strings.Contains(err.Error(), "CartPole-v1") {
		t.Errorf("Save with an option JSON cannot hold: %v", err)
	}
	if _, err := (EnvRef{}).Make(); err == nil {
		t.Error("Make of an unknown env succeeded")
	}
}

// TestLoadRejectsEnvAgainstVersion: a version-1 file with an env and a
// version-2 file without one are damaged.
func TestLoadRejectsEnvAgainstVersion(t *testing.T) {
	a := testAgents(t, tinyNet)[0].build(t, 4)
	v1 := saveBytes(t, a)
	a.Env = EnvRef{ID: "CartPole-v1"}
	v2 := saveBytes(t, a)
	for _, tc := range []struct {
		name string
		file []byte
		want string
	}{
		{"env in version 1", rewrite(t, v1, func(_ *[]namedTensor, _ map[string]string, d *agentJSON) {
			d.Env = &EnvRef{ID: "CartPole-v1"}
		}), "env in a version 1 file"},
		{"version 2 without env", rewrite(t, v2, func(_ *[]namedTensor, _ map[string]string, d *agentJSON) { d.Env = nil }), "without an env id"},
		{"version 2 with an empty id", rewrite(t, v2, func(_ *[]namedTensor, _ map[string]string, d *agentJSON) {
			d.Env = &EnvRef{}
		}), "without an env id"},
	} {
		if _, err := Decode(tc.file); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
}

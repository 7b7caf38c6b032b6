// The agent files in testdata/compat were written by the code of commit
// 0eeb408, the last one before the networks moved from gorgonia graphs (CNN,
// LSTM and Dict) and the MLP fast path to the plain-Go backend of package nn.
// A throwaway program in a worktree of that commit
// (git worktree add /tmp/old-evolve 0eeb408) did, for each file:
//
//	agent.New(vec.ObservationSpace(), vec.ActionSpace(), cfg, 100+i)  i = 0..4 in the order below
//	a.Train(ctx, vec, n)        vec: 4 envs; n = 3072 env steps (6144 for Catch)
//	a.Save(file); b := agent.Load(file)
//
// with cfg = DefaultConfig() changed to learn_step 512, batch_size 64,
// lr 1e-3, latent size 8 and head [16], and
//
//	mlp-cartpole             CartPole-v1       mlp [16]
//	cnn-catch                Catch-v0          cnn channels [8] kernels [3] strides [1] (8: netconf's minimum)
//	lstm-cartpolenovel       CartPoleNoVel-v1  lstm hidden 16 (netconf's minimum), max_seq_len 8, separate encoders
//	dict-xor                 xorEnv            net.inputs pos: mlp [16], img: cnn [8] k[3] s[1]; shared encoders
//	                                           (xorEnv as in dict_test.go; no Dict env is registered)
//	gaussian-pendulum        Pendulum-v1       mlp [16], normalize_obs, action_std_init −0.5
//
// It then recorded in expected.json, per file, b's spaces (String), its
// Config (JSON), Steps and Updates, six observations and b's deterministic
// actions on them, one row per Act call. For the LSTM agent the six are
// consecutive observations of one episode from Reset(13), each fed to b in
// turn (its state carried, never reset) and the env stepped with b's action.
// For the others observation k (k = 0..5) comes from a fresh env reset with
// seed s+k (s = 11, 12, 14, 15 in the order above) and stepped k times with
// the deterministic actions of a second copy of the file, so that the
// observations vary. The program is deterministic: run again at 0eeb408 it
// rewrites every file byte for byte.

package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/evolverl/evolve/envs"
	_ "github.com/evolverl/evolve/nn/gorgonia" // the reference backend
)

// compatCase is one entry of testdata/compat/expected.json.
type compatCase struct {
	File             string          `json:"file"`
	Env              string          `json:"env"` // an envs id, or "xorEnv" (dict_test.go)
	Recurrent        bool            `json:"recurrent"`
	ObservationSpace string          `json:"observation_space"`
	ActionSpace      string          `json:"action_space"`
	Config           json.RawMessage `json:"config"`
	Steps            int             `json:"steps"`
	Updates          int             `json:"updates"`
	Observations     [][]float32     `json:"observations"`
	Actions          [][]float32     `json:"actions"`
}

// TestFilesFromBeforeTheNNBackendStillLoad: agent files written before the
// plain-Go backend load with their spaces, config and counters, act exactly
// as they did then (Gaussian means within 1e-4: the backends round
// differently) on both backends, one row or all rows at a time, re-save to
// the same tensors and metadata, and keep training from their saved
// optimizer state.
func TestFilesFromBeforeTheNNBackendStillLoad(t *testing.T) {
	dir := filepath.Join("testdata", "compat")
	raw, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp struct {
		Commit string       `json:"commit"`
		Note   string       `json:"note"`
		Cases  []compatCase `json:"cases"`
	}
	if err := json.Unmarshal(raw, &exp); err != nil {
		t.Fatal(err)
	}
	if len(exp.Cases) != 5 {
		t.Fatalf("expected.json lists %d files, want 5", len(exp.Cases))
	}
	for _, c := range exp.Cases {
		t.Run(c.File, func(t *testing.T) {
			path := filepath.Join(dir, c.File)
			a, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := a.ObservationSpace().String(); got != c.ObservationSpace {
				t.Errorf("observation space %s, saved %s", got, c.ObservationSpace)
			}
			if got := a.ActionSpace().String(); got != c.ActionSpace {
				t.Errorf("action space %s, saved %s", got, c.ActionSpace)
			}
			cfg, err := json.Marshal(a.Config())
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			if err := json.Compact(&want, c.Config); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(cfg, want.Bytes()) {
				t.Errorf("config\n%s\nsaved as\n%s", cfg, want.Bytes())
			}
			if err := a.Config().Validate(); err != nil {
				t.Errorf("loaded config: %v", err)
			}
			if a.recurrent() != c.Recurrent {
				t.Errorf("recurrent %v, saved %v", a.recurrent(), c.Recurrent)
			}
			if a.Steps != c.Steps || a.Updates != c.Updates || c.Updates == 0 || a.adam.Step == 0 {
				t.Errorf("steps %d, updates %d, adam step %d: saved %d steps and %d updates (both > 0)",
					a.Steps, a.Updates, a.adam.Step, c.Steps, c.Updates)
			}

			for _, backend := range []string{"go", "gorgonia"} {
				b, err := Load(path)
				if err != nil {
					t.Fatal(err)
				}
				b.cfg.Backend = backend // before the first Act builds the networks
				replayCompat(t, b, c, backend)
			}

			// Load then Save writes the same tensors and metadata.
			resaved := filepath.Join(t.TempDir(), "resaved.safetensors")
			if err := a.Save(resaved); err != nil {
				t.Fatal(err)
			}
			sameFileContents(t, path, resaved)

			// The loaded optimizer state and networks keep learning.
			before := slices.Clone(a.actor[0].Data)
			steps, updates, adamStep := a.Steps, a.Updates, a.adam.Step
			ts, err := a.Train(context.Background(), compatVector(t, c.Env), 256)
			if err != nil {
				t.Fatalf("train: %v", err)
			}
			if a.Steps != steps+ts.Steps || ts.Steps < 256 || a.Updates <= updates || a.adam.Step <= adamStep {
				t.Errorf("after training %d steps: steps %d -> %d, updates %d -> %d, adam step %d -> %d",
					ts.Steps, steps, a.Steps, updates, a.Updates, adamStep, a.adam.Step)
			}
			if slices.Equal(before, a.actor[0].Data) {
				t.Errorf("actor.%s unchanged by training", a.actor[0].Name)
			}
			if err := a.CheckFinite(); err != nil {
				t.Errorf("after training: %v", err)
			}

			// The trained agent saves and loads bit for bit.
			b, trained := saveLoad(t, a)
			again := filepath.Join(t.TempDir(), "again.safetensors")
			if err := b.Save(again); err != nil {
				t.Fatal(err)
			}
			sameFileContents(t, trained, again)
			names, mine, loaded := a.tensorNames(), a.tensors(), b.tensors()
			for i := range mine {
				if !sameBits(mine[i], loaded[i]) {
					t.Errorf("%s differs after save and load", names[i])
				}
				if !sameBits(a.adam.M[i], b.adam.M[i]) || !sameBits(a.adam.V[i], b.adam.V[i]) {
					t.Errorf("Adam moments of %s differ after save and load", names[i])
				}
			}
		})
	}
}

// replayCompat feeds c's observations to a one row per call, in order and
// without resetting a recurrent state, then (for recurrent agents from a
// zero state again) two rows per call, and compares the actions with c's.
func replayCompat(t *testing.T, a *PPO, c compatCase, backend string) {
	t.Helper()
	for k, obs := range c.Observations {
		got, err := a.Act(obs, nil, true)
		if err != nil {
			t.Fatalf("%s backend: act on observation %d: %v", backend, k, err)
		}
		checkCompatAction(t, a, got, c.Actions[k], fmt.Sprintf("%s backend, one row: observation %d", backend, k))
	}
	if c.Recurrent {
		a.ResetState(-1)
		for k, obs := range c.Observations {
			got, err := a.Act(slices.Concat(obs, obs), nil, true)
			if err != nil {
				t.Fatalf("%s backend: act on two rows of observation %d: %v", backend, k, err)
			}
			n := len(got) / 2
			checkCompatAction(t, a, got[:n], c.Actions[k], fmt.Sprintf("%s backend, row 0 of 2: observation %d", backend, k))
			checkCompatAction(t, a, got[n:], c.Actions[k], fmt.Sprintf("%s backend, row 1 of 2: observation %d", backend, k))
		}
		return
	}
	got, err := a.Act(slices.Concat(c.Observations...), nil, true)
	if err != nil {
		t.Fatalf("%s backend: act on all rows: %v", backend, err)
	}
	n := len(got) / len(c.Observations)
	for k := range c.Observations {
		checkCompatAction(t, a, got[k*n:(k+1)*n], c.Actions[k], fmt.Sprintf("%s backend, all rows: observation %d", backend, k))
	}
}

// checkCompatAction requires discrete actions to be equal and Box actions
// to be within 1e-4.
func checkCompatAction(t *testing.T, a *PPO, got, want []float32, what string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: action %v, want %v", what, got, want)
		return
	}
	_, box := a.ActionSpace().(envs.Box)
	for i := range got {
		if box && math.Abs(float64(got[i])-float64(want[i])) <= 1e-4 || !box && got[i] == want[i] {
			continue
		}
		t.Errorf("%s: action %v, want %v", what, got, want)
		return
	}
}

// sameFileContents requires two agent files to hold the same tensors, in
// the same order with the same shapes and bits, and the same metadata.
func sameFileContents(t *testing.T, path1, path2 string) {
	t.Helper()
	read := func(path string) ([]namedTensor, map[string]string) {
		file, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		tensors, meta, err := decodeSafetensors(file)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return tensors, meta
	}
	t1, m1 := read(path1)
	t2, m2 := read(path2)
	if len(t1) != len(t2) {
		t.Fatalf("%s holds %d tensors, %s %d", path1, len(t1), path2, len(t2))
	}
	for i := range t1 {
		if t1[i].Name != t2[i].Name || !slices.Equal(t1[i].Shape, t2[i].Shape) || !sameBits(t1[i].Data, t2[i].Data) {
			t.Errorf("tensor %d: %s %v in %s, %s %v in %s (or different values)",
				i, t1[i].Name, t1[i].Shape, path1, t2[i].Name, t2[i].Shape, path2)
		}
	}
	for k, v := range m1 {
		if m2[k] != v {
			t.Errorf("metadata %q:\n%s\nin %s, but\n%s\nin %s", k, v, path1, m2[k], path2)
		}
	}
	for k := range m2 {
		if _, ok := m1[k]; !ok {
			t.Errorf("metadata %q in %s only", k, path2)
		}
	}
}

// compatVector returns a fresh vector of 4 envs of c.Env.
func compatVector(t *testing.T, id string) *envs.Vector {
	t.Helper()
	if id == "xorEnv" {
		return xorVector(t, 4)
	}
	vec, err := envs.MakeVector(id, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	return vec
}

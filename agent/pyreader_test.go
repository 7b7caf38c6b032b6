package agent

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/netconf"
)

// torchPython returns a Python interpreter that imports torch and numpy, or
// "" when there is none.
func torchPython() string {
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		if err := exec.Command(py, "-c", "import torch, numpy").Run(); err == nil {
			return py
		}
	}
	return ""
}

// TestPyReaderMatchesGo saves small trained agents and checks that
// python/evolve_agent.py, which rebuilds the networks in PyTorch from the
// file alone (see docs/agent-file.md), computes the same actor outputs and
// values as the Go agent for the same raw observations, carrying the LSTM
// state step by step.
func TestPyReaderMatchesGo(t *testing.T) {
	py := torchPython()
	if py == "" {
		t.Skip("no Python with torch and numpy (tried python3 and /usr/bin/python3): the Python reader is not checked")
	}
	_, self, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(self), "..", "python", "evolve_agent.py")

	vec := func(id string) func(t *testing.T) *envs.Vector {
		return func(t *testing.T) *envs.Vector {
			v, err := envs.MakeVector(id, 4, nil)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	cases := []struct {
		name  string
		vec   func(t *testing.T) *envs.Vector
		cfg   func() Config
		steps int // time steps fed one by one (state carried)
	}{
		{"mlp-normalize-ln", vec("CartPole-v1"), func() Config {
			c := probeConfig(netconf.EncoderMLP)
			c.NormalizeObs = true
			c.Net.MLP.LayerNorm, c.Net.MLP.Activation = true, netconf.GELU
			c.Net.Head.Activation = netconf.ELU
			return c
		}, 1},
		{"mlp-shared-leaky-softsign", vec("CartPole-v1"), func() Config {
			c := probeConfig(netconf.EncoderMLP)
			c.ShareEncoders = true
			c.Net.MLP.Activation, c.Net.Head.Activation = netconf.LeakyReLU, netconf.Softsign
			return c
		}, 1},
		{"gaussian-tanh-sigmoid", vec("Pendulum-v1"), func() Config {
			c := probeConfig(netconf.EncoderMLP)
			c.Net.MLP.Activation, c.Net.Head.Activation = netconf.Tanh, netconf.Sigmoid
			return c
		}, 1},
		{"gaussian-sde-normalised-values-rewards", vec("Pendulum-v1"), func() Config {
			c := probeConfig(netconf.EncoderMLP)
			c.UseSDE, c.SDESampleFreq, c.NormalizeValue, c.NormalizeReward, c.ValueLoss = true, 4, true, true, ValueLossMSE
			return c
		}, 1},
		{"cnn-catch", vec("Catch-v0"), func() Config {
			c := probeConfig(netconf.EncoderCNN)
			c.Net.CNN.Channels, c.Net.CNN.Kernels, c.Net.CNN.Strides = []int{8, 8}, []int{3, 2}, []int{1, 1}
			return c
		}, 1},
		{"lstm-novel", vec("CartPoleNoVel-v1"), func() Config {
			c := probeConfig(netconf.EncoderLSTM)
			c.Net.LSTM.Hidden = 16
			return c
		}, 6},
		{"lstm-2layers-shared", vec("CartPoleNoVel-v1"), func() Config {
			c := probeConfig(netconf.EncoderLSTM)
			c.Net.LSTM.Hidden, c.Net.LSTM.Layers = 16, 2
			c.ShareEncoders = true
			return c
		}, 6},
		{"gru-novel", vec("CartPoleNoVel-v1"), func() Config {
			c := probeConfig(netconf.EncoderGRU)
			c.Net.GRU.Hidden = 16
			return c
		}, 6},
		{"gru-2layers-shared", vec("CartPoleNoVel-v1"), func() Config {
			c := probeConfig(netconf.EncoderGRU)
			c.Net.GRU.Hidden, c.Net.GRU.Layers = 16, 2
			c.ShareEncoders = true
			return c
		}, 6},
		{"dict", func(t *testing.T) *envs.Vector { return xorVector(t, 4) }, xorConfig, 1},
		{"transformer-novel", vec("CartPoleNoVel-v1"), func() Config {
			c := probeConfig(netconf.EncoderTransformer)
			c.Net.Transformer.Layers, c.Net.Transformer.Context = 2, 4
			return c
		}, 6},
		{"one-hot-discrete-gru", vec("popgym-RepeatPreviousEasy-v0"), func() Config {
			c := probeConfig(netconf.EncoderGRU)
			c.Net.GRU.Hidden = 16
			return c
		}, 6},
		{"one-hot-multidiscrete", vec("popgym-CountRecallEasy-v0"), func() Config { return probeConfig(netconf.EncoderMLP) }, 1},
	}
	const rows = 3
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := c.vec(t)
			cfg := c.cfg()
			cfg.LearnStep, cfg.BatchSize = 128, 32
			if cfg.MaxSeqLen > 8 {
				cfg.MaxSeqLen = 8
			}
			a, err := New(v.ObservationSpace(), v.ActionSpace(), cfg, 7)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.Train(context.Background(), v, 384); err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			path := filepath.Join(dir, "agent.safetensors")
			if err := a.Save(path); err != nil {
				t.Fatal(err)
			}

			// Observations: sampled from the space (bounds clamped for the
			// unbounded dims), steps × rows.
			size := a.obsSpace.FlatSize()
			rng := rand.New(rand.NewPCG(3, 4))
			batches := make([][][]float32, c.steps)
			for s := range batches {
				batches[s] = make([][]float32, rows)
				for r := range batches[s] {
					row := make([]float32, size)
					a.obsSpace.Sample(rng, row)
					for i := range row {
						row[i] = max(-5, min(5, row[i]))
					}
					batches[s][r] = row
				}
			}

			// Go: preprocess and the internal forward, state carried.
			n, err := a.nets()
			if err != nil {
				t.Fatal(err)
			}
			state := make([]float32, rows*a.stateSize())
			var goOut, goVal [][]float32
			for _, b := range batches {
				raw := make([]float32, 0, rows*size)
				for _, r := range b {
					raw = append(raw, r...)
				}
				x := make([]float32, a.inLen(raw))
				a.preprocess(x, raw, false)
				out, val, err := a.forward(n, x, rows, 1, state, true)
				if err != nil {
					t.Fatal(err)
				}
				goOut = append(goOut, append([]float32(nil), out...))
				val = append([]float32(nil), val...)
				if a.valNorm != nil {
					a.destandardize(val) // the reader gives values in return units
				}
				goVal = append(goVal, val)
			}

			// Python.
			req, _ := json.Marshal(map[string]any{"steps": batches})
			obsPath := filepath.Join(dir, "obs.json")
			if err := os.WriteFile(obsPath, req, 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(py, script, path, obsPath)
			cmd.Stderr = os.Stderr
			stdout, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s %s: %v", py, script, err)
			}
			var res struct {
				Outputs   [][][]float64 `json:"outputs"`
				Values    [][]float64   `json:"values"`
				StateSize int           `json:"state_size"`
			}
			if err := json.Unmarshal(stdout, &res); err != nil {
				t.Fatalf("python output: %v\n%s", err, stdout)
			}
			if res.StateSize != a.stateSize() {
				t.Errorf("python state size %d, Go %d", res.StateSize, a.stateSize())
			}
			if len(res.Outputs) != c.steps || len(res.Values) != c.steps {
				t.Fatalf("python returned %d/%d steps, want %d", len(res.Outputs), len(res.Values), c.steps)
			}
			var pyOut, pyVal []float32
			var wantOut, wantVal []float32
			for s := range c.steps {
				for r := range rows {
					for _, x := range res.Outputs[s][r] {
						pyOut = append(pyOut, float32(x))
					}
					pyVal = append(pyVal, float32(res.Values[s][r]))
				}
				wantOut = append(wantOut, goOut[s]...)
				wantVal = append(wantVal, goVal[s]...)
			}
			if len(pyOut) != len(wantOut) {
				t.Fatalf("python gave %d output values, Go %d", len(pyOut), len(wantOut))
			}
			eo, ev := relErr32(pyOut, wantOut, 1e-3), relErr32(pyVal, wantVal, 1e-3)
			t.Logf("max error relative to max|Go|: actor output %.2e, value %.2e", eo, ev)
			if eo > 1e-5 || ev > 1e-5 || math.IsNaN(eo) || math.IsNaN(ev) {
				t.Errorf("python and Go differ: actor output %.3g, value %.3g (want <= 1e-5)\ngo out %v\npy out %v\ngo val %v\npy val %v",
					eo, ev, wantOut, pyOut, wantVal, pyVal)
			}
		})
	}
}

// TestPyReaderNamesADamagedFile: the Python reader refuses an empty, a
// truncated and a non-agent file with a message naming the file and what is
// wrong, not a bare struct or JSON error.
func TestPyReaderNamesADamagedFile(t *testing.T) {
	py, pydir := readerPython(t)
	a, err := New(envs.Box{Low: []float32{-1, -1}, High: []float32{1, 1}, Dims: []int{2}}, envs.Discrete{N: 2}, probeConfig(netconf.EncoderMLP), 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	good, b := savedFile(t, a, dir)
	hlen := int(b[0]) | int(b[1])<<8 | int(b[2])<<16
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "too short for a safetensors header"},
		{"header cut", b[:8+hlen/2], "truncated, or not an agent file"},
		{"tensors cut", b[:len(b)-10], "truncated: the header describes"},
		{"not an agent file", []byte("generation,agent,parent\n1,0,-1\n"), "truncated, or not an agent file"},
		{"another program's safetensors", safetensorsBytes(`{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, 4), "not an evolve agent file"},
		{"a list header", safetensorsBytes(`[1,2]`, 0), "not an object"},
	}
	args := []string{"-c", "import sys; sys.path.insert(0, sys.argv[1]); import evolve_agent as e\n" +
		"for p in sys.argv[2:]:\n" +
		"    try:\n        e.read_safetensors(p); print('read', p)\n" +
		"    except ValueError as err:\n        print(str(err).replace('\\n', ' '))\n", pydir}
	for _, tc := range cases {
		path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".safetensors")
		if err := os.WriteFile(path, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, path)
	}
	out, err := exec.Command(py, args...).CombinedOutput()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err != nil || len(lines) != len(cases) {
		t.Fatalf("%v: %d lines for %d files:\n%s", err, len(lines), len(cases), out)
	}
	for i, tc := range cases {
		if msg := lines[i]; !strings.HasPrefix(msg, args[3+i]+": ") || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %q; want %q after the path", tc.name, msg, tc.want)
		}
	}

	// Observations of another width (a CartPole observation for an agent of
	// two inputs) are refused, not read as several rows.
	script := "import sys; sys.path.insert(0, sys.argv[1]); import evolve_agent as e\n" +
		"a = e.load(sys.argv[2])\n" +
		"print(a.forward([[0.1, 0.2]])[0].shape[0], a.forward([0.1, 0.2])[0].shape[0])\n" +
		"try:\n    a.forward([[0.1, 0.2, 0.3, 0.4]]); print('read')\nexcept ValueError as err:\n    print(err)\n"
	out, err = exec.Command(py, "-c", script, pydir, good).CombinedOutput()
	if got := strings.TrimSpace(string(out)); err != nil || !strings.HasPrefix(got, "1 1\nobservations of shape [1, 4]: want [rows, 2]") {
		t.Errorf("%v: %q; want one row for [[x, y]] and [x, y], and [[a, b, c, d]] refused", err, got)
	}

	// What Go's Act refuses, the reader refuses: a NaN observation (it
	// gave NaN values and action 0), masks of another shape (broadcast)
	// and a mask with no legal choice (action 0).
	script = "import sys; sys.path.insert(0, sys.argv[1]); import evolve_agent as e\n" +
		"a = e.load(sys.argv[2])\n" +
		"out = a.forward([[0.1, 0.2]])[0]\n" +
		"for f in (lambda: a.forward([[float('nan'), 0.0]]), lambda: a.actions(out, [[True]]), lambda: a.actions(out, [[False, False]])):\n" +
		"    try:\n        f(); print('accepted')\n    except ValueError as err:\n        print(err)\n"
	out, err = exec.Command(py, "-c", script, pydir, good).CombinedOutput()
	got := strings.Split(strings.TrimSpace(string(out)), "\n")
	want := []string{"observation value 0 of row 0 is nan", "action masks of shape [1, 1]: want [1, 2]", "row 0: action mask leaves component 0 no legal choice"}
	if err != nil || len(got) != len(want) {
		t.Fatalf("%v: %q; want the lines %q", err, out, want)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("line %d: %q, want %q", i+1, got[i], want[i])
		}
	}
}

// TestPyReaderRefusesAnEditedTransformerHeader: the header is outside the
// checksum, so a hand-edited one can describe a Transformer its tensors do
// not hold; the reader refuses it with a ValueError naming the file (it gave
// a traceback, or with layers = 0 computed another network).
func TestPyReaderRefusesAnEditedTransformerHeader(t *testing.T) {
	py, pydir := readerPython(t)
	cfg := DefaultConfig()
	cfg.Net = smallNet(netconf.EncoderTransformer)
	cfg.Net.Transformer.Context = 4
	a, err := New(envs.NewBox(-1, 1, 2), envs.Discrete{N: 2}, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	good, b := savedFile(t, a, dir)
	hlen := int(binary.LittleEndian.Uint64(b))
	args := []string{"-c", "import sys; sys.path.insert(0, sys.argv[1]); import evolve_agent as e\n" +
		"for p in sys.argv[2:]:\n" +
		"    try:\n        e.load(p); print('loaded')\n" +
		"    except ValueError as err:\n        print(str(err).replace('\\n', ' '))\n", pydir}
	edits := []struct {
		key string
		v   int
	}{{"layers", 0}, {"heads", 0}, {"context", 6}, {"layers", 2}}
	for i, e := range edits {
		var header map[string]any
		if err := json.Unmarshal(b[8:8+hlen], &header); err != nil {
			t.Fatal(err)
		}
		meta := header["__metadata__"].(map[string]any)
		var ag map[string]any
		if err := json.Unmarshal([]byte(meta["agent"].(string)), &ag); err != nil {
			t.Fatal(err)
		}
		ag["actor"].(map[string]any)["transformer"].(map[string]any)[e.key] = e.v
		text, _ := json.Marshal(ag)
		meta["agent"] = string(text)
		h, _ := json.Marshal(header)
		out := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
		out = append(append(out, h...), b[8+hlen:]...)
		path := filepath.Join(dir, fmt.Sprintf("edit-%d.safetensors", i))
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, path)
	}
	out, err := exec.Command(py, append(args, good)...).CombinedOutput()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err != nil || len(lines) != len(edits)+1 {
		t.Fatalf("%v: %d lines for %d files:\n%s", err, len(lines), len(edits)+1, out)
	}
	for i, e := range edits {
		if !strings.HasPrefix(lines[i], args[3+i]+": ") || !strings.Contains(lines[i], "does not") {
			t.Errorf("transformer %s = %d: %q; want a refusal naming the file", e.key, e.v, lines[i])
		}
	}
	if lines[len(edits)] != "loaded" {
		t.Errorf("the unedited file: %q", lines[len(edits)])
	}
}

// TestPyReaderCommandRefusesBadSteps: the command's bad observations and a
// diverged agent's non-finite outputs are errors naming the step, exit 2
// (a traceback, exit 1, and action 0 with NaN values before).
func TestPyReaderCommandRefusesBadSteps(t *testing.T) {
	py, pydir := readerPython(t)
	a, err := New(envs.NewBox(-1, 1, 2), envs.Discrete{N: 2}, probeConfig(netconf.EncoderMLP), 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	good, _ := savedFile(t, a, dir)
	a.actor.Tensor("out.weight").Data[1] = float32(math.NaN())
	diverged := filepath.Join(dir, "diverged.safetensors")
	if err := a.Save(diverged); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, agent, steps, want string
	}{
		{"three values a row", good, `{"steps": [[[0.1, 0.2]], [[0.1, 0.2, 0.3]]]}`, "step 1: observations of shape [1, 3]"},
		{"NaN", good, `{"steps": [[[NaN, 0.2]]]}`, "step 0: observation value 0 of row 0 is nan"},
		{"diverged", diverged, `{"steps": [[[0.1, 0.2]]]}`, "step 0: the network's outputs are not finite: its weights are not"},
	} {
		obs := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".json")
		if err := os.WriteFile(obs, []byte(tc.steps), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(py, filepath.Join(pydir, "evolve_agent.py"), tc.agent, obs).CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.HasPrefix(string(out), "evolve_agent: "+obs+": "+tc.want) {
			t.Errorf("%s: %v: %q; want exit 2 and %q", tc.name, err, out, tc.want)
		}
	}
}

// readerPython returns a Python with torch and numpy and the directory of
// python/evolve_agent.py, and skips the test where there is no such Python.
func readerPython(t *testing.T) (py, pydir string) {
	t.Helper()
	if py = torchPython(); py == "" {
		t.Skip("no Python with torch and numpy (tried python3 and /usr/bin/python3): the Python reader is not checked")
	}
	_, self, _, _ := runtime.Caller(0)
	return py, filepath.Join(filepath.Dir(self), "..", "python")
}

// savedFile saves a as dir/good.safetensors and returns the path and the
// file's bytes.
func savedFile(t *testing.T, a *PPO, dir string) (string, []byte) {
	t.Helper()
	good := filepath.Join(dir, "good.safetensors")
	if err := a.Save(good); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	return good, b
}

// safetensorsBytes is a safetensors file of the JSON header and n zero
// bytes of tensor data.
func safetensorsBytes(header string, n int) []byte {
	b := make([]byte, 8, 8+len(header)+n)
	binary.LittleEndian.PutUint64(b, uint64(len(header)))
	return append(append(b, header...), make([]byte, n)...)
}

// TestPyReaderCommandTakesMasks: the reader's command takes each step's
// action masks ("masks") and picks legal actions as Act does with them;
// masks of the wrong shape, leaving no legal action, or given for a Box
// agent are errors naming the step (exit 2).
func TestPyReaderCommandTakesMasks(t *testing.T) {
	py, pydir := readerPython(t)
	a, err := New(envs.NewBox(-1, 1, 2), envs.Discrete{N: 3}, probeConfig(netconf.EncoderMLP), 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file, _ := savedFile(t, a, dir)
	obs := []float32{0.1, -0.4, -0.7, 0.9}
	masks := [][]bool{{false, true, true}, {true, false, false}}
	want, err := a.Act(obs, masks, true)
	if err != nil {
		t.Fatal(err)
	}
	free, err := a.Act(obs, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	steps := `"steps": [[[0.1, -0.4], [-0.7, 0.9]]]`
	run := func(name, req string) (string, error) {
		path := filepath.Join(dir, name+".json")
		if err := os.WriteFile(path, []byte("{"+req+"}"), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(py, filepath.Join(pydir, "evolve_agent.py"), file, path).Output()
		if exit := (*exec.ExitError)(nil); errors.As(err, &exit) {
			return string(exit.Stderr), err
		}
		return string(out), err
	}
	out, err := run("masked", steps+`, "masks": [[[false, true, true], [true, false, false]]]`)
	if err != nil {
		t.Fatalf("masked: %v: %s", err, out)
	}
	var res struct{ Actions [][][]float64 }
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	got := []float32{float32(res.Actions[0][0][0]), float32(res.Actions[0][1][0])}
	if !slices.Equal(got, want) || got[1] != 0 || got[0] == 0 {
		t.Errorf("python's masked actions %v, Go's %v (unmasked %v): want Go's, legal", got, want, free)
	}
	for _, tc := range []struct{ name, req, want string }{
		{"short", steps + `, "masks": [[[true, true], [true, true]]]`, "step 0: action masks of shape [2, 2]"},
		{"dead", steps + `, "masks": [[[false, false, false], [true, true, true]]]`, "step 0: row 0: action mask leaves component 0 no legal choice"},
		{"numbers", steps + `, "masks": [[[0.5, 1, 1], [1, 1, 1]]]`, "step 0: action masks: want rows of true/false"},
		{"steps", steps + `, "masks": []`, `"masks" must be a list of one batch of mask rows per step`},
	} {
		out, err := run(tc.name, tc.req)
		if exit := (*exec.ExitError)(nil); !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(out, tc.want) {
			t.Errorf("%s: %v: %q; want exit 2 and %q", tc.name, err, out, tc.want)
		}
	}
	box, err := New(envs.NewBox(-1, 1, 2), envs.NewBox(-1, 1, 1), probeConfig(netconf.EncoderMLP), 1)
	if err != nil {
		t.Fatal(err)
	}
	file, _ = savedFile(t, box, t.TempDir())
	if out, err := run("box", steps+`, "masks": [[[true], [true]]]`); err == nil || !strings.Contains(out, "action masks given for a box action space") {
		t.Errorf("masks for a Box agent: %v: %q", err, out)
	}
}

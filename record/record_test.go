package record

import (
	"archive/zip"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/evolverl/evolve/envs"
)

var (
	testObs = envs.NewBox(-1, 1, 3)
	testAct = envs.Discrete{N: 2}
)

// writeTrajectory records steps steps of a made-up episode to a file.
func writeTrajectory(t *testing.T, steps int) (string, []Step) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "traj.npz")
	w, err := Create(path, testObs, testAct)
	if err != nil {
		t.Fatal(err)
	}
	var want []Step
	for i := range steps {
		s := Step{Obs: []float32{float32(i), -0.5, 0.25}, Action: []float32{float32(i % 2)},
			Reward: 1 + float64(i)/3, Terminated: i == steps-1, Truncated: i == 1, EpisodeStart: i == 0 || i == 2,
			Value: float32(i) / 7, LogProb: -float32(i) / 9}
		if err := w.Add(s); err != nil {
			t.Fatal(err)
		}
		want = append(want, s)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path, want
}

func TestRoundTrip(t *testing.T) {
	path, steps := writeTrajectory(t, 5)
	tr, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Len() != len(steps) {
		t.Fatalf("%d steps, want %d", tr.Len(), len(steps))
	}
	for i, s := range steps {
		got := Step{Obs: tr.Observations[i], Action: tr.Actions[i], Reward: tr.Rewards[i],
			Terminated: tr.Terminated[i], Truncated: tr.Truncated[i], EpisodeStart: tr.EpisodeStarts[i],
			Value: tr.Values[i], LogProb: tr.LogProbs[i]}
		if !reflect.DeepEqual(got, s) {
			t.Errorf("step %d: %+v, want %+v", i, got, s)
		}
	}
	if !reflect.DeepEqual(tr.ObservationSpace, testObs) || !reflect.DeepEqual(tr.ActionSpace, testAct) {
		t.Errorf("spaces %v, %v, want %v, %v", tr.ObservationSpace, tr.ActionSpace, testObs, testAct)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("files beside the trajectory: %v", entries)
	}
}

func TestEmptyTrajectoryRoundTrips(t *testing.T) {
	path, _ := writeTrajectory(t, 0)
	tr, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Len() != 0 || len(tr.Observations) != 0 {
		t.Errorf("%d steps in an empty trajectory", tr.Len())
	}
}

func TestWriterRejectsBadStepsAndSpaces(t *testing.T) {
	dir := t.TempDir()
	if _, err := Create(filepath.Join(dir, "a.npz"), nil, testAct); err == nil || !strings.Contains(err.Error(), "no observation space") {
		t.Errorf("nil space: %v", err)
	}
	if _, err := Create(filepath.Join(dir, "a.npz"), testObs, envs.Discrete{N: 0}); err == nil || !strings.Contains(err.Error(), "action space") {
		t.Errorf("invalid space: %v", err)
	}
	if _, err := Create(filepath.Join(dir, "missing", "a.npz"), testObs, testAct); err == nil {
		t.Error("a file in a missing directory was accepted")
	}
	w, err := Create(filepath.Join(dir, "a.npz"), testObs, testAct)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add(Step{Obs: make([]float32, 2), Action: []float32{0}}); err == nil || !strings.Contains(err.Error(), "step 0: 2 observation values, want 3") {
		t.Errorf("short observation: %v", err)
	}
	if err := w.Add(Step{Obs: make([]float32, 3), Action: []float32{0, 1}}); err == nil || !strings.Contains(err.Error(), "2 action values, want 1") {
		t.Errorf("long action: %v", err)
	}
	if err := w.Add(Step{Obs: make([]float32, 3), Action: []float32{7}}); err == nil || !strings.Contains(err.Error(), "not in") {
		t.Errorf("a choice outside the action space: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Add(Step{Obs: make([]float32, 3), Action: []float32{0}}); err == nil {
		t.Error("add after close accepted")
	}
}

// entry is one array of a hand-made .npz.
type entry struct {
	name, descr string
	shape       []int
	data        []byte
}

// goodEntries are the arrays of a valid two-step trajectory.
func goodEntries() []entry {
	return []entry{
		{"observations", dtypeF32, []int{2, 3}, encodeF32(make([]float32, 6))},
		{"actions", dtypeF32, []int{2, 1}, encodeF32([]float32{0, 1})},
		{"rewards", dtypeF64, []int{2}, encodeF64([]float64{1, 1})},
		{"terminated", dtypeBool, []int{2}, []byte{0, 1}},
		{"truncated", dtypeBool, []int{2}, []byte{0, 0}},
		{"episode_starts", dtypeBool, []int{2}, []byte{1, 0}},
		{"values", dtypeF32, []int{2}, encodeF32([]float32{0.5, 0.25})},
		{"log_probs", dtypeF32, []int{2}, encodeF32([]float32{-1, -2})},
	}
}

// writeNPZ writes entries and the spaces' JSON as spaces.npy (none when
// spaces is ""), or with legacy as a raw spaces.json entry.
func writeNPZ(t *testing.T, entries []entry, spaces string, legacy ...bool) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bad.npz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	z := zip.NewWriter(f)
	for _, e := range entries {
		w, _ := z.Create(e.name + ".npy")
		if err := writeNPY(w, e.descr, e.shape, e.data); err != nil {
			t.Fatal(err)
		}
	}
	switch {
	case spaces != "" && len(legacy) > 0 && legacy[0]:
		w, _ := z.Create("spaces.json")
		w.Write([]byte(spaces))
	case spaces != "":
		w, _ := z.Create("spaces.npy")
		if err := writeNPY(w, dtypeU8, []int{len(spaces)}, []byte(spaces)); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return path
}

func TestReadRejectsBadFiles(t *testing.T) {
	spaces, err := marshalSpaces(testObs, testAct)
	if err != nil {
		t.Fatal(err)
	}
	with := func(i int, e entry) []entry {
		es := goodEntries()
		if e.name == "" {
			return append(es[:i], es[i+1:]...)
		}
		es[i] = e
		return es
	}
	if _, err := Read(writeNPZ(t, goodEntries(), string(spaces))); err != nil {
		t.Fatalf("the valid file: %v", err)
	}
	if _, err := Read(writeNPZ(t, goodEntries(), string(spaces), true)); err != nil {
		t.Fatalf("a file of an earlier build (raw spaces.json): %v", err)
	}
	good, _ := writeTrajectory(t, 4)
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(t.TempDir(), "truncated.npz")
	os.WriteFile(truncated, data[:len(data)/2], 0o644)
	for _, tc := range []struct {
		name, path, want string
	}{
		{"truncated zip", truncated, "not a .npz (zip) file"},
		{"not there", filepath.Join(t.TempDir(), "none.npz"), "no such file"},
		{"rewards as float32", writeNPZ(t, with(2, entry{"rewards", dtypeF32, []int{2}, encodeF32([]float32{1, 1})}), string(spaces)),
			`rewards.npy: dtype "<f4", want "<f8"`},
		{"bool as int8", writeNPZ(t, with(3, entry{"terminated", "|i1", []int{2}, []byte{0, 1}}), string(spaces)),
			`terminated.npy: dtype "|i1", want "|b1"`},
		{"big-endian floats", writeNPZ(t, with(0, entry{"observations", ">f4", []int{2, 3}, make([]byte, 24)}), string(spaces)),
			`observations.npy: dtype ">f4"`},
		{"observation width", writeNPZ(t, with(0, entry{"observations", dtypeF32, []int{3, 2}, make([]byte, 24)}), string(spaces)),
			"observations.npy: shape [3 2], want [N 3]"},
		{"action rows", writeNPZ(t, with(1, entry{"actions", dtypeF32, []int{3, 1}, make([]byte, 12)}), string(spaces)),
			"actions.npy: shape [3 1], want [2 1]"},
		{"values rows", writeNPZ(t, with(6, entry{"values", dtypeF32, []int{1}, make([]byte, 4)}), string(spaces)),
			"values.npy: shape [1], want [2]"},
		{"values 2-D", writeNPZ(t, with(6, entry{"values", dtypeF32, []int{2, 1}, make([]byte, 8)}), string(spaces)),
			"values.npy: shape [2 1], want [2]"},
		{"short data", writeNPZ(t, with(7, entry{"log_probs", dtypeF32, []int{2}, make([]byte, 5)}), string(spaces)),
			"log_probs.npy: shape [2] of <f4 needs 8 bytes of values, the entry holds 5"},
		{"bool byte", writeNPZ(t, with(4, entry{"truncated", dtypeBool, []int{2}, []byte{0, 2}}), string(spaces)),
			"truncated.npy: value 1 is byte 2"},
		{"missing entry", writeNPZ(t, with(5, entry{}), string(spaces)), "no entry episode_starts.npy"},
		{"no spaces", writeNPZ(t, goodEntries(), ""), "no entry spaces.npy"},
		{"bad spaces", writeNPZ(t, goodEntries(), `{"observation": {"type": "box"}, "action": {"type": "discrete", "n": 2}}`),
			"spaces: observation space"},
		{"bad legacy spaces", writeNPZ(t, goodEntries(), `{"observation": {"type": "box"}, "action": {"type": "discrete", "n": 2}}`, true),
			"spaces: observation space"},
		{"spaces not bytes", writeNPZ(t, append(goodEntries(), entry{"spaces", dtypeF32, []int{1}, make([]byte, 4)}), ""),
			`spaces.npy: dtype "<f4" shape [1], want a 1-D "|u1" array`},
		{"half spaces", writeNPZ(t, goodEntries(), `{"observation": {"type": "discrete", "n": 2}}`), `want both "observation" and "action"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(tc.path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
			if err != nil && !strings.Contains(err.Error(), tc.path) {
				t.Errorf("error %v does not name the file", err)
			}
		})
	}
}

func TestNPYHeaderIsNumpys(t *testing.T) {
	var b strings.Builder
	if err := writeNPY(&b, dtypeF32, []int{5, 3}, make([]byte, 60)); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if !strings.HasPrefix(s, "\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (5, 3), }") {
		t.Errorf("header %q", s[:64])
	}
	if (len(s)-60)%64 != 0 || s[len(s)-61] != '\n' {
		t.Errorf("header of %d bytes, not a multiple of 64 ending in a newline", len(s)-60)
	}
	b.Reset()
	writeNPY(&b, dtypeBool, []int{7}, make([]byte, 7))
	if !strings.Contains(b.String(), "'shape': (7,), }") {
		t.Errorf("1-D header %q", b.String())
	}
	for _, h := range []string{
		"{'descr': '<f4', 'fortran_order': False, 'shape': (5, 3), }",
		`{"shape": (5,3), "fortran_order": False, "descr": "<f4"}`,
	} {
		if _, err := parseHeader(h); err != nil {
			t.Errorf("%s: %v", h, err)
		}
	}
	for _, h := range []string{
		"{'descr': '<f4', 'fortran_order': True, 'shape': (5, 3), }",
		"{'descr': '<f4', 'shape': (5, 3), }",
		"{'descr': '<f4', 'fortran_order': False, 'shape': (5, -3), }",
		"{'descr': '<f4', 'fortran_order': False, 'shape': (5, 3), 'x': 1}",
		"['descr']",
	} {
		if _, err := parseHeader(h); err == nil {
			t.Errorf("%s accepted", h)
		}
	}
}

// TestNumpyLoadsTheFile runs numpy.load on a written trajectory, when a
// Python with NumPy is installed.
func TestNumpyLoadsTheFile(t *testing.T) {
	python := numpyPython(t, "a trajectory")
	path, _ := writeTrajectory(t, 5)
	script := `
import json, sys
import numpy as np
z = np.load(sys.argv[1])
checks = [
    ("observations", (5, 3), "float32"), ("actions", (5, 1), "float32"), ("rewards", (5,), "float64"),
    ("terminated", (5,), "bool"), ("truncated", (5,), "bool"), ("episode_starts", (5,), "bool"),
    ("values", (5,), "float32"), ("log_probs", (5,), "float32"),
]
for name, shape, dtype in checks:
    a = z[name]
    assert a.shape == shape and a.dtype == np.dtype(dtype), (name, a.shape, a.dtype)
assert z["observations"][3].tolist() == [3.0, -0.5, 0.25], z["observations"][3]
assert z["actions"][:, 0].tolist() == [0, 1, 0, 1, 0]
assert z["rewards"][3] == 2.0 and z["rewards"][1] == 1 + 1/3, z["rewards"]
assert z["terminated"].tolist() == [False, False, False, False, True]
assert z["episode_starts"].tolist() == [True, False, True, False, False]
assert z["values"][0] == 0 and z["values"][2] == np.float32(2/7)
spaces = json.loads(z["spaces"].tobytes())
shapes = {k: z[k].shape for k in z}  # every entry loads as an array
assert shapes["spaces"] == (len(z["spaces"]),), shapes
assert spaces["action"] == {"type": "discrete", "n": 2}, spaces
assert spaces["observation"]["shape"] == [3], spaces
print("ok")
`
	out, err := exec.Command(python, "-c", script, path).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("numpy.load: %v\n%s", err, out)
	}
}

// numpyPython returns a Python with NumPy, or skips the test saying that
// numpy.load of what was untested.
func numpyPython(t *testing.T, what string) string {
	t.Helper()
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(p, "-c", "import numpy").Run() == nil {
			return p
		}
	}
	t.Skipf("no python3 with numpy (tried python3 and /usr/bin/python3): numpy.load of %s untested", what)
	return ""
}

// TestActionMasksRoundTrip: a recording of a masked env keeps each step's
// mask (a step without one legal everywhere), NumPy reads it as a bool
// array, a file without masks has none, and bad masks are refused.
func TestActionMasksRoundTrip(t *testing.T) {
	act := envs.MultiDiscrete{Nvec: []int{2, 3}}
	path := filepath.Join(t.TempDir(), "masked.npz")
	w, err := Create(path, testObs, act)
	if err != nil {
		t.Fatal(err)
	}
	masks := [][]bool{{true, false, false, true, true}, nil, {false, true, true, false, false}}
	for i, m := range masks {
		if err := w.Add(Step{Obs: []float32{0, 0, 0}, Action: []float32{float32(i % 2), 1}, ActionMask: m}); err != nil {
			t.Fatal(err)
		}
	}
	for _, bad := range []struct {
		mask []bool
		want string
	}{{[]bool{true, true}, "an action mask of 2 entries, want 5"}} {
		if err := w.Add(Step{Obs: []float32{0, 0, 0}, Action: []float32{0, 0}, ActionMask: bad.mask}); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("mask %v: %v, want %q", bad.mask, err, bad.want)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tr, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]bool{masks[0], {true, true, true, true, true}, masks[2]}
	if !reflect.DeepEqual(tr.ActionMasks, want) {
		t.Errorf("masks %v, want %v", tr.ActionMasks, want)
	}
	if python := numpyPython(t, "action masks"); python != "" {
		script := "import sys, numpy as np\nm = np.load(sys.argv[1])['action_masks']\nassert m.dtype == bool and m.shape == (3, 5), (m.dtype, m.shape)\nprint(m.astype(int).tolist())\n"
		out, err := exec.Command(python, "-c", script, path).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "[[1, 0, 0, 1, 1], [1, 1, 1, 1, 1], [0, 1, 1, 0, 0]]" {
			t.Errorf("numpy: %v\n%s", err, out)
		}
	}

	plain, _ := writeTrajectory(t, 2)
	if tr, err := Read(plain); err != nil || tr.ActionMasks != nil {
		t.Errorf("a recording without masks: %v, masks %v", err, tr.ActionMasks)
	}
	box, err := Create(filepath.Join(t.TempDir(), "box.npz"), testObs, envs.NewBox(-1, 1, 1))
	if err != nil {
		t.Fatal(err)
	}
	if err := box.Add(Step{Obs: []float32{0, 0, 0}, Action: []float32{0}, ActionMask: []bool{true}}); err == nil || !strings.Contains(err.Error(), "takes none") {
		t.Errorf("a mask for a Box action: %v", err)
	}
}

package record

import (
	"archive/zip"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// writeDataset writes a made-up dataset of 4 steps from two agents.
func writeDataset(t *testing.T) (string, []Source) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "data.npz")
	w, err := CreateDataset(path, testObs, testAct, map[string]any{"method": "greedy"})
	if err != nil {
		t.Fatal(err)
	}
	src := []Source{
		{Agent: 3, Generation: 0, Episode: 0, Fitness: math.NaN(), BehaviorLogProb: 0},
		{Agent: 3, Generation: 0, Episode: 0, Fitness: math.NaN(), BehaviorLogProb: -0.5},
		{Agent: 12, Generation: 7, Episode: 1, Fitness: 481.5, BehaviorLogProb: float32(math.NaN())},
		{Agent: 12, Generation: 7, Episode: 1, Fitness: 481.5, BehaviorLogProb: -1.25},
	}
	for i := range src {
		s := Step{Obs: []float32{float32(i), 0, 0}, Action: []float32{1}, Reward: 1, EpisodeStart: i%2 == 0,
			Terminated: i%2 == 1, Source: &src[i]}
		if err := w.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path, src
}

func sameSource(a, b Source) bool {
	eq := func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) }
	return a.Agent == b.Agent && a.Generation == b.Generation && a.Episode == b.Episode &&
		eq(a.Fitness, b.Fitness) && eq(float64(a.BehaviorLogProb), float64(b.BehaviorLogProb))
}

func TestDatasetRoundTrips(t *testing.T) {
	path, want := writeDataset(t)
	tr, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Sources) != len(want) || string(tr.Dataset) != `{"method":"greedy"}` {
		t.Fatalf("sources %+v, dataset %s", tr.Sources, tr.Dataset)
	}
	for i := range want {
		if !sameSource(tr.Sources[i], want[i]) {
			t.Errorf("source %d: %+v, want %+v", i, tr.Sources[i], want[i])
		}
	}
	// A recording has none.
	rec, _ := writeTrajectory(t, 3)
	if tr, err := Read(rec); err != nil || tr.Sources != nil || tr.Dataset != nil {
		t.Errorf("a recording read with sources %v, dataset %s (%v)", tr.Sources, tr.Dataset, err)
	}
}

func TestDatasetStepsNeedTheirSource(t *testing.T) {
	dir := t.TempDir()
	d, err := CreateDataset(filepath.Join(dir, "d.npz"), testObs, testAct, nil)
	if err != nil {
		t.Fatal(err)
	}
	step := Step{Obs: make([]float32, 3), Action: []float32{0}}
	if err := d.Add(step); err == nil || !strings.Contains(err.Error(), "need their Source") {
		t.Errorf("a dataset's step without a source: %v", err)
	}
	r, err := Create(filepath.Join(dir, "r.npz"), testObs, testAct)
	if err != nil {
		t.Fatal(err)
	}
	step.Source = &Source{}
	if err := r.Add(step); err == nil || !strings.Contains(err.Error(), "CreateDataset") {
		t.Errorf("a recording's step with a source: %v", err)
	}
}

// TestReadRejectsBadDatasets alters one entry of a dataset at a time.
func TestReadRejectsBadDatasets(t *testing.T) {
	path, _ := writeDataset(t)
	for _, tc := range []struct {
		entry string
		data  func() []byte
		want  string
	}{
		{"agent.npy", nil, "no entry agent.npy"},
		{"fitness.npy", func() []byte { return npy(t, dtypeF32, []int{4}, make([]byte, 16)) }, `fitness.npy: dtype "<f4", want "<f8"`},
		{"episode.npy", func() []byte { return npy(t, dtypeI64, []int{3}, make([]byte, 24)) }, "episode.npy: shape [3], want [4]"},
		{"generation.npy", func() []byte { return npy(t, dtypeI64, []int{4}, encodeI64([]int64{0, 0, -1, 0})) }, "generation.npy: value 2 is -1"},
		{"dataset.npy", func() []byte { return npy(t, dtypeU8, []int{3}, []byte("{x}")) }, "dataset.npy: not JSON"},
	} {
		bad := filepath.Join(t.TempDir(), "bad.npz")
		rewriteEntry(t, path, bad, tc.entry, tc.data)
		if _, err := Read(bad); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s altered: %v, want %q", tc.entry, err, tc.want)
		}
	}
}

// npy returns an .npy file of the given values.
func npy(t *testing.T, descr string, shape []int, data []byte) []byte {
	var b strings.Builder
	if err := writeNPY(&b, descr, shape, data); err != nil {
		t.Fatal(err)
	}
	return []byte(b.String())
}

// rewriteEntry copies the .npz src to dst with entry replaced by data()
// (dropped when data is nil).
func rewriteEntry(t *testing.T, src, dst, entry string, data func() []byte) {
	t.Helper()
	z, err := zip.OpenReader(src)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	f, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := zip.NewWriter(f)
	for _, e := range z.File {
		var b []byte
		if e.Name == entry {
			if data == nil {
				continue
			}
			b = data()
		} else {
			r, err := e.Open()
			if err != nil {
				t.Fatal(err)
			}
			b, _ = io.ReadAll(r)
			r.Close()
		}
		out, err := w.Create(e.Name)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(b)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestNumpyLoadsADataset runs numpy.load on a dataset, when a Python with
// NumPy is installed.
func TestNumpyLoadsADataset(t *testing.T) {
	python := numpyPython(t, "a dataset")
	path, _ := writeDataset(t)
	script := `
import json, sys
import numpy as np
z = np.load(sys.argv[1])
assert z["agent"].dtype == np.int64 and z["agent"].tolist() == [3, 3, 12, 12], z["agent"]
assert z["generation"].tolist() == [0, 0, 7, 7] and z["episode"].tolist() == [0, 0, 1, 1]
assert np.isnan(z["fitness"][0]) and z["fitness"][2] == 481.5 and z["fitness"].dtype == np.float64
b = z["behavior_log_probs"]
assert b.dtype == np.float32 and b[1] == -0.5 and np.isnan(b[2]), b
assert json.loads(z["dataset"].tobytes()) == {"method": "greedy"}
print("ok")
`
	out, err := exec.Command(python, "-c", script, path).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("numpy.load: %v\n%s", err, out)
	}
}

// Package runtest holds what the tests of several packages need to train
// and compare small runs: a tiny config, the comparison of two runs' files
// and a reader of their TensorBoard event files (events.go). Only tests
// import it.
package runtest

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TinyConfig is a run of a few seconds: 3 CartPole agents of a small
// network training 256 steps per generation.
const TinyConfig = `
seed = 7
out_dir = "unused"

[env]
id = "CartPole-v1"
num_envs = 2
eval_episodes = 2

[population]
size = 3
max_steps = 3072
evo_steps = 256
workers = 1

[ppo]
learn_step = 128
batch_size = 64
update_epochs = 2

[net]
encoder = "mlp"
[net.mlp]
hidden = [16]
[net.latent]
size = 8
[net.head]
hidden = [16]

[mutation]
no_mutation = 0.2
architecture = 0.2
parameters = 0.2
activation = 0.2
rl_hp = 0.2
`

// Metrics returns the rows of dir/metrics.csv without the wall_s column,
// the one that differs between runs with the same results.
func Metrics(t testing.TB, dir string) [][]string {
	t.Helper()
	rows, err := csv.NewReader(bytes.NewReader(ReadFile(t, filepath.Join(dir, "metrics.csv")))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := slices.Index(rows[0], "wall_s")
	for i := range rows {
		rows[i] = slices.Delete(rows[i], col, col+1)
	}
	return rows
}

// SameMetrics fails unless a and b hold the same rows.
func SameMetrics(t testing.TB, a, b [][]string) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("metrics have %d and %d rows", len(a), len(b))
	}
	for i := range a {
		if !slices.Equal(a[i], b[i]) {
			t.Fatalf("metrics row %d differs:\n%v\n%v", i, a[i], b[i])
		}
	}
}

// SameRun fails unless the runs in dirs a and b wrote the same metrics
// (but for wall_s) and the same elite file, byte for byte.
func SameRun(t testing.TB, a, b string) {
	t.Helper()
	ma := Metrics(t, a)
	if len(ma) < 2 {
		t.Fatalf("%s/metrics.csv has no rows", a)
	}
	SameMetrics(t, ma, Metrics(t, b))
	if !bytes.Equal(ReadFile(t, filepath.Join(a, "elite.safetensors")), ReadFile(t, filepath.Join(b, "elite.safetensors"))) {
		t.Fatalf("elite files of %s and %s differ", a, b)
	}
}

// ReadFile returns the file's bytes or fails the test.
func ReadFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// CSV reads the CSV file at path and returns its rows as maps from the
// header's names, and the header.
func CSV(t testing.TB, path string) ([]map[string]string, []string) {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(ReadFile(t, path))).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("%s: %v (%d records)", path, err, len(recs))
	}
	rows := make([]map[string]string, 0, len(recs)-1)
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = r[i]
		}
		rows = append(rows, m)
	}
	return rows, recs[0]
}

// WriteFile writes text to dir/name and returns the path, failing the test
// on an error.
func WriteFile(t testing.TB, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

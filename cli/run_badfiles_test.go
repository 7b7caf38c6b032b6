package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/evolverl/evolve/agent"
)

func TestUnwritableOutExitsTwoBeforeWritingAnything(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(file, []byte("not a directory\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "tiny.toml")
	if err := os.WriteFile(config, []byte(fmt.Sprintf(tinyConfig, filepath.Join(dir, "run"), 2*256)), 0o644); err != nil {
		t.Fatal(err)
	}
	underFile := filepath.Join(dir, "under-file.toml")
	if err := os.WriteFile(underFile, []byte(fmt.Sprintf(tinyConfig, filepath.Join(file, "run"), 2*256)), 0o644); err != nil {
		t.Fatal(err)
	}
	readOnly := filepath.Join(dir, "read-only")
	if err := os.Mkdir(readOnly, 0o555); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want []string
		skip string
	}{
		{"-out a plain file", []string{"-config", config, "-out", file}, []string{"-out " + file, file + " is a file, not a directory"}, ""},
		{"-out under a plain file", []string{"-config", config, "-out", filepath.Join(file, "a", "run")},
			[]string{"-out " + filepath.Join(file, "a", "run"), file + " is a file, not a directory"}, ""},
		{"out_dir under a plain file", []string{"-config", underFile},
			[]string{"config " + underFile, fmt.Sprintf("out_dir = %q", filepath.Join(file, "run")), file + " is a file"}, ""},
		// /proc refuses new entries even to root, whom permission bits
		// do not stop.
		{"-out in /proc", []string{"-config", config, "-out", "/proc/evolve-test-run/a"},
			[]string{"-out /proc/evolve-test-run/a", "cannot create a directory in /proc"}, func() string {
				if fi, err := os.Stat("/proc"); err != nil || !fi.IsDir() {
					return "no /proc"
				}
				return ""
			}()},
		{"-out in a read-only directory", []string{"-config", config, "-out", filepath.Join(readOnly, "run")},
			[]string{"cannot create a directory in " + readOnly, "permission denied"}, func() string {
				if os.Geteuid() == 0 {
					return "root writes into read-only directories"
				}
				return ""
			}()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.skip != "" {
				t.Skip(tc.skip)
			}
			before := snapshot(t, dir)
			code, stdout, stderr := evolve(context.Background(), tc.args...)
			exitsTwoSaying(t, code, stderr, tc.want...)
			if strings.Contains(stderr, "training") || stdout != "" {
				t.Errorf("the run started; stdout:\n%s\nstderr:\n%s", stdout, stderr)
			}
			sameSnapshot(t, "the test's directory", before, snapshot(t, dir))
			if _, err := os.Stat("/proc/evolve-test-run"); err == nil {
				t.Error("/proc/evolve-test-run exists")
			}
		})
	}
}

func TestTamperedCheckpointExitsTwoAndChangesNothing(t *testing.T) {
	base := stoppedRun(t, 3)
	other := stoppedRun(t, 4)
	const ckptRel = "checkpoints/gen-000001"
	agents, _ := filepath.Glob(filepath.Join(base, ckptRel, "agent-*.safetensors"))
	otherAgents, _ := filepath.Glob(filepath.Join(other, ckptRel, "agent-*.safetensors"))
	if len(agents) != 2 || len(otherAgents) != 2 {
		t.Fatalf("agent files: %v, %v", agents, otherAgents)
	}
	// The swapped-in file passes every check but the checksums: it loads,
	// and holds the steps population.json records.
	a, err := agent.Load(otherAgents[1])
	if err != nil {
		t.Fatal(err)
	}
	b, err := agent.Load(agents[0])
	if err != nil {
		t.Fatal(err)
	}
	if a.Steps != b.Steps || !slices.Equal(a.Config().Net.Head.Hidden, b.Config().Net.Head.Hidden) {
		t.Fatalf("the other run's agent differs in steps (%d, %d) or head", a.Steps, b.Steps)
	}

	// Each case gets a copy of the run; paths are relative to it.
	edit := func(t *testing.T, path string, f func([]byte) []byte) {
		t.Helper()
		if err := os.WriteFile(path, f(mustRead(t, path)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rewriteSum := func(t *testing.T, ckpt string) {
		t.Helper()
		sum := sha256.Sum256(mustRead(t, filepath.Join(ckpt, "population.json")))
		if err := os.WriteFile(filepath.Join(ckpt, "population.sha256"), fmt.Appendf(nil, "%x  population.json\n", sum), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	agent0 := filepath.Base(agents[0])
	tests := []struct {
		name   string
		tamper func(t *testing.T, ckpt string)
		want   []string // paths relative to the checkpoint, then words
	}{
		{"generation edited", func(t *testing.T, ckpt string) {
			edit(t, filepath.Join(ckpt, "population.json"), func(b []byte) []byte {
				return bytes.Replace(b, []byte(`"generation": 1,`), []byte(`"generation": 2,`), 1)
			})
		}, []string{"population.json", "population.sha256", "does not match"}},
		{"generation edited and population.sha256 recomputed", func(t *testing.T, ckpt string) {
			edit(t, filepath.Join(ckpt, "population.json"), func(b []byte) []byte {
				return bytes.Replace(b, []byte(`"generation": 1,`), []byte(`"generation": 2,`), 1)
			})
			rewriteSum(t, ckpt)
			// Caught by the fitness histories (one value per generation)
			// before the checkpoint's name (gen-000001).
		}, []string{"population.json", "after generation 2"}},
		{"agent file of another run swapped in", func(t *testing.T, ckpt string) {
			edit(t, filepath.Join(ckpt, agent0), func([]byte) []byte { return mustRead(t, otherAgents[1]) })
		}, []string{agent0, "replaced"}},
		{"agent files exchanged", func(t *testing.T, ckpt string) {
			p0, p1 := filepath.Join(ckpt, agent0), filepath.Join(ckpt, filepath.Base(agents[1]))
			b0, b1 := mustRead(t, p0), mustRead(t, p1)
			edit(t, p0, func([]byte) []byte { return b1 })
			edit(t, p1, func([]byte) []byte { return b0 })
		}, []string{agent0}},
		{"agent file truncated", func(t *testing.T, ckpt string) {
			edit(t, filepath.Join(ckpt, agent0), func(b []byte) []byte { return b[:len(b)-1] })
		}, []string{agent0, "truncated, extended or replaced"}},
		{"agent file extended", func(t *testing.T, ckpt string) {
			edit(t, filepath.Join(ckpt, agent0), func(b []byte) []byte { return append(b, 0) })
		}, []string{agent0, "truncated, extended or replaced"}},
		{"agent file deleted", func(t *testing.T, ckpt string) {
			if err := os.Remove(filepath.Join(ckpt, agent0)); err != nil {
				t.Fatal(err)
			}
		}, []string{agent0, "missing"}},
		{"extra file", func(t *testing.T, ckpt string) {
			if err := os.WriteFile(filepath.Join(ckpt, "agent-000099.safetensors"), mustRead(t, otherAgents[0]), 0o644); err != nil {
				t.Fatal(err)
			}
		}, []string{"agent-000099.safetensors", "not part of the checkpoint"}},
		{"agent checksum edited in population.json and population.sha256 recomputed", func(t *testing.T, ckpt string) {
			edit(t, filepath.Join(ckpt, "population.json"), func(b []byte) []byte {
				i := bytes.Index(b, []byte(`"sha256": "`)) + len(`"sha256": "`)
				if b[i] == '0' {
					b[i] = '1'
				} else {
					b[i] = '0'
				}
				return b
			})
			rewriteSum(t, ckpt)
		}, []string{"agent-", "altered or replaced"}},
		{"population.sha256 altered", func(t *testing.T, ckpt string) {
			edit(t, filepath.Join(ckpt, "population.sha256"), func(b []byte) []byte {
				if b[0] == '0' {
					b[0] = '1'
				} else {
					b[0] = '0'
				}
				return b
			})
		}, []string{"population.json", "population.sha256", "does not match"}},
		{"population.sha256 not a checksum", func(t *testing.T, ckpt string) {
			edit(t, filepath.Join(ckpt, "population.sha256"), func([]byte) []byte { return []byte("trust me\n") })
		}, []string{"population.sha256", "as sha256sum writes"}},
		{"population.sha256 deleted", func(t *testing.T, ckpt string) {
			if err := os.Remove(filepath.Join(ckpt, "population.sha256")); err != nil {
				t.Fatal(err)
			}
		}, []string{"population.sha256", "missing"}},
		{"checkpoint from before checksums", func(t *testing.T, ckpt string) {
			edit(t, filepath.Join(ckpt, "population.json"), func(b []byte) []byte {
				var pop map[string]any
				if err := json.Unmarshal(b, &pop); err != nil {
					t.Fatal(err)
				}
				pop["version"] = 1
				for _, m := range pop["members"].([]any) {
					delete(m.(map[string]any), "size")
					delete(m.(map[string]any), "sha256")
				}
				out, _ := json.MarshalIndent(pop, "", "  ")
				return out
			})
			if err := os.Remove(filepath.Join(ckpt, "population.sha256")); err != nil {
				t.Fatal(err)
			}
		}, []string{"population.json", "predates checksums", "config.toml"}},
	}
	// The run's .lock names the last process that trained it: another
	// process's pid (this process's own would hide a rewrite), or no file.
	lockAs := func(t *testing.T, run string, i int) {
		t.Helper()
		lock := filepath.Join(run, ".lock")
		if i%2 == 1 {
			if err := os.Remove(lock); err != nil {
				t.Fatal(err)
			}
			return
		}
		if err := os.WriteFile(lock, []byte("999999999\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run := filepath.Join(t.TempDir(), "run")
			copyTree(t, base, run)
			lockAs(t, run, i)
			ckpt := filepath.Join(run, ckptRel)
			tc.tamper(t, ckpt)
			before := snapshot(t, run)
			code, stdout, stderr := evolve(context.Background(), "-resume", run, "-quiet")
			want := slices.Clone(tc.want)
			want[0] = filepath.Join(ckpt, want[0])
			exitsTwoSaying(t, code, stderr, want...)
			t.Log(stderr)
			if stdout != "" || strings.Contains(stderr, "panic") {
				t.Errorf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
			}
			sameSnapshot(t, "the run's directory", before, snapshot(t, run))
		})
	}

	// An untouched copy resumes and finishes.
	run := filepath.Join(t.TempDir(), "run")
	copyTree(t, base, run)
	if code, stdout, stderr := evolve(context.Background(), "-resume", run, "-quiet"); code != 0 || !strings.Contains(stdout, "generations   3") {
		t.Errorf("untouched copy: exit %d; stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

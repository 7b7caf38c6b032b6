package evo

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestCheckpointFilesAreBoundTogether(t *testing.T) {
	cfg := tiny(t)
	cfg.Population.MaxSteps = 2 * 3 * 256
	if _, err := run(t, cfg, Options{}, nil); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"gen-000000", "gen-000001", "gen-000002"} {
		ckpt := filepath.Join(cfg.OutDir, "checkpoints", name)
		pb := readFile(t, filepath.Join(ckpt, populationFile))
		sum := sha256.Sum256(pb)
		// The format of sha256sum, so that `sha256sum -c` checks it.
		if got, want := string(readFile(t, filepath.Join(ckpt, populationSumFile))), hex.EncodeToString(sum[:])+"  population.json\n"; got != want {
			t.Errorf("%s: population.sha256 = %q, want %q", name, got, want)
		}
		p, err := decodePopulation(pb)
		if err != nil {
			t.Fatal(err)
		}
		files := []string{populationFile, populationSumFile}
		members := p.Members
		if e := p.EliteFile; e != nil {
			members = append(members, memberJSON{File: e.File, Size: e.Size, SHA256: e.SHA256})
		} else if p.BestIndex >= 0 {
			t.Errorf("%s: an elite (agent %d) but no copy of it", name, p.BestIndex)
		}
		for _, m := range members {
			b := readFile(t, filepath.Join(ckpt, m.File))
			if s := sha256.Sum256(b); int64(len(b)) != m.Size || hex.EncodeToString(s[:]) != m.SHA256 {
				t.Errorf("%s: %s is %d bytes of SHA-256 %x, population.json says %d, %s", name, m.File, len(b), s, m.Size, m.SHA256)
			}
			files = append(files, m.File)
		}
		entries, err := os.ReadDir(ckpt)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range entries {
			got = append(got, e.Name())
		}
		slices.Sort(files)
		if !slices.Equal(got, files) {
			t.Errorf("%s holds %v, want %v", name, got, files)
		}
	}
}

func TestCheckOutDir(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, dir string
		want      string // "" for no error
		needs     string // a path the case needs, else it is skipped
	}{
		{"new nested directory", filepath.Join(dir, "a", "b", "run"), "", ""},
		{"existing directory", dir, "", ""},
		{"plain file", file, file + " is a file, not a directory", ""},
		{"under a plain file", filepath.Join(file, "a", "run"), file + " is a file, not a directory", ""},
		{"device", "/dev/null/run", "/dev/null is not a directory", "/dev/null"},
		// /proc refuses new entries even to root.
		{"in /proc", "/proc/evolve-test/run", "cannot create a directory in /proc", "/proc"},
		{"empty", "", "empty directory name", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.needs != "" {
				if _, err := os.Stat(tc.needs); err != nil {
					t.Skip(err)
				}
			}
			if !dirVerdict(t, "CheckOutDir", tc.dir, CheckOutDir(tc.dir), tc.want) {
				t.FailNow()
			}
			// Nothing is left behind: the test's directory holds only the file.
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("%s holds %v after the check", dir, entries)
			}
		})
	}
}

// TestRunRefusesAnUnwritableOutDir covers programs that use the package
// without the command's early check: Run refuses before writing.
func TestRunRefusesAnUnwritableOutDir(t *testing.T) {
	cfg := tiny(t)
	file := filepath.Join(filepath.Dir(cfg.OutDir), "notes.txt")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.OutDir = filepath.Join(file, "run")
	// New refuses it (it was left to Run, which refused before writing).
	_, err := New(cfg, Options{})
	if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "out_dir "+cfg.OutDir) || !strings.Contains(err.Error(), file+" is a file") {
		t.Fatalf("New with a directory under a file: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(file)); len(entries) != 1 {
		t.Errorf("files created: %v", entries)
	}
}

// TestResumeNamesTheCheckpointsThereAre checks Resume's messages when
// checkpoints/latest names a missing checkpoint (the ones there are, and
// how to pick one) and when it refuses a damaged checkpoint (the older one
// that verifies, and how to use it), then follows that hint.
func TestResumeNamesTheCheckpointsThereAre(t *testing.T) {
	cfg := tiny(t)
	cfg.Population.MaxSteps = 3 * 3 * 256
	if _, err := run(t, cfg, Options{}, nil); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(cfg.OutDir, "checkpoints")
	latest := filepath.Join(root, "latest")
	setLatest := func(name string) {
		t.Helper()
		if err := os.WriteFile(latest, []byte(name+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wantErr := func(err error, want ...string) {
		t.Helper()
		if !errors.Is(err, ErrBadInput) {
			t.Fatalf("err = %v, want ErrBadInput", err)
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not mention %q", err, w)
			}
		}
	}

	setLatest("gen-000099")
	_, err := Resume(cfg.OutDir, Options{})
	wantErr(err, latest+" names gen-000099, which does not exist",
		"the checkpoints in "+root+" are gen-000001, gen-000002, gen-000003", "echo gen-000003 > "+latest)

	if err := os.Remove(latest); err != nil {
		t.Fatal(err)
	}
	// Without latest (a stop before its first write), the newest checkpoint
	// is the one: it is verified as latest's would be.
	tr, err := Resume(cfg.OutDir, Options{})
	if err != nil {
		t.Fatalf("resume without latest: %v", err)
	}
	if g := tr.Progress().Generation; g != 3 {
		t.Errorf("resumed at generation %d, want 3", g)
	}
	tr.Close()

	// A truncated agent file in the newest checkpoint.
	setLatest("gen-000003")
	agentFile := firstAgentFile(t, filepath.Join(root, "gen-000003"))
	b := readFile(t, agentFile)
	if err := os.WriteFile(agentFile, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Resume(cfg.OutDir, Options{})
	wantErr(err, agentFile, "truncated", "the older checkpoint "+filepath.Join(root, "gen-000002")+" verifies",
		"echo gen-000002 > "+latest)

	// No hint names a checkpoint that does not verify either.
	b2 := firstAgentFile(t, filepath.Join(root, "gen-000002"))
	good := readFile(t, b2)
	if err := os.WriteFile(b2, good[:10], 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Resume(cfg.OutDir, Options{})
	wantErr(err, "the older checkpoint "+filepath.Join(root, "gen-000001")+" verifies")
	if err := os.WriteFile(b2, good, 0o644); err != nil {
		t.Fatal(err)
	}

	// The hint works.
	setLatest("gen-000002")
	tr, err = Resume(cfg.OutDir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.gen != 2 {
		t.Fatalf("resumed from generation %d, want 2", tr.gen)
	}
}

// firstAgentFile returns the path of the first agent file in checkpoint
// directory dir.
func firstAgentFile(t *testing.T, dir string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "agent-*.safetensors"))
	if err != nil || len(m) == 0 {
		t.Fatalf("no agent file in %s: %v", dir, err)
	}
	return m[0]
}

// TestResumeOfAFileSaysItWantsARunDirectory: evo.Resume of a config file
// says what it wants instead of "config.toml: not a directory".
func TestResumeOfAFileSaysItWantsARunDirectory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "cartpole.toml")
	if err := os.WriteFile(file, []byte("seed = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Resume(file, Options{})
	if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "not a run directory") {
		t.Errorf("Resume of a file: %v", err)
	}
}

// TestResumeWithoutItsConfigSaysSo: a run directory whose config.toml is
// gone or empty (blank, or comments alone), beside its checkpoints, is
// refused saying that and how to put it back (it was "not a run directory",
// or for the empty file a list of every key the file "changed").
func TestResumeWithoutItsConfigSaysSo(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "checkpoints"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Resume(dir, Options{}); !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "config.toml is gone") ||
		!strings.Contains(err.Error(), "population.json") {
		t.Errorf("Resume without config.toml: %v", err)
	}
	for _, text := range []string{"\n  \n", "# the run's config\n\n  # (lost)\n"} {
		if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Resume(dir, Options{}); !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "config.toml is empty") {
			t.Errorf("Resume of a config.toml of %q: %v", text, err)
		}
	}
}

// TestFreeOutDir: a directory holding a run gives the next free _N.
func TestFreeOutDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cartpole")
	if got := FreeOutDir(dir); got != dir {
		t.Errorf("FreeOutDir of a new directory: %s", got)
	}
	for _, d := range []string{dir, dir + "_2", dir + "_4"} {
		if err := os.MkdirAll(filepath.Join(d, "checkpoints"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if got := FreeOutDir(dir + "/"); got != dir+"_3" {
		t.Errorf("FreeOutDir: %s, want %s_3", got, dir)
	}
}

// TestCheckNewOutDir: a new run goes only where it overwrites nothing: a
// missing or empty directory outside every run. A directory holding a run,
// a user's files, a run stopped before its first checkpoint, a place inside
// a run and a dangling link are refused (ErrBadInput), and FreeOutDir steps
// past them.
func TestCheckNewOutDir(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir()) // macOS: /var is a link
	if err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(base, "run")
	mkdir := func(p string) {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mkdir(filepath.Join(run, "checkpoints", "gen-000001"))
	if err := os.WriteFile(filepath.Join(run, "config.toml"), []byte(resolvedHeader), 0o644); err != nil {
		t.Fatal(err)
	}
	// A project's own checkpoints folder (PyTorch's) is not a run: a run may
	// go below it.
	mkdir(filepath.Join(base, "proj", "checkpoints"))
	mkdir(filepath.Join(base, "empty"))
	mkdir(filepath.Join(base, "notes"))
	if err := os.WriteFile(filepath.Join(base, "notes", "config.toml"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "nowhere"), filepath.Join(base, "dangling")); err != nil {
		t.Fatal(err)
	}
	// Links into the run: "tblink/.." is the run itself to the system,
	// but base to filepath.Clean; "cklink/new" lies in its checkpoints.
	mkdir(filepath.Join(run, "tb"))
	if err := os.Symlink(filepath.Join(run, "tb"), filepath.Join(base, "tblink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(run, "checkpoints"), filepath.Join(base, "cklink")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ dir, want string }{
		{filepath.Join(base, "new"), ""},
		{filepath.Join(base, "proj", "runs", "cartpole"), ""},
		{filepath.Join(base, "empty"), ""},
		{run, "already holds a run"},
		{filepath.Join(base, "notes"), "is not empty (config.toml)"},
		{filepath.Join(run, "checkpoints", "gen-000001"), "lies inside the run directory " + run},
		{filepath.Join(run, "tb", "x"), "lies inside the run directory"},
		{filepath.Join(base, "dangling"), "symbolic link to a path that does not exist"},
		{filepath.Join(base, "tblink") + "/../notes", `a ".." after a symbolic link`},
		{filepath.Join(base, "cklink", "new"), "lies inside the run directory"},
		{filepath.Join(base, "notes", "config.toml"), "notes/config.toml is a file, not a directory"},
		{filepath.Join(base, "notes", "config.toml", "sub"), "notes/config.toml is a file, not a directory"},
	} {
		dirVerdict(t, "CheckNewOutDir", tc.dir, CheckNewOutDir(tc.dir), tc.want)
	}
	if below := filepath.Join(base, "notes", "config.toml", "sub"); FreeOutDir(below) != below {
		t.Errorf("FreeOutDir below a file: %s, want it back", FreeOutDir(below))
	}
	if got := FreeOutDir(filepath.Join(base, "notes")); got != filepath.Join(base, "notes_2") {
		t.Errorf("FreeOutDir past a directory of other files: %s", got)
	}
	// Inside a run no numbered sibling helps (it looped for ever): dir
	// itself comes back, for New to refuse.
	inside := filepath.Join(run, "runs", "cartpole")
	if got := FreeOutDir(inside); got != inside {
		t.Errorf("FreeOutDir inside a run: %s, want %s", got, inside)
	}
	cfg := tiny(t)
	cfg.OutDir = filepath.Join(base, "notes")
	if _, err := New(cfg, Options{}); err == nil {
		t.Error("New wrote over a directory of other files")
	}
	if b, _ := os.ReadFile(filepath.Join(base, "notes", "config.toml")); string(b) != "mine" {
		t.Errorf("the user's config.toml became %q", b)
	}
}

// dirVerdict checks a directory check's err for dir: nil where want is "",
// else ErrBadInput mentioning want. It reports a mismatch and returns
// whether the verdict was the one wanted.
func dirVerdict(t *testing.T, check, dir string, err error, want string) bool {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("%s(%q): %v, want it accepted", check, dir, err)
	case want != "" && (!errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), want)):
		t.Errorf("%s(%q) = %v, want an ErrBadInput mentioning %q", check, dir, err, want)
	default:
		return true
	}
	return false
}

// TestRunRefusesFilesWrittenSinceNew: files that appear in a new run's
// directory between New and Run (another program's, or a run of another
// process stopped before its first checkpoint) are refused, not written
// over (config.toml was replaced by the run's).
func TestRunRefusesFilesWrittenSinceNew(t *testing.T) {
	cfg := tiny(t)
	tr, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(cfg.OutDir, "config.toml")
	if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mine, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = tr.Run(t.Context())
	if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "is not empty (config.toml)") {
		t.Errorf("Run into a directory written since New: %v", err)
	}
	if b, _ := os.ReadFile(mine); string(b) != "mine\n" {
		t.Errorf("config.toml was written over: %q", b)
	}
}

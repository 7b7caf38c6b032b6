package realpath

import (
	"os"
	"path/filepath"
	"testing"
)

// TestOf: a link and a ".." after it resolve as the system resolves them;
// a missing tail is cleaned onto the existing part; Ambiguous flags a path
// whose lexical cleaning names another directory.
func TestOf(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(base, "run")
	if err := os.MkdirAll(filepath.Join(run, "tb"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(filepath.Join(run, "tb"), link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		p, want   string
		ambiguous bool
	}{
		{link + "/../proj", filepath.Join(run, "proj"), true},
		{link + "/new/x", filepath.Join(run, "tb", "new", "x"), false},
		{base + "/a/../b", filepath.Join(base, "b"), false},
		{run + "/", run, false},
	} {
		if got := Of(tc.p); got != tc.want {
			t.Errorf("Of(%q) = %q, want %q", tc.p, got, tc.want)
		}
		if got := Ambiguous(tc.p); got != tc.ambiguous {
			t.Errorf("Ambiguous(%q) = %v", tc.p, got)
		}
	}
}

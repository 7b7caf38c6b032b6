package readcap

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFile: a file up to the limit is read whole; a longer one, and an
// endless device, are errors naming the path; a directory is os's error
// (named once: it was wrapped in a second read error naming it again).
func TestFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.toml")
	if err := os.WriteFile(path, []byte("seed = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := File(path, 9); err != nil || string(b) != "seed = 1\n" {
		t.Errorf("File at the limit: %q, %v", b, err)
	}
	if _, err := File(path, 8); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("File over the limit: %v", err)
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		if _, err := File("/dev/zero", 1<<20); err == nil || !strings.Contains(err.Error(), "longer than") {
			t.Errorf("/dev/zero: %v", err)
		}
	}
	if _, err := File(dir, 1<<20); err == nil || strings.Count(err.Error(), dir) != 1 {
		t.Errorf("a directory: %v, want an error naming it once", err)
	}
}

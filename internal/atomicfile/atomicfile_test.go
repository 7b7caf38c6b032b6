package atomicfile

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteKeepsOldFileOnFailure(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.safetensors")
	if err := WriteBytes(path, []byte("old")); err != nil {
		t.Fatal(err)
	}
	err := Write(path, func(w io.Writer) error {
		w.Write([]byte("partial"))
		return os.ErrClosed
	})
	if err == nil {
		t.Fatal("failed write reported success")
	}
	got, _ := os.ReadFile(path)
	if string(got) != "old" {
		t.Fatalf("file after a failed write: %q, want the old content", got)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
	if err := WriteBytes(path, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "new" {
		t.Fatalf("after a successful write: %q", got)
	}
}

// TestWriteModes: a new file is 0644 (not CreateTemp's 0600), and a file
// replaced keeps its mode.
func TestWriteModes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := WriteBytes(path, []byte("a")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
		t.Errorf("new file mode %v, want 0644", st.Mode().Perm())
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteBytes(path, []byte("b")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("replaced file mode %v, want its 0600 kept", st.Mode().Perm())
	}
}

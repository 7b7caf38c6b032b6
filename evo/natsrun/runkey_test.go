package natsrun

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
)

// TestRunKey: a run directory's first coordinator draws a key and keeps
// it, later ones read it, two directories get two keys (two runs with one
// host name, path and config no longer share an id); a run that trained
// before keys were kept keeps the id it had (host name and directory), and
// a directory that does not exist gets a key that is not written.
func TestRunKey(t *testing.T) {
	key := func(dir string) string {
		t.Helper()
		k, err := runKey(dir)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	a, b := t.TempDir(), t.TempDir()
	ka := key(a)
	if again := key(a); again != ka {
		t.Errorf("the key changed between sessions: %q, then %q", ka, again)
	}
	if kb := key(b); kb == ka {
		t.Errorf("two run directories got one key %q", ka)
	}

	old := t.TempDir()
	if err := os.WriteFile(filepath.Join(old, "metrics.csv"), []byte("generation,agent\n0,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	// The id an earlier build gave it: the hash of digest, host and dir.
	sum := sha256.Sum256([]byte("gens\n" + host + "\n" + old))
	if got, want := runID("gens", key(old)), hex.EncodeToString(sum[:8]); got != want {
		t.Errorf("a run of an earlier build: id %s, want %s (the one it had)", got, want)
	}
	if again := key(old); again != host+"\n"+old {
		t.Errorf("a run of an earlier build: key %q on its next session", again)
	}

	missing := filepath.Join(t.TempDir(), "none")
	if key(missing) == "" {
		t.Error("no key for a directory that does not exist")
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("%s was made", missing)
	}
}

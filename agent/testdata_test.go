package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// readTestdata decodes the JSON reference file testdata/name (written by
// its generator beside it) into v, failing the test with the file's name.
func readTestdata(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

package envs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// sharedTestdata is where the reference data lives, relative to this
// package: ../shared/testdata beside the repository.
const sharedTestdata = "../../shared/testdata"

// readShared decodes a reference file into v, or skips the test with a
// message when the shared folder is absent (CI always has it).
func readShared(t testing.TB, rel string, v any) {
	t.Helper()
	path := filepath.Join(sharedTestdata, rel)
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		t.Skipf("reference data %s not found: clone the shared folder beside the repository to run this test", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

package cli

import (
	"strings"
	"testing"

	"github.com/evolverl/evolve/evo/natsrun"
)

// TestUnversionedWarning: a build without a version (as test binaries are)
// is warned about, since the same-build check cannot tell two apart.
func TestUnversionedWarning(t *testing.T) {
	if v := natsrun.Version(); !strings.HasPrefix(v, "(devel) protocol") {
		t.Skipf("this binary has a version (%s)", v)
	}
	if w := unversionedWarning(); !strings.Contains(w, "build the coordinator and every worker as one binary") {
		t.Errorf("warning %q", w)
	}
}

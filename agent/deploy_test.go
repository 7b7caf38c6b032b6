package agent

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeployPathLinksNeitherGorgoniaNorEvo: a program that only loads an
// agent and acts imports agent and envs; neither may pull in the gorgonia
// backend (it registers itself only when a program imports nn/gorgonia) or
// the evolution package.
func TestDeployPathLinksNeitherGorgoniaNorEvo(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	out, err := exec.Command(goTool, "list", "-deps", "github.com/evolverl/evolve/agent", "github.com/evolverl/evolve/envs").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "gorgonia.org/") || pkg == "github.com/evolverl/evolve/nn/gorgonia" || pkg == "github.com/evolverl/evolve/evo" {
			t.Errorf("the deploy path links %s", pkg)
		}
	}
}

package natsrun_test

import (
	"context"
	"strings"
	"testing"

	"github.com/evolverl/evolve/evo/natsrun"
)

// TestMismatchSaysHowToContinue: `evolve -nats` failed by a worker of
// another build exits 2 and says how to continue the run once the workers
// are fixed (the run directory stays, resumable, and said nothing).
func TestMismatchSaysHowToContinue(t *testing.T) {
	s := startServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := natsrun.NewWorker(s.connect(t))
	w.Version = "v9.9.9 protocol 1"
	go w.Run(ctx)
	cfg := tiny(t)
	code, stderr := evolveCLI(t, nil, "-config", writeConfig(t, cfg), "-quiet", "-no-target", "-nats", s.url())
	if code != 2 || !strings.Contains(stderr, "evolve version or run mismatch") ||
		!strings.Contains(stderr, "once the workers are fixed, continue with: evolve -resume "+cfg.OutDir+" -no-target -nats "+s.url()) {
		t.Errorf("exit %d:\n%s", code, stderr)
	}
}

package cli

import (
	"bytes"
	"log/slog"
	"testing"
)

// TestLineHandler: a run's notes are one line each in the command's voice,
// with their attributes after them, and only from the level up.
func TestLineHandler(t *testing.T) {
	var b bytes.Buffer
	log := slog.New(newLineHandler(&b, "evolve", slog.LevelWarn))
	log.Info("not shown")
	log.Warn("agent diverged: fitness -Inf for this generation", "agent", 3, "why", "loss is NaN")
	log.With("dir", "runs/x").Warn("restarting")
	log.Error("lost", "empty", "")
	want := "evolve: warning: agent diverged: fitness -Inf for this generation (agent=3 why=\"loss is NaN\")\n" +
		"evolve: warning: restarting (dir=runs/x)\n" +
		"evolve: error: lost (empty=\"\")\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

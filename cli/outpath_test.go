package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoOutputIntoCheckpoints: plot -o, play -gif/-record and sample -o
// refuse a path in a run's checkpoints (a file there failed the next
// resume's verification) and write nothing there; elsewhere in the run
// directory is fine.
func TestNoOutputIntoCheckpoints(t *testing.T) {
	tmp, err := filepath.EvalSymlinks(t.TempDir()) // macOS: /var is a link
	if err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(tmp, "run")
	ckpt := filepath.Join(run, "checkpoints", "gen-000001")
	if err := os.MkdirAll(ckpt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run, "config.toml"), []byte("[population]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A project's own checkpoints folder is not a run's.
	mine := filepath.Join(tmp, "ml", "checkpoints")
	if err := os.MkdirAll(mine, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := checkpointHolding(filepath.Join(mine, "x.gif")); got != "" {
		t.Errorf("a project's checkpoints folder taken for a run's (%s)", got)
	}
	for _, args := range [][]string{
		{"plot", "-o", filepath.Join(run, "checkpoints"), run},
		{"play", "-agent", run, "-gif", filepath.Join(ckpt, "x.gif")},
		{"play", "-agent", run, "-record", filepath.Join(ckpt, "x.npz")},
		{"sample", "-o", filepath.Join(ckpt, "d.npz"), run},
	} {
		code, _, stderr := evolve(context.Background(), args...)
		if code != exitBadInput || !strings.Contains(stderr, "inside the checkpoints of the run "+run) {
			t.Errorf("%v: exit %d, %q; want 2 naming the run", args, code, stderr)
		}
	}
	// Through a link to the checkpoint, too.
	link := filepath.Join(filepath.Dir(run), "g")
	if err := os.Symlink(ckpt, link); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := evolve(context.Background(), "plot", "-o", link, run); code != exitBadInput || !strings.Contains(stderr, "inside the checkpoints") {
		t.Errorf("plot -o a link to a checkpoint: exit %d, %q", code, stderr)
	}
	if entries, _ := os.ReadDir(ckpt); len(entries) != 0 {
		t.Errorf("written into the checkpoint: %v", entries)
	}
	if got := checkpointHolding(filepath.Join(run, "plots", "x.png")); got != "" {
		t.Errorf("the run's plots directory taken for its checkpoints (%s)", got)
	}
}

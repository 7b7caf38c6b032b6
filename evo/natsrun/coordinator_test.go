package natsrun

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evolverl/evolve/evo"
	"github.com/nats-io/nats.go"
)

// TestASecondCoordinatorOfTheRunIsRefused: two copies of a run directory
// (one .nats-run key) resumed at once on one server each cleared the
// other's tasks and both waited for ever. Now the second is refused before
// it touches the server, naming the first (ErrRunInUse, bad input), and
// the first goes on; once the first ends, or its process dies, the run is
// free again, and one that no longer answers is taken over.
func TestASecondCoordinatorOfTheRunIsRefused(t *testing.T) {
	srv := embedded(t, true)
	conn := func() *nats.Conn {
		nc, err := nats.Connect(srv.ClientURL())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		return nc
	}
	cfg, _ := oneTask(t)
	original, copied := filepath.Join(t.TempDir(), "run"), filepath.Join(t.TempDir(), "copy")
	for _, d := range []string{original, copied} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, runKeyFile), []byte("0123456789abcdef\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	in := func(dir string) evo.Config { c := cfg; c.OutDir = dir; return c }
	ctx := context.Background()

	first := NewPool(conn(), PoolOptions{})
	if err := first.start(ctx, in(original)); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{copied, original} {
		second := NewPool(conn(), PoolOptions{})
		err := second.start(ctx, in(dir))
		if !errors.Is(err, evo.ErrRunInUse) || !errors.Is(err, evo.ErrBadInput) {
			t.Fatalf("a second coordinator of the run in %s: %v; want ErrRunInUse", dir, err)
		}
		for _, want := range []string{original, "process " + strconv.Itoa(os.Getpid())} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the refusal does not name %q: %v", want, err)
			}
		}
		if dir == copied && !strings.Contains(err.Error(), "remove "+filepath.Join(copied, runKeyFile)) {
			t.Errorf("the refusal of a copy does not say how to make it a run of its own: %v", err)
		}
		if err := second.Close(); err != nil {
			t.Errorf("close a refused pool: %v", err)
		}
	}
	// The first coordinator's run is as it left it.
	e, err := first.h.runs.Get(ctx, first.run)
	if err != nil {
		t.Fatal(err)
	}
	var info runInfo
	if err := json.Unmarshal(e.Value(), &info); err != nil || info.Session != first.session {
		t.Errorf("the run's entry on the server was replaced: session %q (%v), want %q", info.Session, err, first.session)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}

	// Ended: the copy may start; then its process dies (the connection
	// closes with it) and the original starts at once.
	nc := conn()
	dead := NewPool(nc, PoolOptions{})
	if err := dead.start(ctx, in(copied)); err != nil {
		t.Fatalf("after the first coordinator ended: %v", err)
	}
	nc.Close()
	again := NewPool(conn(), PoolOptions{})
	began := time.Now()
	if err := again.start(ctx, in(original)); err != nil {
		t.Fatalf("after the other coordinator's connection closed: %v", err)
	}
	if d := time.Since(began); d > askTimeout/2 {
		t.Errorf("a run without a coordinator took %v to claim", d)
	}
	again.release() // as if its machine died: the server still has a subscriber

	defer func(d time.Duration) { askTimeout = d }(askTimeout)
	askTimeout = 200 * time.Millisecond
	mute, err := conn().Subscribe(coordinatorPrefix+again.run, func(*nats.Msg) {})
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Unsubscribe()
	var notes LockedBuffer
	over := NewPool(conn(), PoolOptions{Log: slog.New(slog.NewTextHandler(&notes, nil))})
	if err := over.start(ctx, in(original)); err != nil {
		t.Fatalf("a coordinator that does not answer: %v; want the run taken over", err)
	}
	if !strings.Contains(notes.String(), "takes the run over") {
		t.Errorf("taking a run over is not noted:\n%s", notes.String())
	}
	over.Close()
}

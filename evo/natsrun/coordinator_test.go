package natsrun

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evolverl/evolve/evo"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// TestASecondCoordinatorOfTheRunIsRefused: two copies of a run directory
// (one .nats-run key) resumed at once on one server each cleared the
// other's tasks and both waited for ever. Now the second is refused before
// it touches the server, naming the first (ErrRunInUse, bad input), and
// the first goes on; once the first ends, or its process dies, the run is
// free again, and one that no longer answers is taken over.
func TestASecondCoordinatorOfTheRunIsRefused(t *testing.T) {
	conn, original, copied := copiedRun(t)
	cfg, _ := oneTask(t)
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
	again.release() // as if it had stopped answering: busy, or its machine gone

	// A coordinator that is there and silent is not taken over (two would
	// train the run): the run is refused, saying why.
	defer func(d time.Duration) { askTimeout = d }(askTimeout)
	askTimeout = 200 * time.Millisecond
	mute, err := conn().Subscribe(coordinatorPrefix+again.run, func(*nats.Msg) {})
	if err != nil {
		t.Fatal(err)
	}
	over := NewPool(conn(), PoolOptions{})
	if err := over.start(ctx, in(original)); !errors.Is(err, evo.ErrRunInUse) || !strings.Contains(err.Error(), "did not answer") {
		t.Errorf("a coordinator that does not answer: %v; want the run refused", err)
	}
	over.Close()
	mute.Unsubscribe()
	again.Close()
}

// TestCoordinatorsStartingTogether: two coordinators of one run that
// start at the same moment both asked before either answered, and both
// trained the run. Now each asks again once it answers, so at most one
// goes on (often neither: both are told to try again), and one that
// refused answers for nothing afterwards.
func TestCoordinatorsStartingTogether(t *testing.T) {
	conn, original, copied := copiedRun(t)
	dirs := [2]string{original, copied}
	cfg, _ := oneTask(t)
	ctx := context.Background()
	for trial := range 10 {
		var pools [2]*Pool
		var errs [2]error
		var wg sync.WaitGroup
		for i := range 2 {
			pools[i] = NewPool(conn(), PoolOptions{})
			c := cfg
			c.OutDir = dirs[i]
			wg.Go(func() { errs[i] = pools[i].start(ctx, c) })
		}
		wg.Wait()
		if errs[0] == nil && errs[1] == nil {
			t.Fatalf("trial %d: both coordinators started", trial)
		}
		for i, err := range errs {
			if err != nil && !errors.Is(err, evo.ErrRunInUse) {
				t.Fatalf("trial %d, coordinator %d: %v; want ErrRunInUse", trial, i, err)
			}
		}
		for _, p := range pools {
			p.Close()
		}
		// Whoever refused released its claim: the run is free again.
		third := NewPool(conn(), PoolOptions{})
		c := cfg
		c.OutDir = dirs[0]
		if err := third.start(ctx, c); err != nil {
			t.Fatalf("trial %d: after both closed: %v", trial, err)
		}
		third.Close()
	}
}

// copiedRun starts a server and returns a way to connect to it and two run
// directories with one run key, as a copy of a run directory has.
func copiedRun(t *testing.T) (conn func() *nats.Conn, original, copied string) {
	t.Helper()
	srv := embedded(t, true)
	conn = func() *nats.Conn {
		nc, err := nats.Connect(srv.ClientURL())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		return nc
	}
	original, copied = filepath.Join(t.TempDir(), "run"), filepath.Join(t.TempDir(), "copy")
	for _, d := range []string{original, copied} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, runKeyFile), []byte("0123456789abcdef\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return conn, original, copied
}

// TestCoordinatorCutOffLosesItsRun: a coordinator cut off from the server
// (here by a server restart) has no subscription until it reconnects, so a
// copy can claim the run meanwhile; when the first is back, its next check
// finds the copy, fails its run with ErrRunInUse, and its Close leaves the
// copy's state on the server alone.
func TestCoordinatorCutOffLosesItsRun(t *testing.T) {
	opts := &server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true, JetStream: true, StoreDir: t.TempDir()}
	srv, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("the NATS server did not start")
	}
	url := srv.ClientURL()
	_, original, copied := copiedRun(t)
	cfg, _ := oneTask(t)
	in := func(dir string) evo.Config { c := cfg; c.OutDir = dir; return c }
	ctx := context.Background()
	ncA, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer ncA.Close()
	first := NewPool(ncA, PoolOptions{})
	if err := first.start(ctx, in(original)); err != nil {
		t.Fatal(err)
	}
	if err := first.stillOurs(ctx); err != nil {
		t.Fatalf("no reconnect yet: %v", err)
	}
	// The server restarts on its port; the copy connects before the first
	// is back.
	opts.Port = srv.Addr().(*net.TCPAddr).Port
	srv.Shutdown()
	srv.WaitForShutdown()
	if srv, err = server.NewServer(opts); err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	defer srv.Shutdown()
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("the NATS server did not restart")
	}
	ncB, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer ncB.Close()
	second := NewPool(ncB, PoolOptions{})
	if err := second.start(ctx, in(copied)); err != nil {
		t.Fatalf("the copy, while the first is cut off: %v", err)
	}
	for deadline := time.Now().Add(10 * time.Second); ncA.Stats().Reconnects == 0 || !ncA.IsConnected(); {
		if time.Now().After(deadline) {
			t.Fatal("the first coordinator did not reconnect")
		}
		time.Sleep(50 * time.Millisecond)
	}
	ncA.Flush() // its subscriptions are back on the server
	err = first.stillOurs(ctx)
	if !errors.Is(err, evo.ErrRunInUse) || !strings.Contains(err.Error(), copied) {
		t.Fatalf("the first, back: %v; want ErrRunInUse naming the copy", err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	e, err := second.h.runs.Get(ctx, second.run)
	if err != nil {
		t.Fatalf("the copy's run entry after the first's Close: %v", err)
	}
	var info runInfo
	if err := json.Unmarshal(e.Value(), &info); err != nil || info.Session != second.session {
		t.Errorf("the run's entry: session %q (%v), want the copy's %q", info.Session, err, second.session)
	}
	second.Close()
}

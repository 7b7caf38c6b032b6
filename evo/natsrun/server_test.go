package natsrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/evo"
	"github.com/evolverl/evolve/internal/runtest"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestOlderThan reads nats-server versions as the purge fix's check needs them.
func TestOlderThan(t *testing.T) {
	for v, want := range map[string]bool{"2.9.10": true, "2.10.10": true, "2.10.11": false, "v2.11.0": false,
		"2.15.2": false, "3.0.0": false, "1.99.99": true, "2.10.11-RC.1": false, "nonsense": false, "": false} {
		if got := olderThan(v, fixedPurgeVersion); got != want {
			t.Errorf("olderThan(%q) = %v, want %v", v, got, want)
		}
	}
}

// TestCheckServerWantsJetStream: a server without JetStream is refused with the way to
// start one that has it; one with it passes without a warning (the embedded server is
// recent).
func TestCheckServerWantsJetStream(t *testing.T) {
	for _, js := range []bool{false, true} {
		nc := connected(t, js)
		warning, err := CheckServer(context.Background(), nc)
		switch {
		case !js && (err == nil || !strings.Contains(err.Error(), "has no JetStream: start it with -js")):
			t.Errorf("without JetStream: %v", err)
		case js && (err != nil || warning != ""):
			t.Errorf("with JetStream: warning %q, error %v", warning, err)
		}
	}
}

// connected returns a connection to a new embedded server (embedded), closed
// when the test ends.
func connected(t *testing.T, jetStream bool) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(embedded(t, jetStream).ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// embedded starts a server on a loopback port for this package's own tests (the
// others, in natsrun_test, have theirs), with JetStream or without.
func embedded(t *testing.T, jetStream bool) *server.Server {
	t.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true,
		JetStream: jetStream, StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("the NATS server did not start")
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s
}

// TestWorkerReadsTheAckWaitPerTask: a coordinator that changes the work queue's ack wait
// after a worker started is heeded from the worker's next task on, so it reports in time
// (it once reported at a third of the wait it read at start, and its tasks were redelivered
// while they trained).
func TestWorkerReadsTheAckWaitPerTask(t *testing.T) {
	nc := connected(t, true)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, _, err := createResources(ctx, js, Settings{AckWait: 30 * time.Second, MaxDeliver: 5}); err != nil {
		t.Fatal(err)
	}
	_, cons, err := openResources(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	w := &Worker{cons: cons, ackWait: cons.CachedInfo().Config.AckWait}
	if got := w.ackWaitNow(ctx); got != 30*time.Second {
		t.Fatalf("ack wait %v, want 30s", got)
	}
	if _, _, err := createResources(ctx, js, Settings{AckWait: time.Second, MaxDeliver: 5}); err != nil {
		t.Fatal(err)
	}
	if got := w.ackWaitNow(ctx); got != time.Second {
		t.Errorf("after another coordinator set 1s: ack wait %v", got)
	}
}

// LockedBuffer is a bytes.Buffer safe for concurrent writes and reads (a
// logger's, a command's); exported for the natsrun_test package.
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *LockedBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// TestTrainSaysWhenNoResultComes: a generation whose tasks no worker takes says so in the
// log, naming how many agents are trained, instead of waiting in silence.
func TestTrainSaysWhenNoResultComes(t *testing.T) {
	defer func(d time.Duration) { waitNote = d }(waitNote)
	waitNote = 100 * time.Millisecond
	nc := connected(t, true)
	var logs LockedBuffer
	p := NewPool(nc, PoolOptions{Log: slog.New(slog.NewTextHandler(&logs, nil))})
	defer p.Close()
	cfg, tasks := oneTask(t)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if _, err := p.Train(ctx, cfg, tasks, func(int) {}); err == nil {
		t.Fatal("a generation without workers trained")
	}
	if !strings.Contains(logs.String(), "generation 1: 0 of 1 agents trained, no result for") {
		t.Errorf("log:\n%s", logs.String())
	}
}

// oneTask returns the tiny config (its run directory in a temporary one)
// and a generation of one task: a new agent of it.
func oneTask(t *testing.T) (evo.Config, []evo.Task) {
	t.Helper()
	cfg, err := evo.ParseConfig([]byte(runtest.TinyConfig))
	if err != nil {
		t.Fatal(err)
	}
	cfg.OutDir = filepath.Join(t.TempDir(), "run")
	env, err := envs.Make(cfg.Env.ID, cfg.Env.Options)
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(env.ObservationSpace(), env.ActionSpace(), cfg.PPO, 1)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, []evo.Task{{Generation: 1, Index: 0, Parent: -1, Agent: a}}
}

// TestWorkerAnswersATaskItCannotRead: a task with a field this build does
// not know was terminated without a word, and its coordinator waited for
// a result forever (a review's older worker against a newer coordinator).
// Now a task of another build is refused naming both (the worker stops, as
// for any other build's task), and one of this build that does not decode
// is answered with an error the coordinator fails the run with.
func TestWorkerAnswersATaskItCannotRead(t *testing.T) {
	for _, tc := range []struct {
		version, want string
		stops         bool
	}{
		{"v9.9.9-future protocol 9", "comes from evolve v9.9.9-future protocol 9", true},
		{Version(), "is malformed for evolve", false},
	} {
		nc := connected(t, true)
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if _, _, err := createResources(ctx, js, Settings{AckWait: 30 * time.Second, MaxDeliver: 3}); err != nil {
			t.Fatal(err)
		}
		results, err := nc.SubscribeSync(resultPrefix + "r1")
		if err != nil {
			t.Fatal(err)
		}
		w := NewWorker(nc)
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		task := fmt.Sprintf(`{"id":"r1.s1.g1.a0","evolve_version":%q,"run":"r1","session":"s1","config_digest":"d",`+
			`"generation":1,"index":0,"agent":"r1/s1/a0","a_field_of_the_future":1}`, tc.version)
		if _, err := js.Publish(ctx, taskPrefix+"r1", []byte(task)); err != nil {
			t.Fatal(err)
		}
		msg, err := results.NextMsg(10 * time.Second)
		if err != nil {
			t.Fatalf("%s: no answer to the task: %v", tc.version, err)
		}
		if !strings.Contains(string(msg.Data), tc.want) {
			t.Errorf("%s: the answer %s; want one saying %q", tc.version, msg.Data, tc.want)
		}
		if tc.stops {
			if err := <-done; !errors.Is(err, ErrMismatch) {
				t.Errorf("%s: the worker ended with %v, want ErrMismatch", tc.version, err)
			}
		}
		cancel()
	}
}

// TestWorkerChecksTheMemoryOfItsSlots: a worker held the run's whole
// population against its machine's memory and refused, as a version
// mismatch, a run it could train; it now checks the agents it trains at
// once.
func TestWorkerChecksTheMemoryOfItsSlots(t *testing.T) {
	cfg, err := evo.ParseConfig([]byte(runtest.TinyConfig))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Population.Size, cfg.Tournament.Size = 16, 2
	cfg.Net.MLP.Hidden = []int{512, 512, 512} // about 0.5M weights an agent
	cfg.PPO.Net = cfg.Net
	text, err := cfg.TOML()
	if err != nil {
		t.Fatal(err)
	}
	digest, err := cfg.Digest()
	if err != nil {
		t.Fatal(err)
	}
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(270 << 20)) // a budget of 202 MiB
	task := taskMsg{Run: "r", Session: "s", Digest: digest}
	for _, tc := range []struct {
		slots int
		ok    bool
	}{{1, true}, {16, false}} {
		w := &Worker{Slots: tc.slots, parsed: map[string]*evo.Config{}, unfit: map[string]unfitError{}}
		_, err := w.checkedConfig(context.Background(), task, string(text))
		if ok := err == nil; ok != tc.ok || (!ok && !strings.Contains(err.Error(), "(-workers 16: 16 agents of the run at once)")) {
			t.Errorf("%d slots: %v; want accepted %v", tc.slots, err, tc.ok)
		}
	}
}

// TestWorkerGoesOnAfterARunItCannotTrain: a run too big for a worker's
// memory at its slots was refused as a version or run mismatch, and the
// worker stopped. It is a refusal of the worker's own, as a gym: run
// without -gym-python is: the run fails with ErrRefused saying why, and
// the worker goes on to train another run.
func TestWorkerGoesOnAfterARunItCannotTrain(t *testing.T) {
	nc := connected(t, true)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	w := NewWorker(nc)
	w.Slots = 16
	stopped := make(chan error, 1)
	go func() { stopped <- w.Run(ctx) }()

	big, tasks := oneTask(t)
	big.Population.Size, big.Tournament.Size = 16, 2
	big.Net.MLP.Hidden = []int{512, 512, 512} // about 0.5M weights an agent
	big.PPO.Net = big.Net
	pool := NewPool(nc, PoolOptions{})
	limit := debug.SetMemoryLimit(270 << 20) // a budget of 202 MiB
	_, err := pool.Train(ctx, big, tasks, func(int) {})
	debug.SetMemoryLimit(limit)
	pool.Close()
	if !errors.Is(err, ErrRefused) || !errors.Is(err, evo.ErrBadInput) || errors.Is(err, ErrMismatch) ||
		!strings.Contains(err.Error(), "this worker (-workers 16: 16 agents of the run at once) cannot train the run") {
		t.Fatalf("a run too big for the worker: %v; want ErrRefused, not ErrMismatch, saying why", err)
	}
	t.Log(err)

	cfg, tasks := oneTask(t)
	pool = NewPool(nc, PoolOptions{})
	defer pool.Close()
	if _, err := pool.Train(ctx, cfg, tasks, func(int) {}); err != nil {
		t.Fatalf("a run the worker can train, after the refusal: %v", err)
	}
	select {
	case err := <-stopped:
		t.Fatalf("the worker stopped: %v", err)
	default:
	}
}

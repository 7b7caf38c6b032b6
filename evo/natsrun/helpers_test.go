package natsrun_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evolverl/evolve/evo"
	"github.com/evolverl/evolve/evo/natsrun"
	"github.com/evolverl/evolve/internal/runtest"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// tiny returns runtest's tiny config for 3 generations with elite
// confirmation (which the coordinator plays), writing to a new temporary
// directory.
func tiny(t *testing.T) evo.Config {
	t.Helper()
	cfg, err := evo.ParseConfig([]byte(runtest.TinyConfig))
	if err != nil {
		t.Fatal(err)
	}
	cfg.OutDir = filepath.Join(t.TempDir(), "run")
	cfg.Population.MaxSteps = 3 * 3 * 256 // 3 generations
	cfg.Population.EliteEpisodes = 3
	return cfg
}

// writeConfig writes cfg to a new temporary file and returns its path.
func writeConfig(t *testing.T, cfg evo.Config) string {
	t.Helper()
	text, err := cfg.TOML()
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, "config.toml", text)
}

// writeFile writes text to name in a new temporary directory and returns
// its path.
func writeFile(t *testing.T, name string, text []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, text, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// testServer is an embedded JetStream server on a random loopback port,
// storing in a temporary directory.
type testServer struct {
	t    *testing.T
	srv  *server.Server
	opts server.Options
}

func startServer(t *testing.T) *testServer {
	t.Helper()
	return startServerWith(t, server.Options{})
}

// startServerWith starts a server with opts (for users and passwords)
// on a random loopback port.
func startServerWith(t *testing.T, opts server.Options) *testServer {
	t.Helper()
	opts.Host, opts.Port, opts.JetStream, opts.StoreDir, opts.NoLog, opts.NoSigs = "127.0.0.1", -1, true, t.TempDir(), true, true
	s := &testServer{t: t, opts: opts}
	s.start()
	t.Cleanup(func() { s.srv.Shutdown(); s.srv.WaitForShutdown() })
	return s
}

func (s *testServer) start() {
	s.t.Helper()
	srv, err := server.NewServer(&s.opts)
	if err != nil {
		s.t.Fatal(err)
	}
	srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		s.t.Fatal("the NATS server did not start")
	}
	s.srv = srv
	s.opts.Port = srv.Addr().(*net.TCPAddr).Port
}

// restart stops the server and starts it again on the same port and
// store.
func (s *testServer) restart() {
	s.srv.Shutdown()
	s.srv.WaitForShutdown()
	s.start()
}

// url is the server's URL, with the user and password it requires.
func (s *testServer) url() string {
	if s.opts.Username == "" {
		return s.srv.ClientURL()
	}
	return fmt.Sprintf("nats://%s:%s@127.0.0.1:%d", s.opts.Username, s.opts.Password, s.opts.Port)
}

// connect opens a connection that retries for as long as a test lasts.
func (s *testServer) connect(t *testing.T) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(s.url(), nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// startWorkers runs n in-process workers (each with slots slots) until the
// test ends; edit, if not nil, adjusts each before it starts.
func startWorkers(t *testing.T, s *testServer, n, slots int, edit func(*natsrun.Worker)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	for range n {
		w := natsrun.NewWorker(s.connect(t))
		w.Slots = slots
		w.Log = testLog(t)
		if edit != nil {
			edit(w)
		}
		wg.Go(func() {
			if err := w.Run(ctx); err != nil {
				t.Logf("worker: %v", err)
			}
		})
	}
}

// settings are short delivery settings so that redelivery tests are quick.
var settings = natsrun.Settings{AckWait: time.Second, MaxDeliver: 3}

// runNATS trains cfg through a Pool on s to its end, or until stop returns
// true after a generation (which cancels the run).
func runNATS(t *testing.T, s *testServer, cfg evo.Config, resume bool, stop func(evo.GenerationReport) bool) (evo.Summary, error) {
	t.Helper()
	pool := natsrun.NewPool(s.connect(t), natsrun.PoolOptions{Settings: settings, Log: testLog(t)})
	defer pool.Close()
	return train(t, cfg, evo.Options{Pool: pool}, resume, stop)
}

// train runs cfg (or resumes cfg.OutDir) with opts.
func train(t *testing.T, cfg evo.Config, opts evo.Options, resume bool, stop func(evo.GenerationReport) bool) (evo.Summary, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if stop != nil {
		opts.OnGeneration = func(r evo.GenerationReport) {
			if stop(r) {
				cancel()
			}
		}
	}
	var tr *evo.Trainer
	var err error
	if resume {
		tr, err = evo.Resume(cfg.OutDir, opts)
	} else {
		tr, err = evo.New(cfg, opts)
	}
	if err != nil {
		t.Fatal(err)
	}
	return tr.Run(ctx)
}

// local trains tiny(t) in this process and returns its directory.
func local(t *testing.T) string {
	t.Helper()
	return localRun(t, tiny(t))
}

// localRun trains cfg in this process and returns its directory.
func localRun(t *testing.T, cfg evo.Config) string {
	t.Helper()
	if _, err := train(t, cfg, evo.Options{Workers: 1}, false, nil); err != nil {
		t.Fatal(err)
	}
	return cfg.OutDir
}

// sameRun fails unless runs a and b wrote the same metrics (but for
// wall_s) and the same elite file.
func sameRun(t *testing.T, a, b string) { runtest.SameRun(t, a, b) }

// testLog logs to t.
func testLog(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(logWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type logWriter struct{ t *testing.T }

func (w logWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

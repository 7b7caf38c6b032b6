package natsrun_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/evolverl/evolve/cli"
	"github.com/evolverl/evolve/evo"
	"github.com/evolverl/evolve/evo/natsrun"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// The test binary doubles as worker processes, as cli's tests do: with
// EVOLVE_TEST_MAIN=1 it is the evolve command with EVOLVE_TEST_ARGS; with
// EVOLVE_TEST_STALL set it is a worker that stalls in its first task until
// it is killed.
func TestMain(m *testing.M) {
	if os.Getenv("EVOLVE_TEST_MAIN") == "1" {
		os.Args = append([]string{"evolve"}, strings.Fields(os.Getenv("EVOLVE_TEST_ARGS"))...)
		os.Exit(cli.Main())
	}
	if url := os.Getenv("EVOLVE_TEST_STALL"); url != "" {
		nc, err := nats.Connect(url)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		w := natsrun.NewWorker(nc)
		w.OnTask = func(g, i int) {
			fmt.Fprintf(os.Stderr, "STALLED generation %d agent %d\n", g, i)
			select {}
		}
		w.Run(context.Background())
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// process starts the test binary with env added and returns it and a channel of
// its stderr lines; it is killed when the test ends.
func process(t *testing.T, env ...string) (*exec.Cmd, <-chan string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env...)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1024)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
		close(lines)
	}()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, lines
}

// waitLine waits for a line containing want.
func waitLine(t *testing.T, lines <-chan string, want string) string {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the process ended before printing %q", want)
			}
			if strings.Contains(l, want) {
				return l
			}
		case <-timeout:
			t.Fatalf("no line with %q within 30 s", want)
		}
	}
}

// TestWorkerProcessKilledMidTask runs the coordinator as `evolve -config
// -nats` and workers as processes: one stalls in its first task and is
// killed with SIGKILL, an `evolve worker` process does the rest, the killed
// task included after its ack wait. The run is the local one.
func TestWorkerProcessKilledMidTask(t *testing.T) {
	want := local(t)
	s := startServer(t)
	cfg := tiny(t)
	cfgPath := writeConfig(t, cfg)
	out := cfg.OutDir
	var stdout, stderr bytes.Buffer
	done := make(chan int)
	go func() {
		done <- cli.Run(context.Background(), []string{"-config", cfgPath, "-out", out, "-quiet",
			"-nats", s.url(), "-nats-ack-wait", "1s"}, &stdout, &stderr)
	}()
	stall, lines := process(t, "EVOLVE_TEST_STALL="+s.url())
	t.Log(waitLine(t, lines, "STALLED"))
	if err := stall.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	stall.Wait()
	_, wl := process(t, "EVOLVE_TEST_MAIN=1", "EVOLVE_TEST_ARGS=worker -nats "+s.url()+" -workers 2")
	var mu sync.Mutex
	var workerLog strings.Builder
	go func() {
		for l := range wl {
			mu.Lock()
			workerLog.WriteString(l + "\n")
			mu.Unlock()
		}
	}()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("evolve -nats exited %d: %s", code, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the run did not end within 60 s")
	}
	sameRun(t, want, out)
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(workerLog.String(), "msg=training") {
		t.Errorf("the evolve worker process trained nothing:\n%s", workerLog.String())
	}
}

// TestWorkerRefusesAnotherVersion: `evolve worker` exits 2 naming both
// versions when a task comes from another build.
func TestWorkerRefusesAnotherVersion(t *testing.T) {
	s := startServer(t)
	pool := natsrun.NewPool(s.connect(t), natsrun.PoolOptions{Settings: settings, Version: "v9.9.9 protocol 1"})
	defer pool.Close()
	errc := make(chan error, 1)
	go func() {
		_, err := train(t, tiny(t), evo.Options{Pool: pool}, false, nil)
		errc <- err
	}()
	cmd, lines := process(t, "EVOLVE_TEST_MAIN=1", "EVOLVE_TEST_ARGS=worker -nats "+s.url()+" -workers 1")
	var log strings.Builder
	for l := range lines {
		log.WriteString(l + "\n")
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(log.String(), "v9.9.9") {
		t.Fatalf("worker: %v, want exit status 2 and a message naming v9.9.9:\n%s", err, log.String())
	}
	natsrun.ErrorWithin(t, errc, 30*time.Second, "the coordinator", "v9.9.9")
}

// TestCoordinatorProcessKilledResumes runs `evolve -config -nats` as a
// process on a server that wants a user and a password (given in the URL),
// kills it with SIGKILL while generation 2 trains, and continues with
// `evolve -resume DIR -nats URL`: the run ends as the local one.
func TestCoordinatorProcessKilledResumes(t *testing.T) {
	want := local(t)
	s := startServerWith(t, server.Options{Username: "evolve", Password: "s3cret"})
	startWorkers(t, s, 2, 1, func(w *natsrun.Worker) {
		w.OnTask = func(g, i int) {
			if g == 2 {
				time.Sleep(300 * time.Millisecond) // so that the kill lands mid-generation
			}
		}
	})
	cfg := tiny(t)
	cfgPath := writeConfig(t, cfg)
	nflags := "-nats " + s.url() + " -nats-ack-wait 1s -quiet"
	coord, _ := process(t, "EVOLVE_TEST_MAIN=1", "EVOLVE_TEST_ARGS=-config "+cfgPath+" -out "+cfg.OutDir+" "+nflags)
	latest := filepath.Join(cfg.OutDir, "checkpoints", "latest")
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, _ := os.ReadFile(latest); strings.TrimSpace(string(b)) == "gen-000001" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("generation 1 was not checkpointed within 30 s")
		}
		time.Sleep(2 * time.Millisecond)
	}
	if err := coord.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	coord.Wait()
	var stdout, stderr bytes.Buffer
	if code := cli.Run(context.Background(), append([]string{"-resume", cfg.OutDir}, strings.Fields(nflags)...), &stdout, &stderr); code != 0 {
		t.Fatalf("evolve -resume -nats exited %d: %s", code, stderr.String())
	}
	sameRun(t, want, cfg.OutDir)
}

// TestWorkerProcessStopsOnSignal: an `evolve worker` process stopped by
// SIGTERM or SIGINT while it trains exits 143 or 130, as the run command
// does, saying which signal stopped it, not as a failure.
func TestWorkerProcessStopsOnSignal(t *testing.T) {
	s := startServer(t)
	cfg := tiny(t)
	cfg.Population.MaxSteps = 1000 * 3 * 256 // longer than the test
	var stopped atomic.Bool
	done := make(chan error, 1)
	go func() {
		_, err := runNATS(t, s, cfg, false, func(evo.GenerationReport) bool { return stopped.Load() })
		done <- err
	}()
	defer func() {
		stopped.Store(true)
		startWorkers(t, s, 1, 1, nil) // so that the run reaches the end of a generation
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("the coordinator did not stop within 30 s")
		}
	}()
	for _, c := range []struct {
		sig  syscall.Signal
		code int
		name string
	}{{syscall.SIGTERM, 143, "SIGTERM"}, {syscall.SIGINT, 130, "SIGINT"}} {
		cmd, lines := process(t, "EVOLVE_TEST_MAIN=1", "EVOLVE_TEST_ARGS=worker -nats "+s.url()+" -workers 1")
		waitLine(t, lines, "msg=training")
		if err := cmd.Process.Signal(c.sig); err != nil {
			t.Fatal(err)
		}
		var log strings.Builder
		for l := range lines {
			log.WriteString(l + "\n")
		}
		err := cmd.Wait()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != c.code {
			t.Errorf("%s: worker: %v, want exit status %d:\n%s", c.name, err, c.code, log.String())
		}
		if want := "evolve worker: stopped by " + c.name + ";"; !strings.Contains(log.String(), want) {
			t.Errorf("%s: no line %q:\n%s", c.name, want, log.String())
		}
	}
}

package natsrun_test

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/evolverl/evolve/evo"
	"github.com/evolverl/evolve/evo/natsrun"
	"github.com/nats-io/nats.go"
)

// TestSameResultsAsLocal trains the tiny run locally and through NATS with
// one worker and with two workers of two slots each: metrics and elite
// are the same bytes.
func TestSameResultsAsLocal(t *testing.T) {
	want := local(t)
	for _, c := range []struct{ workers, slots int }{{1, 1}, {2, 2}} {
		s := startServer(t)
		startWorkers(t, s, c.workers, c.slots, nil)
		cfg := tiny(t)
		if _, err := runNATS(t, s, cfg, false, nil); err != nil {
			t.Fatalf("%d workers: %v", c.workers, err)
		}
		sameRun(t, want, cfg.OutDir)
	}
}

// TestDuplicateResultsAppliedOnce publishes every result a second time
// (without the task's message id, so the stream keeps both): the run is
// still the local one.
func TestDuplicateResultsAppliedOnce(t *testing.T) {
	want := local(t)
	s := startServer(t)
	startWorkers(t, s, 1, 2, nil)
	nc := s.connect(t)
	var dups atomic.Int64
	sub, err := nc.Subscribe("evolve.results.>", func(m *nats.Msg) {
		if m.Header.Get("Evolve-Test-Copy") != "" {
			return
		}
		c := nats.NewMsg(m.Subject)
		c.Data = m.Data
		c.Header.Set("Evolve-Test-Copy", "1")
		if nc.PublishMsg(c) == nil {
			dups.Add(1)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	cfg := tiny(t)
	if _, err := runNATS(t, s, cfg, false, nil); err != nil {
		t.Fatal(err)
	}
	if dups.Load() == 0 {
		t.Fatal("no result was duplicated")
	}
	sameRun(t, want, cfg.OutDir)
}

// TestResumeThroughNATS stops the coordinator after its first generation
// and resumes the run through NATS: it ends as the local run.
func TestResumeThroughNATS(t *testing.T) {
	want := local(t)
	s := startServer(t)
	startWorkers(t, s, 2, 1, nil)
	cfg := tiny(t)
	if _, err := runNATS(t, s, cfg, false, func(r evo.GenerationReport) bool { return r.Generation == 1 }); err == nil {
		t.Fatal("the stopped run returned no error")
	}
	if _, err := runNATS(t, s, cfg, true, nil); err != nil {
		t.Fatal(err)
	}
	sameRun(t, want, cfg.OutDir)
}

// TestVersionMismatchRefused: a worker of another evolve version refuses
// the task and says so; the coordinator fails with both versions named.
func TestVersionMismatchRefused(t *testing.T) {
	s := startServer(t)
	startWorkers(t, s, 1, 1, func(w *natsrun.Worker) { w.Version = "v0.0.0-other protocol 1" })
	cfg := tiny(t)
	_, err := runNATS(t, s, cfg, false, nil)
	if !errors.Is(err, natsrun.ErrMismatch) || !strings.Contains(err.Error(), "v0.0.0-other") || !strings.Contains(err.Error(), natsrun.Version()) {
		t.Fatalf("err = %v; want ErrMismatch naming both versions", err)
	}
}

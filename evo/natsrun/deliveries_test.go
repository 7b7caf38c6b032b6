package natsrun

import (
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// resultDelivery is a delivery of a result message: its data and stream
// sequence, and whether it was acked (the rest of jetstream.Msg is unused).
type resultDelivery struct {
	jetstream.Msg
	data  []byte
	seq   uint64
	acked bool
}

func (d *resultDelivery) Data() []byte    { return d.data }
func (d *resultDelivery) Subject() string { return resultPrefix + "run" }
func (d *resultDelivery) Ack() error      { d.acked = true; return nil }
func (d *resultDelivery) Metadata() (*jetstream.MsgMetadata, error) {
	return &jetstream.MsgMetadata{Sequence: jetstream.SequencePair{Stream: d.seq}}, nil
}

// TestAcceptLeavesARedeliveryOfTheResultInHand: a second delivery of the
// result being fetched (the results consumer's ack wait ran out) is left
// unsettled, since an ack of it deletes the result that the first
// delivery's fetch may still need back; a second result of the task (the
// task was trained twice) is acked and dropped.
func TestAcceptLeavesARedeliveryOfTheResultInHand(t *testing.T) {
	p := &Pool{log: slog.New(slog.NewTextHandler(io.Discard, nil)), version: "v", digest: "d"}
	pd := &pending{msg: taskMsg{ID: "run.s.g0.a0"}}
	byID := map[string]*pending{pd.msg.ID: pd}
	delivery := func(seq uint64, agent string) *resultDelivery {
		b, err := resultMsg{Task: pd.msg.ID, Worker: "w", Version: "v", Digest: "d", Agent: agent}.encode()
		if err != nil {
			t.Fatal(err)
		}
		return &resultDelivery{data: b, seq: seq}
	}
	first := delivery(7, "run/s/g0/a0/out-1")
	got, res, err := p.accept(t.Context(), first, byID)
	if err != nil || got != pd || first.acked {
		t.Fatalf("the first delivery: pending %v, error %v, acked %v", got, err, first.acked)
	}
	pd.done, pd.agent, pd.result = true, res.Agent, streamSeq(first) // as collect does

	again := delivery(7, "run/s/g0/a0/out-1")
	if got, _, err := p.accept(t.Context(), again, byID); got != nil || err != nil || again.acked {
		t.Errorf("a redelivery of the result in hand: pending %v, error %v, acked %v (want none, none, false)", got, err, again.acked)
	}
	other := delivery(9, "run/s/g0/a0/out-1")
	if got, _, err := p.accept(t.Context(), other, byID); got != nil || err != nil || !other.acked {
		t.Errorf("another result of the task: pending %v, error %v, acked %v (want none, none, true)", got, err, other.acked)
	}
}

// taskDelivery is a delivery of a task that counts its InProgress reports.
type taskDelivery struct {
	jetstream.Msg
	reports atomic.Int32
}

func (d *taskDelivery) InProgress() error { d.reports.Add(1); return nil }

// TestKeepAliveReportsAtOnce: a worker tells the server that a task is in
// hand as it starts on it, not a third of the ack wait later (reading the
// run's config first took long enough for a short ack wait to run out).
func TestKeepAliveReportsAtOnce(t *testing.T) {
	d := &taskDelivery{}
	stop := keepAlive(d, time.Hour)
	defer stop()
	if n := d.reports.Load(); n != 1 {
		t.Errorf("%d InProgress reports as keepAlive started, want 1", n)
	}
}

// TestTrainFailsWhenItsResultsConsumerGoes: a generation whose results
// consumer is removed from the server fails saying so, rather than waiting
// for ever for results it can no longer receive.
func TestTrainFailsWhenItsResultsConsumerGoes(t *testing.T) {
	nc := connected(t, true)
	p := NewPool(nc, PoolOptions{})
	defer p.Close()
	cfg, tasks := oneTask(t)
	errc := make(chan error, 1)
	go func() {
		_, err := p.Train(t.Context(), cfg, tasks, func(int) {})
		errc <- err
	}()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	deleted := false
	for start := time.Now(); !deleted && time.Since(start) < 10*time.Second; time.Sleep(20 * time.Millisecond) {
		stream, err := js.Stream(t.Context(), ResultStream)
		if err != nil {
			continue // not made yet
		}
		names := stream.ConsumerNames(t.Context())
		for name := range names.Name() {
			if strings.HasPrefix(name, "run-") {
				if err := js.DeleteConsumer(t.Context(), ResultStream, name); err != nil {
					t.Fatal(err)
				}
				deleted = true
			}
		}
	}
	if !deleted {
		t.Fatal("no results consumer within 10 s")
	}
	// A removal that races the consumer's creation fails the creation.
	ErrorWithin(t, errc, 20*time.Second, "Train", "results consumer on the NATS server stopped", "create the run's results consumer")
}

// ErrorWithin waits up to d for the error of what on errc and fails the
// test unless it comes and holds one of want; exported for the
// natsrun_test package.
func ErrorWithin(t *testing.T, errc <-chan error, d time.Duration, what string, want ...string) {
	t.Helper()
	select {
	case err := <-errc:
		if err == nil || !slices.ContainsFunc(want, func(w string) bool { return strings.Contains(err.Error(), w) }) {
			t.Fatalf("%s: %v; want an error saying one of %q", what, err, want)
		}
	case <-time.After(d):
		t.Fatalf("%s did not fail within %v", what, d)
	}
}

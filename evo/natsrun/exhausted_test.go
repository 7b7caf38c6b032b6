package natsrun

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestMissedAdvisoryFailsTheRun: a coordinator that misses the server's
// max-deliveries advisory (it is not stored: a coordinator disconnected
// when it came) waited for that task forever. Now a generation that hears
// nothing asks the server, finds the task undeliverable and fails the run
// as the advisory would have.
func TestMissedAdvisoryFailsTheRun(t *testing.T) {
	defer func(d time.Duration, s string) { waitNote, maxDeliveriesAdvisory = d, s }(waitNote, maxDeliveriesAdvisory)
	waitNote, maxDeliveriesAdvisory = 200*time.Millisecond, "nobody.listens."
	nc := connected(t, true)
	p := NewPool(nc, PoolOptions{Settings: Settings{AckWait: 300 * time.Millisecond, MaxDeliver: 2}})
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// A "worker" that takes every task and never answers.
	go func() {
		js, _ := jetstream.New(nc)
		for ctx.Err() == nil {
			cons, err := js.Consumer(ctx, TaskStream, WorkerConsumer)
			if err != nil {
				time.Sleep(20 * time.Millisecond)
				continue
			}
			cons.Next(jetstream.FetchMaxWait(200 * time.Millisecond))
		}
	}()
	cfg, tasks := oneTask(t)
	start := time.Now()
	_, err := p.Train(ctx, cfg, tasks, func(int) {})
	if err == nil || !strings.Contains(err.Error(), "agent 0: task ") || !strings.Contains(err.Error(), "was delivered 2 times without a result") ||
		!errors.Is(err, ErrUndelivered) {
		t.Fatalf("err = %v; want the task delivered 2 times without a result", err)
	}
	t.Logf("failed after %v", time.Since(start).Round(time.Millisecond))
}

// TestExhaustedWaitsForTasksInFlight: a task a worker holds, or one no
// worker has taken yet, is not taken for undeliverable; the note of a
// generation without results asks for workers only while no worker holds
// a task.
func TestExhaustedWaitsForTasksInFlight(t *testing.T) {
	defer func(d time.Duration) { waitNote = d }(waitNote)
	waitNote = 100 * time.Millisecond
	nc := connected(t, true)
	var notes LockedBuffer
	p := NewPool(nc, PoolOptions{Settings: Settings{AckWait: time.Minute, MaxDeliver: 2},
		Log: slog.New(slog.NewTextHandler(&notes, nil))})
	defer p.Close()
	cfg, tasks := oneTask(t)
	// No worker: the task stays pending until the context ends.
	ctx, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond)
	defer cancel()
	if _, err := p.Train(ctx, cfg, tasks, func(int) {}); err == nil || strings.Contains(err.Error(), "delivered") {
		t.Errorf("a pending task: %v; want the context's end", err)
	}
	if !strings.Contains(notes.String(), "are workers running on this server") {
		t.Errorf("no worker: the notes do not ask for workers:\n%s", notes.String())
	}
	// A worker holds the next generation's task (and the first's, left in
	// the queue): in flight, not undeliverable.
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	held := make(chan struct{})
	go func() {
		for {
			cons, err := js.Consumer(context.Background(), TaskStream, WorkerConsumer)
			if err == nil {
				if _, err := cons.Fetch(10, jetstream.FetchMaxWait(2*time.Second)); err == nil {
					close(held)
					return
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	tasks[0].Generation = 2
	ctx2, cancel2 := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel2()
	if _, err := p.Train(ctx2, cfg, tasks, func(int) {}); err == nil || strings.Contains(err.Error(), "delivered") {
		t.Errorf("a task in a worker's hands: %v; want the context's end", err)
	}
	<-held
	if !strings.Contains(notes.String(), "workers are training 2 tasks of the server's runs") {
		t.Errorf("tasks in a worker's hands: the notes do not say so:\n%s", notes.String())
	}
}

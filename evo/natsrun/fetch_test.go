package natsrun

import (
	"context"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestNextTaskKeepsALateDelivery: a task the server sends just before the
// worker's request for it ends is taken, however late it arrives, not left
// to wait the ack wait for its redelivery. A proxy that holds back what the
// server sends by 1.5 s stands for a loaded machine: the worker's request
// once ended 200 ms (then, with Fetch's margin, 1 s) after the server's,
// and a task sent in between was lost to every worker (a CI run stalled
// for 30 s a time).
func TestNextTaskKeepsALateDelivery(t *testing.T) {
	defer func(d time.Duration) { taskPullExpiry = d }(taskPullExpiry)
	taskPullExpiry = 4 * time.Second // heartbeats every 2 s: the proxy's delay misses none
	js, w := slowWorker(t, 1500*time.Millisecond)
	ctx := context.Background()
	type next struct {
		msg jetstream.Msg
		err error
	}
	got := make(chan next, 1)
	start := time.Now()
	go func() {
		m, err := w.nextTask(ctx)
		got <- next{m, err}
	}()
	// Sent 0.2 s before the request ends on the server: the server sends it
	// at once, and it reaches the worker 1.3 s after that end (0.3 s after
	// Fetch, with its one-second margin, stopped listening).
	time.Sleep(time.Until(start.Add(taskPullExpiry - 200*time.Millisecond)))
	if _, err := js.Publish(ctx, taskPrefix+"late", []byte("task")); err != nil {
		t.Fatal(err)
	}
	if late := time.Since(start); late > taskPullExpiry-50*time.Millisecond {
		t.Skipf("the task was stored %v after the request, too close to its end to test (a loaded machine)", late.Round(time.Millisecond))
	}
	select {
	case n := <-got:
		if n.err != nil {
			t.Fatalf("no task after %v: %v", time.Since(start).Round(time.Millisecond), n.err)
		}
		if md, err := n.msg.Metadata(); err != nil || md.NumDelivered != 1 {
			t.Errorf("the task came in delivery %+v (%v), want its first", md, err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the late task did not come within 20 s: it was lost until the ack wait")
	}
}

// TestNextTaskWaitsPastItsRequests: a worker waiting longer than one pull
// request lives asks again, and takes a task that comes after several.
func TestNextTaskWaitsPastItsRequests(t *testing.T) {
	defer func(d time.Duration) { taskPullExpiry = d }(taskPullExpiry)
	taskPullExpiry = time.Second
	js, w := slowWorker(t, 0)
	go func() {
		time.Sleep(2500 * time.Millisecond)
		js.Publish(context.Background(), taskPrefix+"later", []byte("task"))
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := w.nextTask(ctx); err != nil {
		t.Fatalf("no task: %v", err)
	}
}

// TestNextTaskHandsBackATaskAsItStops: a task on its way to a worker whose
// wait is cancelled goes back to the queue at once, for the next worker.
// The test waits for the server's side of each step (the worker's request
// waiting, the task sent) rather than sleeping: a CI run under load once
// cancelled before the request reached the server.
func TestNextTaskHandsBackATaskAsItStops(t *testing.T) {
	const delay = 3 * time.Second
	js, w := slowWorker(t, delay)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := w.nextTask(ctx)
		errc <- err
	}()
	_, cons, err := openResources(context.Background(), js)
	if err != nil {
		t.Fatal(err)
	}
	waitConsumer(t, cons, "the worker's request waiting", func(i *jetstream.ConsumerInfo) bool { return i.NumWaiting > 0 })
	if _, err := js.Publish(context.Background(), taskPrefix+"inflight", []byte("task")); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	waitConsumer(t, cons, "the task sent", func(i *jetstream.ConsumerInfo) bool { return i.NumAckPending == 1 })
	if late := time.Since(sent); late > delay/2 {
		t.Skipf("the server took %v to send the task, too close to the proxy's %v to test (a loaded machine)", late.Round(time.Millisecond), delay)
	}
	cancel() // while the task is in the proxy
	if err := <-errc; err == nil {
		t.Fatal("nextTask took the task after its context ended")
	}
	next, ncancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer ncancel()
	msg, err := (&Worker{cons: cons}).nextTask(next)
	if err != nil {
		t.Fatalf("the task did not come back within 10 s (%v): it waits for the ack wait", err)
	}
	if md, err := msg.Metadata(); err != nil || md.NumDelivered != 2 {
		t.Errorf("the task came back in delivery %+v (%v), want its second", md, err)
	}
}

// waitConsumer polls cons's info until ok holds, failing the test after
// 10 s with what it waited for.
func waitConsumer(t *testing.T, cons jetstream.Consumer, what string, ok func(*jetstream.ConsumerInfo) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, err := cons.Info(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if ok(info) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no sign of %s within 10 s: %+v", what, info)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// slowWorker starts a server with the work queue (ack wait 1 min) and
// returns a direct connection's JetStream and a worker connected through
// a proxy that delays what the server sends by delay.
func slowWorker(t *testing.T, delay time.Duration) (jetstream.JetStream, *Worker) {
	t.Helper()
	s := embedded(t, true)
	js := jetStreamAt(t, s.ClientURL())
	ctx := context.Background()
	if _, _, err := createResources(ctx, js, Settings{AckWait: time.Minute, MaxDeliver: 5}); err != nil {
		t.Fatal(err)
	}
	proxy, setDelay := delayingProxy(t, s.Addr().String())
	slow := jetStreamAt(t, "nats://"+proxy)
	_, cons, err := openResources(ctx, slow)
	if err != nil {
		t.Fatal(err)
	}
	setDelay(delay)
	return js, &Worker{cons: cons}
}

// jetStreamAt connects to url, closing the connection when the test ends.
func jetStreamAt(t *testing.T, url string, opts ...nats.Option) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// delayingProxy forwards TCP connections to addr and returns its own
// address; what the server sends reaches the client by the delay set (at
// first none) later.
func delayingProxy(t *testing.T, addr string) (string, func(time.Duration)) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var delay atomic.Int64
	go func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", addr)
			if err != nil {
				client.Close()
				return
			}
			go io.Copy(server, client)
			go delayed(client, server, &delay)
		}
	}()
	return ln.Addr().String(), func(d time.Duration) { delay.Store(int64(d)) }
}

// delayed copies from src to dst, each read written the delay after it was
// read.
func delayed(dst, src net.Conn, delay *atomic.Int64) {
	type chunk struct {
		at time.Time
		b  []byte
	}
	chunks := make(chan chunk, 1024)
	go func() {
		defer close(chunks)
		for {
			b := make([]byte, 32<<10)
			n, err := src.Read(b)
			if n > 0 {
				chunks <- chunk{time.Now().Add(time.Duration(delay.Load())), b[:n]}
			}
			if err != nil {
				return
			}
		}
	}()
	defer dst.Close()
	for c := range chunks {
		time.Sleep(time.Until(c.at))
		if _, err := dst.Write(c.b); err != nil {
			return
		}
	}
}

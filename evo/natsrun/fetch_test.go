package natsrun

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestNextTaskKeepsALateDelivery: a task the server sends just before the
// worker's request for it expires is taken, however late it arrives, and
// not left to wait the ack wait for its redelivery. A proxy that holds
// back what the server sends by 500 ms stands for a loaded machine: the
// worker's request once ended 200 ms after the server's, and a task sent
// in between was lost to the worker (its run stalled for 30 s a time).
func TestNextTaskKeepsALateDelivery(t *testing.T) {
	s := embedded(t, true)
	js := jetStreamAt(t, s.ClientURL())
	ctx := context.Background()
	if _, _, err := createResources(ctx, js, Settings{AckWait: time.Minute, MaxDeliver: 5}); err != nil {
		t.Fatal(err)
	}
	slow := jetStreamAt(t, "nats://"+delayingProxy(t, s.Addr().String(), 500*time.Millisecond), nats.Timeout(5*time.Second))
	_, cons, err := openResources(ctx, slow)
	if err != nil {
		t.Fatal(err)
	}
	w := &Worker{cons: cons}

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
	// Sent 0.3 s before the request's end on the server: the server sends
	// it at once, and it reaches the worker 0.2 s after that end.
	time.Sleep(time.Until(start.Add(pollWait - 300*time.Millisecond)))
	if _, err := js.Publish(ctx, taskPrefix+"late", []byte("task")); err != nil {
		t.Fatal(err)
	}
	if late := time.Since(start); late > pollWait-100*time.Millisecond {
		t.Skipf("the task was stored %v after the request, too close to its end to test (a loaded machine)", late.Round(time.Millisecond))
	}
	select {
	case n := <-got:
		if n.msg == nil {
			t.Fatalf("no task after %v (error %v): the late delivery was lost", time.Since(start).Round(time.Millisecond), n.err)
		}
		if md, err := n.msg.Metadata(); err != nil || md.NumDelivered != 1 {
			t.Errorf("the task came in delivery %+v (%v), want its first", md, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("nextTask did not return within 10 s")
	}
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
// address; what the server sends reaches the client delay later.
func delayingProxy(t *testing.T, addr string, delay time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
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
			go delayed(client, server, delay)
		}
	}()
	return ln.Addr().String()
}

// delayed copies from src to dst, each read written delay after it was read.
func delayed(dst, src net.Conn, delay time.Duration) {
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
				chunks <- chunk{time.Now(), b[:n]}
			}
			if err != nil {
				return
			}
		}
	}()
	defer dst.Close()
	for c := range chunks {
		time.Sleep(time.Until(c.at.Add(delay)))
		if _, err := dst.Write(c.b); err != nil {
			return
		}
	}
}

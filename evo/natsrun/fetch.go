package natsrun

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// pollWait is how long one request for a task waits on the server.
const pollWait = 2 * time.Second

// nextTask waits up to pollWait for a task; it returns nil and no error when
// none came.
//
// The request's end on the server ends the wait, and the client listens a
// second longer (nats.go's margin): a task the server sends in the request's
// last moment may reach a loaded worker after it. A client-side deadline
// (FetchContext) ended the request 10 % before its own end, and a task sent
// in those 200 ms arrived after the worker stopped listening: it was lost
// to every worker until the ack wait redelivered it (30 s by default). A
// task that arrives after ctx ended goes back to the queue at once.
func (w *Worker) nextTask(ctx context.Context) (jetstream.Msg, error) {
	batch, err := w.cons.Fetch(1, jetstream.FetchMaxWait(pollWait))
	if err != nil {
		return nil, err
	}
	select {
	case msg, ok := <-batch.Messages():
		if ok {
			return msg, nil
		}
		return nil, batch.Error()
	case <-ctx.Done():
		go func() {
			for msg := range batch.Messages() {
				msg.Nak()
			}
		}()
		return nil, ctx.Err()
	}
}

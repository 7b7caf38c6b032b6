package natsrun

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// taskPullExpiry is how long one pull request for a task lives on the
// server before the client sends the next (a variable for tests).
var taskPullExpiry = 30 * time.Second

// nextTask waits for a task until ctx ends.
//
// It keeps one subscription while it waits and asks for one task at a
// time; when a request ends on the server, its end comes after anything it
// delivered (the server sends in order), and only then is the next one
// sent. So a task is never sent to a client that has stopped listening:
// a pull that ended on the client before it ended on the server (as
// Fetch's does, by up to a second) lost a task sent in between to every
// worker until the ack wait redelivered it (30 s by default). A task
// delivered as ctx ends goes back to the queue at once: the subscription
// is drained, not dropped.
func (w *Worker) nextTask(ctx context.Context) (jetstream.Msg, error) {
	it, err := w.cons.Messages(jetstream.PullMaxMessages(1), jetstream.StopAfter(1), jetstream.PullExpiry(taskPullExpiry))
	if err != nil {
		return nil, err
	}
	for {
		msg, err := it.Next(jetstream.NextContext(ctx))
		switch {
		case err == nil:
			it.Stop() // StopAfter(1): nothing more was asked for
			return msg, nil
		case errors.Is(err, jetstream.ErrNoHeartbeat) && ctx.Err() == nil:
			// The server was silent for two heartbeats (a lost
			// connection, say): the iterator has asked again.
			continue
		}
		return nil, handBack(it, err)
	}
}

// handBack drains the iterator it, whose wait ended with err, and naks any
// task that was on its way; it returns err.
func handBack(it jetstream.MessagesContext, err error) error {
	it.Drain()
	for {
		late, lerr := it.Next(jetstream.NextMaxWait(5 * time.Second))
		if lerr != nil {
			break
		}
		late.Nak()
	}
	return err
}

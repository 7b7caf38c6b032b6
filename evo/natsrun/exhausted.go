package natsrun

import (
	"context"
	"fmt"
	"time"
)

// maxDeliveriesAdvisory is the subject prefix of the server's advisory for
// a message delivered max_deliver times without an ack (a variable so
// that a test can make the coordinator miss it).
var maxDeliveriesAdvisory = "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES."

// exhausted returns a task of order, without a result, that the work
// queue will not deliver again: it is still in TaskStream (a task is
// removed when a worker acks it, after storing its result) while the
// workers' consumer has nothing pending and nothing in flight. The
// coordinator asks when a generation has heard nothing for a while: the
// max-deliveries advisory, which fails such a run at once, is not stored,
// and a coordinator disconnected when it was sent would wait forever; it
// fails the run when it finds the same task twice in a row. It
// returns nil when the server cannot tell, or while any task of any run
// on the server is pending or in a worker's hands; inHands is how many
// tasks (of every run on the server) workers hold, -1 if unknown.
func (p *Pool) exhausted(ctx context.Context, order []*pending) (pd *pending, inHands int) {
	if p.queue == nil {
		return nil, -1
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	info, err := p.queue.Info(ctx)
	if err != nil {
		return nil, -1
	}
	if info.NumPending > 0 || info.NumAckPending > 0 {
		return nil, info.NumAckPending
	}
	for _, pd := range order {
		if pd.done {
			continue
		}
		if _, err := p.h.tasks.GetMsg(ctx, pd.seq); err == nil {
			return pd, 0
		}
	}
	return nil, 0
}

// counted is "1 task" or "n tasks" (for noun "task").
func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// undelivered is the error of a run whose task pd was delivered
// max_deliver times without a result.
func (p *Pool) undelivered(pd *pending) error {
	times := fmt.Sprintf("%d times", p.settings.MaxDeliver)
	if p.settings.MaxDeliver == 1 {
		times = "once"
	}
	return fmt.Errorf("agent %d: task %s was delivered %s without a result: %w",
		pd.msg.Index, pd.msg.ID, times, ErrUndelivered)
}

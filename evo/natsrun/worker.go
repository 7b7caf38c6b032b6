package natsrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/evo"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// Worker trains tasks from the work queue until its context is cancelled.
type Worker struct {
	// Slots is how many tasks it trains at once (at least 1).
	Slots int
	// Name identifies it in results and the coordinator's errors
	// (default host:pid).
	Name string
	// Log receives a line per task and every problem; nil discards them.
	Log *slog.Logger
	// Version overrides Version(), for tests of the mismatch check.
	Version string
	// GymPython is the Python interpreter this worker's operator lets runs
	// of "gym:" envs start; empty refuses such runs. A run's config names
	// its interpreter and the modules it imports, and a worker must not
	// start a program because a message asked it to: the run's interpreter
	// (its env option "python", default python3) must be this one.
	GymPython string
	// OnTask, when set, is called as each task starts training (tests use
	// it to kill a worker mid-task).
	OnTask func(generation, index int)

	nc      *nats.Conn
	h       handles
	cons    jetstream.Consumer
	ackWait time.Duration

	mu      sync.Mutex
	configs map[string]runInfo     // by run id + session
	parsed  map[string]*evo.Config // the accepted ones, by run id + session
	unfit   map[string]unfitError  // the declined ones (unfitError), likewise
}

// NewWorker returns a worker that takes tasks through nc, which must stay
// open while it runs.
func NewWorker(nc *nats.Conn) *Worker { return &Worker{nc: nc, Slots: 1} }

// Run takes tasks until ctx is cancelled (it then returns nil, whatever the
// cause; a task in training is handed back to the queue at once) or it
// meets a mismatch: a task of another evolve version, or whose run config
// does not hash to the task's digest (the error matches ErrMismatch). Before
// a coordinator has created the work queue it waits.
//
// A task this worker refuses by policy — a run on a "gym:" env whose
// interpreter is not GymPython — or because it cannot train the run as it
// is set up (its memory for Slots agents, an env its machine cannot make)
// does not stop it. It tells the run's coordinator, which fails that run
// with an error matching ErrRefused that says why; it naks the task with a delay of AckWait, so that
// the task is not redelivered to it in a loop and another worker could
// take it until the coordinator purges the run's tasks; it logs a warning
// and goes on taking tasks of other runs. The coordinator fails the run on
// the first refusal rather than waiting for a willing worker: it cannot
// know whether one exists, so a run on a gym: env needs every worker on
// the server to allow its interpreter.
func (w *Worker) Run(ctx context.Context) error {
	if w.Log == nil {
		w.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if w.Version == "" {
		w.Version = Version()
	}
	if w.Name == "" {
		host, _ := os.Hostname()
		w.Name = fmt.Sprintf("%s:%d", host, os.Getpid())
	}
	w.configs, w.parsed, w.unfit = map[string]runInfo{}, map[string]*evo.Config{}, map[string]unfitError{}
	js, err := jetstream.New(w.nc)
	if err != nil {
		return err
	}
	for waited := false; ; waited = true {
		if w.h, w.cons, err = openResources(ctx, js); err == nil {
			break
		}
		switch {
		case waited:
		case errors.Is(err, jetstream.ErrStreamNotFound) || errors.Is(err, jetstream.ErrConsumerNotFound):
			w.Log.Info("waiting for a coordinator to create the work queue") // none has run on this server yet
		default:
			w.Log.Info("waiting for a coordinator to create the work queue", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(250 * time.Millisecond):
		}
	}
	w.ackWait = w.cons.CachedInfo().Config.AckWait
	parent := ctx
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	for range max(1, w.Slots) {
		wg.Go(func() {
			for ctx.Err() == nil {
				msg, err := w.nextTask(ctx)
				if err != nil {
					if ctx.Err() == nil {
						w.Log.Warn("fetch a task", "err", err)
						time.Sleep(time.Second)
					}
					continue
				}
				if err := w.handle(ctx, msg); err != nil {
					cancel(err)
				}
			}
		})
	}
	wg.Wait()
	if parent.Err() != nil {
		// Stopped by the caller, whatever the cause (a signal, say): that
		// is no failure.
		return nil
	}
	if err := context.Cause(ctx); !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// handle runs one delivery of a task. Only a refusal is returned as an
// error; everything else ends in an ack (the result is stored), a nak
// (try again later) or a term (the task is stale or malformed).
func (w *Worker) handle(ctx context.Context, msg jetstream.Msg) error {
	t, err := decodeTask(msg.Data())
	if err != nil {
		loose, lerr := decodeTaskLoosely(msg.Data())
		switch {
		case lerr == nil && loose.Version != w.Version:
			// Another build's task (a field this one does not know):
			// accept refuses it naming both builds, as any other.
			t = loose
		case lerr == nil:
			// The coordinator hears why, rather than waiting for a result
			// forever: a terminated task is gone from the work queue.
			w.Log.Warn("refused a malformed task", "task", loose.ID, "err", err)
			w.publish(ctx, loose, resultMsg{Err: fmt.Sprintf("task %s is malformed for evolve %s: %v", loose.ID, w.Version, err)}, "")
			msg.TermWithReason("malformed task")
			return nil
		default:
			w.Log.Warn("dropped a malformed task", "err", err)
			msg.TermWithReason("malformed task")
			return nil
		}
	}
	// Reading the run's config and the ack wait can take seconds: the
	// server hears at once, and every third of the ack wait read at start,
	// that the task is in hand (a short ack wait redelivered it meanwhile).
	stop := keepAlive(msg, w.ackWait)
	cfg, err := w.accept(ctx, msg, t)
	if cfg == nil {
		stop()
		return err
	}
	wait := w.ackWaitNow(ctx)
	stop()
	defer keepAlive(msg, wait)()
	return w.train(ctx, msg, t, cfg)
}

// accept returns the config of the task's run when this worker can train
// it. Otherwise the delivery is settled (a nak, a term or a refusal) and
// the config is nil, with a refusal's error.
func (w *Worker) accept(ctx context.Context, msg jetstream.Msg, t taskMsg) (*evo.Config, error) {
	refuse := func(why string) error {
		// Another worker may run it; the coordinator hears why not.
		msg.NakWithDelay(w.ackWait)
		w.publish(ctx, t, resultMsg{Refused: why}, "")
		return fmt.Errorf("%w: %s", ErrMismatch, why)
	}
	if t.Version != w.Version {
		return nil, refuse(fmt.Sprintf("task %s comes from evolve %s, this worker is evolve %s: run the same build on the coordinator and every worker", t.ID, t.Version, w.Version))
	}
	info, ok, err := w.config(ctx, t)
	switch {
	case err != nil:
		w.Log.Warn("read the run's config", "task", t.ID, "err", err)
		msg.NakWithDelay(time.Second)
		return nil, nil
	case !ok:
		w.Log.Info("dropped a task of a run or session that has ended", "task", t.ID)
		msg.TermWithReason("stale session")
		return nil, nil
	case info.Digest != t.Digest:
		return nil, refuse(fmt.Sprintf("task %s is for config %s but its run's config is %s", t.ID, t.Digest, info.Digest))
	}
	// A refusal of this worker's own does not stop it (see Run).
	decline := func(why string) (*evo.Config, error) {
		msg.NakWithDelay(w.ackWait)
		w.publish(ctx, t, resultMsg{Refused: why, Policy: true}, "")
		w.Log.Warn("refused a task; still serving other runs", "task", t.ID, "why", why)
		return nil, nil
	}
	if why := w.pythonRefusal(info.Config); why != "" {
		return decline(why)
	}
	cfg, err := w.checkedConfig(ctx, t, info.Config)
	var unfit unfitError
	switch {
	case err != nil && ctx.Err() != nil:
		// Stopped while the check started the env: the config is not
		// refused, the task goes back at once for another worker.
		msg.Nak()
		return nil, nil
	case errors.As(err, &unfit):
		return decline(unfit.Error())
	case err != nil:
		return nil, refuse(fmt.Sprintf("task %s: the run's config: %v", t.ID, err))
	}
	return cfg, nil
}

// unfitError is a run's config that this worker cannot train as it is set
// up (its memory for its slots' agents, an env its machine cannot make):
// another worker, or this one started otherwise, may.
type unfitError struct {
	agents, slots int // the run's agents it holds at once, and its slots
	err           error
}

func (e unfitError) Error() string {
	return fmt.Sprintf("this worker (-workers %d: %s of the run at once) cannot train the run: %v", e.slots, counted(e.agents, "agent"), e.err)
}
func (e unfitError) Unwrap() error { return e.err }

// checkedConfig decodes the run's config, holds it to the task's digest and
// validates it as this worker trains it, once per run and session: the
// memory estimate is of the agents this worker holds at once (its slots),
// not of the coordinator's whole population, which refused runs a machine
// smaller than the coordinator's could train.
func (w *Worker) checkedConfig(ctx context.Context, t taskMsg, text string) (*evo.Config, error) {
	key := t.Run + "/" + t.Session
	w.mu.Lock()
	cfg, ok := w.parsed[key]
	unfit, declined := w.unfit[key]
	w.mu.Unlock()
	switch {
	case ok:
		return cfg, nil
	case declined:
		return nil, unfit
	}
	c, err := evo.DecodeConfig([]byte(text))
	if err != nil {
		return nil, err
	}
	if d, err := c.Digest(); err != nil {
		return nil, err
	} else if d != t.Digest {
		return nil, fmt.Errorf("it hashes to %s, not %s (altered on the server?)", d, t.Digest)
	}
	mine := c
	mine.Population.Size = min(c.Population.Size, max(1, w.Slots))
	mine.Population.Workers = max(1, w.Slots)
	mine.Tournament.Size = min(c.Tournament.Size, mine.Population.Size)
	if err := mine.ValidateContext(ctx); err != nil {
		unfit := unfitError{agents: mine.Population.Size, slots: max(1, w.Slots), err: err}
		// Its other tasks are declined without checking again (a gym:
		// env's check starts a Python child).
		w.mu.Lock()
		w.unfit[key] = unfit
		w.mu.Unlock()
		return nil, unfit
	}
	w.mu.Lock()
	w.parsed[key] = &c
	w.mu.Unlock()
	return &c, nil
}

// ackWaitNow is the work queue's ack wait as the server has it now: a
// coordinator may have changed it (-nats-ack-wait) since this worker
// started, and reporting at a third of a longer wait than the server's
// would have the task redelivered while it trains. On failure, the one read
// at start.
func (w *Worker) ackWaitNow(ctx context.Context) time.Duration {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if info, err := w.cons.Info(ctx); err == nil && info.Config.AckWait > 0 {
		return info.Config.AckWait
	}
	return w.ackWait
}

// keepAlive tells the server at once, and every third of ackWait, that msg
// is still in progress, until the returned stop is called.
func keepAlive(msg jetstream.Msg, ackWait time.Duration) (stop func()) {
	done := make(chan struct{})
	msg.InProgress()
	go func() {
		tick := time.NewTicker(max(ackWait/3, 50*time.Millisecond))
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				msg.InProgress()
			}
		}
	}()
	return func() { close(done) }
}

// train trains the task's agent, stores it and its result, and acks.
func (w *Worker) train(ctx context.Context, msg jetstream.Msg, t taskMsg, cfg *evo.Config) error {
	start := time.Now()
	b, err := w.h.agents.GetBytes(ctx, t.Agent)
	if err != nil {
		w.Log.Warn("fetch the task's agent", "task", t.ID, "err", err)
		msg.NakWithDelay(time.Second)
		return nil
	}
	a, err := agent.Decode(b)
	if err != nil {
		return w.fail(ctx, msg, t, fmt.Errorf("agent %d: the coordinator's file: %w", t.Index, err))
	}
	if w.OnTask != nil {
		w.OnTask(t.Generation, t.Index)
	}
	w.Log.Info("training", "generation", t.Generation, "agent", t.Index)
	trainStart := time.Now()
	rep, err := evo.TrainTask(ctx, *cfg, evo.Task{Generation: t.Generation, Index: t.Index, Parent: t.Parent,
		Mutation: t.Mutation, EvalSeed: t.EvalSeed, Steps: t.Steps, Agent: a}, nil)
	train := time.Since(trainStart)
	if ctx.Err() != nil {
		msg.Nak()
		return nil
	}
	if err != nil {
		return w.fail(ctx, msg, t, err)
	}
	out, err := a.Encode()
	if err != nil {
		return w.fail(ctx, msg, t, fmt.Errorf("agent %d: %w", t.Index, err))
	}
	name := fmt.Sprintf("%s/%s/g%d/a%d/out-%s", t.Run, t.Session, t.Generation, t.Index, nuid.Next())
	if err := w.h.putAgentFile(ctx, w.nc, name, out); err != nil {
		if ctx.Err() != nil {
			msg.Nak()
			return nil
		}
		w.Log.Warn("store the trained agent", "task", t.ID, "err", err)
		msg.NakWithDelay(time.Second)
		return nil
	}
	if err := w.publish(ctx, t, resultMsg{Report: rep, Agent: name}, name); errors.Is(err, nats.ErrMaxPayload) {
		// Another delivery would train the same result again: the run
		// fails saying why (it was retried until max_deliver, blamed on
		// the workers).
		w.h.deleteAgentFile(ctx, name)
		return w.fail(ctx, msg, t, fmt.Errorf("agent %d: its result (%d PPO updates' records) is larger than the NATS server's max_payload, %d bytes: "+
			"raise max_payload in the server's config, or train fewer updates per generation (population.evo_steps over ppo.learn_step)",
			t.Index, len(rep.Updates), w.nc.MaxPayload()))
	} else if err != nil {
		msg.NakWithDelay(time.Second)
		return nil
	}
	// Acked even when the worker is stopping: the result is stored, and a
	// task left unsettled is trained again after the ack wait.
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := msg.DoubleAck(actx); err != nil {
		// The result is stored; a redelivery publishes a duplicate the
		// stream drops.
		w.Log.Warn("ack the task", "task", t.ID, "err", err)
	}
	// io is the task's cost of going through NATS: both agent files, the
	// result and the ack.
	w.Log.Info("trained", "generation", t.Generation, "agent", t.Index, "fitness", rep.Fitness,
		"train", train.Round(time.Millisecond), "io", (time.Since(start) - train).Round(100*time.Microsecond))
	return nil
}

// fail reports a task whose training failed; the run fails with err.
func (w *Worker) fail(ctx context.Context, msg jetstream.Msg, t taskMsg, err error) error {
	w.Log.Warn("task failed", "task", t.ID, "err", err)
	if w.publish(ctx, t, resultMsg{Err: err.Error()}, "") == nil {
		msg.DoubleAck(ctx)
	} else {
		msg.NakWithDelay(time.Second)
	}
	return nil
}

// publish sends a result for t and waits until the stream has stored it.
// A duplicate (another worker answered first) deletes the object named
// agent, which nobody will read.
func (w *Worker) publish(ctx context.Context, t taskMsg, r resultMsg, agentObj string) error {
	r.Task, r.Worker, r.Version, r.Digest = t.ID, w.Name, w.Version, t.Digest
	data, err := r.encode()
	if err != nil {
		return err
	}
	id := t.ID
	if r.Refused != "" {
		id += ".refused." + w.Name
	}
	ack, err := w.h.js.Publish(ctx, resultPrefix+t.Run, data, jetstream.WithMsgID(id))
	if err != nil {
		w.Log.Warn("publish a result", "task", t.ID, "err", err)
		return err
	}
	if ack.Duplicate && agentObj != "" {
		w.h.deleteAgentFile(ctx, agentObj)
	}
	return nil
}

// config returns the run's config for t, read once per session; ok is
// false when the run or the session has ended.
func (w *Worker) config(ctx context.Context, t taskMsg) (runInfo, bool, error) {
	key := t.Run + "/" + t.Session
	w.mu.Lock()
	info, ok := w.configs[key]
	w.mu.Unlock()
	if ok {
		return info, true, nil
	}
	e, err := w.h.runs.Get(ctx, t.Run)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return runInfo{}, false, nil
	}
	if err != nil {
		return runInfo{}, false, err
	}
	if err := json.Unmarshal(e.Value(), &info); err != nil {
		return runInfo{}, false, fmt.Errorf("run %s: %w", t.Run, err)
	}
	if info.Session != t.Session {
		return runInfo{}, false, nil
	}
	w.mu.Lock()
	w.configs[key] = info
	w.mu.Unlock()
	return info, true, nil
}

// pythonRefusal says why this worker will not run a config whose env runs
// in Python, or returns "". It decodes the config (evo.DecodeConfig)
// before evo.ParseConfig, which would start the interpreter to check the
// env; a config it cannot decode is left to evo.ParseConfig to reject.
func (w *Worker) pythonRefusal(config string) string {
	c, err := evo.DecodeConfig([]byte(config))
	if err != nil {
		return ""
	}
	if !strings.HasPrefix(c.Env.ID, envs.GymPrefix) {
		return ""
	}
	if _, registered := envs.Lookup(c.Env.ID); registered {
		return ""
	}
	python, ok := c.Env.Options["python"].(string)
	if !ok {
		python = "python3"
	}
	switch {
	case w.GymPython == "":
		return fmt.Sprintf("env %s runs in Python (%s), which this worker does not start: start it with -gym-python %s to allow that", c.Env.ID, python, python)
	case python != w.GymPython:
		return fmt.Sprintf("env %s wants the interpreter %s, this worker starts only %s (-gym-python)", c.Env.ID, python, w.GymPython)
	}
	return ""
}

package natsrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/evo"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
	"golang.org/x/sync/errgroup"
)

// Pool is the coordinator's evo.Pool: each generation's tasks go to the
// work queue and their results come back from the run's results subject.
// Build it with NewPool, pass it in evo.Options.Pool, and Close it when the
// run ends.
type Pool struct {
	nc       *nats.Conn
	settings Settings
	log      *slog.Logger
	version  string
	session  string

	h       handles
	run     string // the run's id on the server, set by the first Train
	digest  string
	results jetstream.Consumer
	cc      jetstream.ConsumeContext
	inbox   chan jetstream.Msg
	lost    chan error    // why the results consumer stopped for good
	quit    chan struct{} // closed when the pool stops listening
	advSub  *nats.Subscription
	// coordSub answers for the run on its coordinator subject (claim).
	coordSub *nats.Subscription
	dir      string             // the run directory, for the claim's messages
	claimAt  uint64             // the connection's reconnects when the claim was last checked
	lostRun  bool               // another coordinator has the run now: Close leaves it
	advice   chan uint64        // stream sequences of tasks that hit MaxDeliver
	queue    jetstream.Consumer // the workers' consumer of TaskStream
}

// PoolOptions configure a Pool; the zero value is usable.
type PoolOptions struct {
	Settings
	// Log receives notes (waiting for workers, dropped duplicates); nil
	// discards them.
	Log *slog.Logger
	// Version overrides Version(), for tests of the mismatch check.
	Version string
}

// NewPool returns a Pool that sends tasks through nc, which must stay
// open until Close.
func NewPool(nc *nats.Conn, opts PoolOptions) *Pool {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	v := opts.Version
	if v == "" {
		v = Version()
	}
	return &Pool{nc: nc, settings: opts.Settings.withDefaults(), log: log, version: v, session: nuid.Next()}
}

// start prepares the run on the server: resources, the run's config in
// the KV bucket, and no leftovers of an earlier session (tasks, results,
// agent files) under the run's id.
func (p *Pool) start(ctx context.Context, cfg evo.Config) (err error) {
	defer func() {
		if err != nil {
			p.stop()
			p.release()
			p.run = ""
		}
	}()
	digest, err := cfg.Digest()
	if err != nil {
		return err
	}
	text, err := cfg.TOML()
	if err != nil {
		return err
	}
	// The run's id leaves out the stopping rules, so that a coordinator
	// resumed with new ones (evo.Trainer.SetStopRules) still clears what
	// an earlier session of the run left on the server.
	gens, err := cfg.GenerationsDigest()
	if err != nil {
		return err
	}
	dir, err := filepath.Abs(cfg.OutDir)
	if err != nil {
		return err
	}
	key, err := runKey(dir)
	if err != nil {
		return err
	}
	p.run, p.digest = runID(gens, key), digest
	// Before anything of the run on the server is touched: another
	// coordinator's tasks would be cleared.
	if err := p.claim(ctx, dir); err != nil {
		return err
	}
	js, err := jetstream.New(p.nc)
	if err != nil {
		return err
	}
	if p.h, p.queue, err = createResources(ctx, js, p.settings); err != nil {
		return err
	}
	if err := p.purge(ctx); err != nil {
		return err
	}
	info, err := json.Marshal(runInfo{Version: p.version, Digest: digest, Session: p.session, Config: string(text)})
	if err != nil {
		return err
	}
	if _, err := p.h.runs.Put(ctx, p.run, info); err != nil {
		return fmt.Errorf("store the run's config in %s: %w", RunBucket, err)
	}
	if err := p.subscribeAdvisories(); err != nil {
		return err
	}
	p.results, err = js.CreateOrUpdateConsumer(ctx, ResultStream, jetstream.ConsumerConfig{Durable: "run-" + p.run,
		FilterSubject: resultPrefix + p.run, AckPolicy: jetstream.AckExplicitPolicy, AckWait: time.Minute})
	if err != nil {
		return fmt.Errorf("create the run's results consumer: %w", err)
	}
	return p.consumeResults()
}

// subscribeAdvisories passes the stream sequence of every task the server
// gave up redelivering (its max-deliveries advisory) to p.advice, so that
// the generation fails at once naming it. A full channel drops them: the
// check of exhausted tasks when no result comes for a while finds those.
func (p *Pool) subscribeAdvisories() (err error) {
	p.advice = make(chan uint64, 64)
	p.advSub, err = p.nc.Subscribe(maxDeliveriesAdvisory+TaskStream+"."+WorkerConsumer, func(m *nats.Msg) {
		var a struct {
			StreamSeq uint64 `json:"stream_seq"`
		}
		if json.Unmarshal(m.Data, &a) == nil {
			select {
			case p.advice <- a.StreamSeq:
			default:
			}
		}
	})
	return err
}

// consumeResults starts consuming the run's results into p.inbox. An error
// that ends the consumption for good, or the consumer found gone, is sent
// to p.lost, so that the run stops instead of waiting for ever.
func (p *Pool) consumeResults() (err error) {
	p.inbox, p.lost, p.quit = make(chan jetstream.Msg, 256), make(chan error, 1), make(chan struct{})
	quit, lost, name := p.quit, p.lost, "run-"+p.run
	var checking atomic.Bool
	p.cc, err = p.results.Consume(func(m jetstream.Msg) {
		select {
		case p.inbox <- m:
		case <-quit: // unacked: it comes back to the next session
		}
	}, jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
		switch {
		case errors.Is(err, jetstream.ErrConsumerDeleted) || errors.Is(err, jetstream.ErrBadRequest):
			// These stop the consumption for good; the run would wait
			// for ever.
			select {
			case lost <- err:
			default:
			}
		case errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoHeartbeat):
			// A consumer removed while no request of ours was waiting
			// tells us nothing: its requests find no one, or (a request
			// that raced the removal) fall silent until the heartbeats
			// are missed. So may a server restarting; the consumer's
			// absence tells them apart (asked once at a time, off the
			// handler).
			if checking.CompareAndSwap(false, true) {
				go func() {
					defer checking.Store(false)
					if err := p.resultsConsumerGone(name); err != nil {
						select {
						case lost <- err:
						default:
						}
					}
				}()
			}
		}
	}), jetstream.PullHeartbeat(resultsHeartbeat))
	return err
}

// resultsHeartbeat is how often the server tells a waiting coordinator it
// is there: two missed, and the coordinator asks whether its results
// consumer still exists (nats.go's default, half the 30 s expiry, took a
// minute to notice a removal that raced a request).
const resultsHeartbeat = 5 * time.Second

// lostError is the error of a run whose results consumer stopped with err.
func (p *Pool) lostError(err error) error {
	return fmt.Errorf("the run's results consumer on the NATS server stopped (%w): was it removed, by hand or by another coordinator of this run directory? Resume the run (evolve -resume DIR -nats URL)", err)
}

// resultsConsumerGone returns an error when the server says the results
// consumer name does not exist, nil when it does or cannot tell.
func (p *Pool) resultsConsumerGone(name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := p.h.js.Consumer(ctx, ResultStream, name); errors.Is(err, jetstream.ErrConsumerNotFound) {
		return err
	}
	return nil
}

// purge removes the run's tasks, results and agent files from the server.
func (p *Pool) purge(ctx context.Context) error {
	if err := p.h.tasks.Purge(ctx, jetstream.WithPurgeSubject(taskPrefix+p.run)); err != nil {
		return fmt.Errorf("purge the run's old tasks: %w", err)
	}
	if err := p.h.results.Purge(ctx, jetstream.WithPurgeSubject(resultPrefix+p.run)); err != nil {
		return fmt.Errorf("purge the run's old results: %w", err)
	}
	objs, err := p.h.agents.List(ctx)
	if err != nil && !errors.Is(err, jetstream.ErrNoObjectsFound) {
		return fmt.Errorf("list %s: %w", AgentBucket, err)
	}
	for _, o := range objs {
		if len(o.Name) > len(p.run) && o.Name[:len(p.run)+1] == p.run+"/" {
			if err := p.h.deleteAgentFile(ctx, o.Name); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
				return fmt.Errorf("delete %s: %w", o.Name, err)
			}
		}
	}
	return nil
}

// Close stops listening for results and removes the run's tasks, results,
// agent files and config from the server: workers drop any task of it they
// still receive. The connection stays open.
func (p *Pool) Close() error {
	if p.run == "" {
		return nil
	}
	p.stop()
	if p.lostRun {
		// What is on the server is the other coordinator's now.
		p.release()
		p.run = ""
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := p.purge(ctx)
	if derr := p.h.runs.Delete(ctx, p.run); err == nil && derr != nil {
		err = derr
	}
	if derr := p.h.js.DeleteConsumer(ctx, ResultStream, "run-"+p.run); err == nil && derr != nil {
		err = derr
	}
	// Only now may another coordinator of the run start: it would have
	// seen its tasks cleared.
	p.release()
	p.run = ""
	return err
}

// stop stops listening for results and advisories.
func (p *Pool) stop() {
	if p.cc != nil {
		close(p.quit)
		p.cc.Stop()
		p.cc = nil
	}
	if p.advSub != nil {
		p.advSub.Unsubscribe()
		p.advSub = nil
	}
}

// pending is a published task waiting for its result.
type pending struct {
	pos int // in the generation's tasks
	msg taskMsg
	seq uint64 // its sequence in TaskStream
	// done is set when a result was accepted (and is being fetched, or
	// was applied); agent names that result's file, and result is its
	// sequence in ResultStream.
	done   bool
	agent  string
	result uint64
}

// fetched is a result whose agent file was fetched and decoded (or not).
type fetched struct {
	pd     *pending
	m      jetstream.Msg
	res    resultMsg
	a      *agent.PPO
	getErr error // the file could not be fetched: the result comes back later
	err    error // the file is not an agent: the run fails
}

// sendLimit bounds the agent files stored and tasks published at once.
const sendLimit = 32

// waitNote is how long a generation waits without a result before it says so.
var waitNote = 30 * time.Second

// Train implements evo.Pool: it stores each agent file, publishes the
// tasks, and waits for one result per task. Files are stored and fetched
// concurrently, so that the coordinator's share of a generation grows
// slowly with the population; a generation that hears nothing for 30 s
// says so in the log.
func (p *Pool) Train(ctx context.Context, cfg evo.Config, tasks []evo.Task, progress func(steps int)) ([]evo.Result, error) {
	if len(tasks) == 0 {
		return nil, nil
	}
	if p.run == "" {
		if err := p.start(ctx, cfg); err != nil {
			return nil, err
		}
	} else if d, err := cfg.Digest(); err != nil || d != p.digest {
		return nil, fmt.Errorf("natsrun: a Pool serves one run (config digest %s), not %s", p.digest, d)
	} else if err := p.stillOurs(ctx); err != nil {
		return nil, err
	}
	start := time.Now()
	byID := make(map[string]*pending, len(tasks))
	order := make([]*pending, len(tasks))
	for i, t := range tasks {
		base := fmt.Sprintf("%s/%s/g%d/a%d", p.run, p.session, t.Generation, t.Index)
		m := taskMsg{ID: fmt.Sprintf("%s.%s.g%d.a%d", p.run, p.session, t.Generation, t.Index), Version: p.version,
			Run: p.run, Session: p.session, Digest: p.digest, Generation: t.Generation, Index: t.Index, Parent: t.Parent,
			Mutation: t.Mutation, EvalSeed: t.EvalSeed, Steps: t.Steps, Agent: base + "/in"}
		order[i] = &pending{pos: i, msg: m}
		byID[m.ID] = order[i]
	}
	defer p.cleanup(order)
	eg, ectx := errgroup.WithContext(ctx)
	eg.SetLimit(sendLimit)
	for i, pd := range order {
		eg.Go(func() error { return p.send(ectx, tasks[i].Agent, pd) })
	}
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	sent := time.Now()
	// The fetches still in flight when Train returns are cancelled with it.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out, err := p.collect(ctx, tasks, order, byID, sent, progress)
	if err != nil {
		return nil, err
	}
	p.log.Info("generation trained", "generation", tasks[0].Generation, "agents", len(tasks),
		"send", sent.Sub(start).Round(100*time.Microsecond), "wait", time.Since(sent).Round(time.Millisecond))
	return out, nil
}

// collect waits for one result per task, published at sent, fetches each
// trained agent and returns them in the tasks' order.
func (p *Pool) collect(ctx context.Context, tasks []evo.Task, order []*pending, byID map[string]*pending, sent time.Time, progress func(steps int)) ([]evo.Result, error) {
	bySeq := make(map[uint64]*pending, len(order))
	for _, pd := range order {
		bySeq[pd.seq] = pd
	}
	out := make([]evo.Result, len(tasks))
	// At most one fetch per task is in flight, so sends never block.
	fetches := make(chan fetched, len(tasks))
	// A generation that hears nothing for waitNote says so: without workers
	// on the server, or with all of them busy or gone, it would wait silently.
	quiet := time.NewTicker(waitNote)
	defer quiet.Stop()
	var suspect *pending // the task exhausted found at the last tick
	for waiting := len(tasks); waiting > 0; {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-quiet.C:
			if err := p.resultsConsumerGone("run-" + p.run); err != nil { // however it went
				return nil, p.lostError(err)
			}
			if err := p.stillOurs(ctx); err != nil {
				return nil, err
			}
			// Twice in a row: a worker's ack leaves the consumer's count
			// a moment before the task leaves the stream.
			pd, inHands := p.exhausted(ctx, order)
			if pd != nil && pd == suspect {
				return nil, p.undelivered(pd)
			}
			suspect = pd
			why := "are workers running on this server (evolve worker -nats URL)?"
			switch {
			case !p.nc.IsConnected():
				why = "the connection to the NATS server is lost (reconnecting: the run goes on when it is back)"
			case inHands > 0:
				// Slow agents (a MinAtar CNN's generation) are no fault.
				why = fmt.Sprintf("workers are training %s of the server's runs", counted(inHands, "task"))
			}
			p.log.Warn(fmt.Sprintf("generation %d: %d of %d agents trained, no result for %v: %s",
				tasks[0].Generation, len(tasks)-waiting, len(tasks), time.Since(sent).Round(time.Second), why))
		case err := <-p.lost:
			return nil, p.lostError(err)
		case seq := <-p.advice:
			if pd, ok := bySeq[seq]; ok && !pd.done {
				return nil, p.undelivered(pd)
			}
		case m := <-p.inbox:
			quiet.Reset(waitNote)
			pd, res, err := p.accept(ctx, m, byID)
			if err != nil {
				return nil, err
			}
			if pd != nil {
				pd.done, pd.agent, pd.result = true, res.Agent, streamSeq(m)
				go func() { fetches <- p.fetch(ctx, pd, m, res) }()
			}
		case f := <-fetches:
			switch {
			case f.getErr != nil:
				// The result comes back after a delay and is accepted then.
				f.pd.done = false
				f.m.NakWithDelay(time.Second)
				p.log.Warn("cannot fetch a trained agent yet", "agent", f.pd.msg.Index, "object", f.res.Agent, "err", f.getErr)
				continue
			case f.err != nil:
				f.m.Ack()
				return nil, f.err
			}
			if err := f.m.Ack(); err != nil {
				p.log.Warn("ack a result", "task", f.res.Task, "err", err)
			}
			waiting--
			out[f.pd.pos] = evo.Result{Report: f.res.Report, Agent: f.a}
			progress(f.res.Report.GenSteps)
		}
	}
	return out, nil
}

// send stores a task's agent file and publishes the task.
func (p *Pool) send(ctx context.Context, a *agent.PPO, pd *pending) error {
	b, err := a.Encode()
	if err != nil {
		return fmt.Errorf("agent %d: %w", pd.msg.Index, err)
	}
	if err := p.h.putAgentFile(ctx, p.nc, pd.msg.Agent, b); err != nil {
		return fmt.Errorf("agent %d: store its file in %s: %w", pd.msg.Index, AgentBucket, err)
	}
	data, err := json.Marshal(pd.msg)
	if err != nil {
		return err
	}
	ack, err := p.h.js.Publish(ctx, taskPrefix+p.run, data, jetstream.WithMsgID(pd.msg.ID))
	if err != nil {
		return fmt.Errorf("agent %d: publish its task: %w", pd.msg.Index, err)
	}
	pd.seq = ack.Sequence
	return nil
}

// accept checks one message of the results subject. It returns the
// pending task it answers, nil for a result that is not awaited (a
// duplicate, or one of an earlier session; acked and dropped), or the
// error that fails the run.
func (p *Pool) accept(ctx context.Context, m jetstream.Msg, byID map[string]*pending) (*pending, resultMsg, error) {
	res, err := decodeResult(m.Data())
	if err != nil {
		m.Term()
		p.log.Warn("dropped a malformed result", "subject", m.Subject(), "err", err)
		return nil, res, nil
	}
	pd, ok := byID[res.Task]
	if ok && pd.done && pd.result != 0 && streamSeq(m) == pd.result {
		// Another delivery of the result accepted (redelivered after the
		// results consumer's ack wait): it is left unsettled. The server
		// settles a message by its stream sequence, whichever delivery
		// the ack names, so acking this one would delete the result while
		// its first delivery's fetch may still fail and ask for it again:
		// the run would wait for ever.
		p.log.Info("left a redelivery of a result being applied", "task", res.Task, "worker", res.Worker)
		return nil, res, nil
	}
	if !ok || pd.done {
		p.log.Info("dropped a result that is not awaited (a duplicate, or one of an earlier session)", "task", res.Task, "worker", res.Worker)
		if res.Agent != "" && (!ok || res.Agent != pd.agent) {
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				p.h.deleteAgentFile(ctx, res.Agent)
			}()
		}
		m.Ack()
		return nil, res, nil
	}
	fail := func(err error) (*pending, resultMsg, error) {
		m.Ack()
		return nil, res, err
	}
	switch {
	case res.Refused != "" && res.Policy:
		return fail(inputError{fmt.Errorf("%w: agent %d, on worker %s: %s", ErrRefused, pd.msg.Index, res.Worker, res.Refused)})
	case res.Refused != "":
		return fail(fmt.Errorf("%w: agent %d: worker %s refused its task: %s", ErrMismatch, pd.msg.Index, res.Worker, res.Refused))
	case res.Version != p.version || res.Digest != p.digest:
		return fail(fmt.Errorf("%w: agent %d: worker %s runs evolve %s for config %s; this coordinator runs evolve %s for %s",
			ErrMismatch, pd.msg.Index, res.Worker, res.Version, res.Digest, p.version, p.digest))
	case res.Err != "":
		return fail(fmt.Errorf("%s (on worker %s)", res.Err, res.Worker))
	case res.Report.Index != pd.msg.Index:
		return fail(fmt.Errorf("agent %d: worker %s returned the report of agent %d", pd.msg.Index, res.Worker, res.Report.Index))
	}
	return pd, res, nil
}

// streamSeq is m's sequence in its stream, 0 when its metadata cannot be
// read.
func streamSeq(m jetstream.Msg) uint64 {
	md, err := m.Metadata()
	if err != nil {
		return 0
	}
	return md.Sequence.Stream
}

// fetch reads and decodes the trained agent file of an accepted result,
// then deletes the file.
func (p *Pool) fetch(ctx context.Context, pd *pending, m jetstream.Msg, res resultMsg) fetched {
	f := fetched{pd: pd, m: m, res: res}
	b, err := p.h.agents.GetBytes(ctx, res.Agent)
	if err != nil {
		f.getErr = err
		return f
	}
	if f.a, err = agent.Decode(b); err != nil {
		f.err = fmt.Errorf("agent %d: the file worker %s returned: %w", pd.msg.Index, res.Worker, err)
		return f
	}
	p.h.deleteAgentFile(ctx, res.Agent)
	return f
}

// cleanup deletes a generation's input agent files, and the trained ones
// of results accepted but not fetched (a generation ended by a failure
// cancels their fetches; a fetched one is deleted already, and deleting it
// again finds nothing).
func (p *Pool) cleanup(order []*pending) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	sem := make(chan struct{}, sendLimit)
	for _, pd := range order {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			p.h.deleteAgentFile(ctx, pd.msg.Agent)
			if pd.agent != "" {
				p.h.deleteAgentFile(ctx, pd.agent)
			}
		})
	}
	wg.Wait()
}

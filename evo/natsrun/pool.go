package natsrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/evo"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
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
	advSub  *nats.Subscription
	advice  chan uint64 // stream sequences of tasks that hit MaxDeliver
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
func (p *Pool) start(ctx context.Context, cfg evo.Config) error {
	digest, err := cfg.Digest()
	if err != nil {
		return err
	}
	text, err := cfg.MarshalTOML()
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	dir, err := filepath.Abs(cfg.OutDir)
	if err != nil {
		return err
	}
	p.run, p.digest = runID(digest, host, dir), digest
	js, err := jetstream.New(p.nc)
	if err != nil {
		return err
	}
	if p.h, _, err = createResources(ctx, js, p.settings); err != nil {
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
	p.advice = make(chan uint64, 64)
	p.advSub, err = p.nc.Subscribe("$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES."+TaskStream+"."+WorkerConsumer, func(m *nats.Msg) {
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
	if err != nil {
		return err
	}
	p.results, err = js.CreateOrUpdateConsumer(ctx, ResultStream, jetstream.ConsumerConfig{Durable: "run-" + p.run,
		FilterSubject: resultPrefix + p.run, AckPolicy: jetstream.AckExplicitPolicy, AckWait: time.Minute})
	if err != nil {
		return fmt.Errorf("create the run's results consumer: %w", err)
	}
	p.inbox = make(chan jetstream.Msg, 256)
	p.cc, err = p.results.Consume(func(m jetstream.Msg) { p.inbox <- m })
	return err
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
			if err := p.h.agents.Delete(ctx, o.Name); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
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
	p.cc.Stop()
	p.advSub.Unsubscribe()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := p.purge(ctx)
	if derr := p.h.runs.Delete(ctx, p.run); err == nil && derr != nil {
		err = derr
	}
	if derr := p.h.js.DeleteConsumer(ctx, ResultStream, "run-"+p.run); err == nil && derr != nil {
		err = derr
	}
	p.run = ""
	return err
}

// pending is a published task waiting for its result.
type pending struct {
	pos  int // in the generation's tasks
	msg  taskMsg
	done bool
}

// Train implements evo.Pool: it stores each agent file, publishes the
// tasks, and waits for one result per task.
func (p *Pool) Train(ctx context.Context, cfg evo.Config, tasks []evo.Task, progress func(steps int)) ([]evo.Result, error) {
	if p.run == "" {
		if err := p.start(ctx, cfg); err != nil {
			return nil, err
		}
	} else if d, err := cfg.Digest(); err != nil || d != p.digest {
		return nil, fmt.Errorf("natsrun: a Pool serves one run (config digest %s), not %s", p.digest, d)
	}
	byID := map[string]*pending{}
	bySeq := map[uint64]*pending{}
	order := make([]*pending, 0, len(tasks))
	defer p.cleanup(byID)
	for i, t := range tasks {
		b, err := t.Agent.Encode()
		if err != nil {
			return nil, fmt.Errorf("agent %d: %w", t.Index, err)
		}
		base := fmt.Sprintf("%s/%s/g%d/a%d", p.run, p.session, t.Generation, t.Index)
		if _, err := p.h.agents.PutBytes(ctx, base+"/in", b); err != nil {
			return nil, fmt.Errorf("agent %d: store its file in %s: %w", t.Index, AgentBucket, err)
		}
		m := taskMsg{ID: fmt.Sprintf("%s.%s.g%d.a%d", p.run, p.session, t.Generation, t.Index), Version: p.version,
			Run: p.run, Session: p.session, Digest: p.digest, Generation: t.Generation, Index: t.Index, Parent: t.Parent,
			Mutation: t.Mutation, EvalSeed: t.EvalSeed, Agent: base + "/in"}
		byID[m.ID] = &pending{pos: i, msg: m}
		order = append(order, byID[m.ID])
	}
	for _, pd := range order {
		data, err := json.Marshal(pd.msg)
		if err != nil {
			return nil, err
		}
		ack, err := p.h.js.Publish(ctx, taskPrefix+p.run, data, jetstream.WithMsgID(pd.msg.ID))
		if err != nil {
			return nil, fmt.Errorf("agent %d: publish its task: %w", pd.msg.Index, err)
		}
		bySeq[ack.Sequence] = pd
	}
	out := make([]evo.Result, len(tasks))
	waiting := len(tasks)
	for waiting > 0 {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case seq := <-p.advice:
			if pd, ok := bySeq[seq]; ok && !pd.done {
				return nil, fmt.Errorf("agent %d: task %s was delivered %d times without a result (its workers failed, were killed or lost the server each time)",
					pd.msg.Index, pd.msg.ID, p.settings.MaxDeliver)
			}
		case m := <-p.inbox:
			pd, r, err := p.receive(ctx, m, byID)
			if err != nil {
				return nil, err
			}
			if pd == nil {
				continue
			}
			pd.done = true
			waiting--
			out[pd.pos] = r
			progress(r.Report.GenSteps)
		}
	}
	return out, nil
}

// receive handles one message of the results subject. It returns the
// pending task it answers and its result, nil for a result that is not
// awaited (a duplicate, or one of an earlier session), or the error that
// fails the run.
func (p *Pool) receive(ctx context.Context, m jetstream.Msg, byID map[string]*pending) (*pending, evo.Result, error) {
	res, err := decodeResult(m.Data())
	if err != nil {
		m.Term()
		p.log.Warn("dropped a malformed result", "subject", m.Subject(), "err", err)
		return nil, evo.Result{}, nil
	}
	pd, ok := byID[res.Task]
	if !ok || pd.done {
		p.log.Info("dropped a result that is not awaited (a duplicate, or one of an earlier session)", "task", res.Task, "worker", res.Worker)
		if res.Agent != "" {
			p.h.agents.Delete(ctx, res.Agent)
		}
		m.Ack()
		return nil, evo.Result{}, nil
	}
	switch {
	case res.Refused != "":
		m.Ack()
		return nil, evo.Result{}, fmt.Errorf("%w: agent %d: worker %s refused its task: %s", ErrMismatch, pd.msg.Index, res.Worker, res.Refused)
	case res.Version != p.version || res.Digest != p.digest:
		m.Ack()
		return nil, evo.Result{}, fmt.Errorf("%w: agent %d: worker %s runs evolve %s for config %s; this coordinator runs evolve %s for %s",
			ErrMismatch, pd.msg.Index, res.Worker, res.Version, res.Digest, p.version, p.digest)
	case res.Err != "":
		m.Ack()
		return nil, evo.Result{}, fmt.Errorf("%s (on worker %s)", res.Err, res.Worker)
	case res.Report.Index != pd.msg.Index:
		m.Ack()
		return nil, evo.Result{}, fmt.Errorf("agent %d: worker %s returned the report of agent %d", pd.msg.Index, res.Worker, res.Report.Index)
	}
	b, err := p.h.agents.GetBytes(ctx, res.Agent)
	if err != nil {
		// The result stays unacked and comes back after its ack wait.
		m.NakWithDelay(time.Second)
		p.log.Warn("cannot fetch a trained agent yet", "agent", pd.msg.Index, "object", res.Agent, "err", err)
		return nil, evo.Result{}, nil
	}
	a, err := agent.Decode(b)
	if err != nil {
		m.Ack()
		return nil, evo.Result{}, fmt.Errorf("agent %d: the file worker %s returned: %w", pd.msg.Index, res.Worker, err)
	}
	if err := m.Ack(); err != nil {
		p.log.Warn("ack a result", "task", res.Task, "err", err)
	}
	p.h.agents.Delete(ctx, res.Agent)
	return pd, evo.Result{Report: res.Report, Agent: a}, nil
}

// cleanup deletes a generation's input agent files.
func (p *Pool) cleanup(byID map[string]*pending) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for _, pd := range byID {
		wg.Go(func() { p.h.agents.Delete(ctx, pd.msg.Agent) })
	}
	wg.Wait()
}

package natsrun_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/evo"
	"github.com/evolverl/evolve/evo/natsrun"
	"github.com/evolverl/evolve/internal/pytest"
	"github.com/evolverl/evolve/internal/runtest"
	"github.com/evolverl/evolve/internal/simd"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestSameResultsAsLocal trains the tiny run locally and through NATS with
// one worker and with two workers of two slots each: metrics and elite
// are the same bytes, and the TensorBoard scalars the same values (the
// reports' per-update statistics cross the result messages whole). The
// run leaves nothing in the agent files' store, not even delete markers.
func TestSameResultsAsLocal(t *testing.T) {
	want := local(t)
	for _, c := range []struct{ workers, slots int }{{1, 1}, {2, 2}} {
		s := startServer(t)
		startWorkers(t, s, c.workers, c.slots, nil)
		cfg := tiny(t)
		if _, err := runNATS(t, s, cfg, false, nil); err != nil {
			t.Fatalf("%d workers: %v", c.workers, err)
		}
		sameRun(t, want, cfg.OutDir)
		runtest.SameEvents(t, want, cfg.OutDir)
		agentStoreEmpty(t, s)
	}
}

// agentStoreEmpty fails the test unless the stream under the agent files'
// object store holds no message.
func agentStoreEmpty(t *testing.T, s *testServer) {
	t.Helper()
	js, err := jetstream.New(s.connect(t))
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(context.Background(), "OBJ_"+natsrun.AgentBucket)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n := info.State.Msgs; n != 0 {
		t.Errorf("%d messages left in the agent files' store after the run (files or delete markers), want 0", n)
	}
}

// TestDuplicateResultsAppliedOnce publishes every result a second time
// (without the task's message id, so the stream keeps both): the run is
// still the local one.
func TestDuplicateResultsAppliedOnce(t *testing.T) {
	want := local(t)
	s := startServer(t)
	startWorkers(t, s, 1, 2, nil)
	nc := s.connect(t)
	var dups atomic.Int64
	sub, err := nc.Subscribe("evolve.results.>", func(m *nats.Msg) {
		if m.Header.Get("Evolve-Test-Copy") != "" {
			return
		}
		c := nats.NewMsg(m.Subject)
		c.Data = m.Data
		c.Header.Set("Evolve-Test-Copy", "1")
		if nc.PublishMsg(c) == nil {
			dups.Add(1)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	cfg := tiny(t)
	if _, err := runNATS(t, s, cfg, false, nil); err != nil {
		t.Fatal(err)
	}
	if dups.Load() == 0 {
		t.Fatal("no result was duplicated")
	}
	sameRun(t, want, cfg.OutDir)
}

// TestResumeAfterCoordinatorDies stops the coordinator as if killed —
// while a worker trains a task of generation 2, closing its connection but
// not its pool, so its tasks, results and files stay on the server — then
// resumes the run with
// a new coordinator: it ends as the local run.
func TestResumeAfterCoordinatorDies(t *testing.T) {
	want := local(t)
	s := startServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	startWorkers(t, s, 2, 1, func(w *natsrun.Worker) {
		w.OnTask = func(g, i int) {
			if g == 2 {
				cancel()
			}
		}
	})
	cfg := tiny(t)
	nc := s.connect(t)
	tr, err := evo.New(cfg, evo.Options{Pool: natsrun.NewPool(nc, natsrun.PoolOptions{Settings: settings})})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Run(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("the stopped run returned %v", err)
	}
	nc.Close() // as the process's death would, without Pool.Close
	if _, err := runNATS(t, s, cfg, true, nil); err != nil {
		t.Fatal(err)
	}
	sameRun(t, want, cfg.OutDir)
}

// TestVersionMismatchRefused: a worker of another evolve version refuses
// the task and says so; the coordinator fails with both versions named.
func TestVersionMismatchRefused(t *testing.T) {
	s := startServer(t)
	startWorkers(t, s, 1, 1, func(w *natsrun.Worker) { w.Version = "v0.0.0-other protocol 1" })
	cfg := tiny(t)
	_, err := runNATS(t, s, cfg, false, nil)
	if !errors.Is(err, natsrun.ErrMismatch) || !strings.Contains(err.Error(), "v0.0.0-other") || !strings.Contains(err.Error(), natsrun.Version()) {
		t.Fatalf("err = %v; want ErrMismatch naming both versions", err)
	}
}

// TestTaskNeverFinishedFailsTheRun: a "worker" that takes tasks and never
// answers makes every task hit max_deliver; the run fails naming an agent
// instead of waiting forever.
func TestTaskNeverFinishedFailsTheRun(t *testing.T) {
	s := startServer(t)
	nc := s.connect(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		js, _ := jetstream.New(nc)
		for ctx.Err() == nil {
			cons, err := js.Consumer(ctx, natsrun.TaskStream, natsrun.WorkerConsumer)
			if err != nil {
				time.Sleep(50 * time.Millisecond)
				continue
			}
			cons.Next(jetstream.FetchMaxWait(time.Second)) // and never ack
		}
	}()
	start := time.Now()
	_, err := runNATS(t, s, tiny(t), false, nil)
	if err == nil || !strings.Contains(err.Error(), "agent ") || !strings.Contains(err.Error(), "delivered 3 times") {
		t.Fatalf("err = %v; want a failure naming the agent and max_deliver", err)
	}
	t.Logf("failed after %v: %v", time.Since(start).Round(time.Millisecond), err)
}

// TestServerRestartLosesNothing restarts the server (file storage) while
// a worker trains a task of generation 2: clients reconnect and the run
// is the local one.
func TestServerRestartLosesNothing(t *testing.T) {
	want := local(t)
	s := startServer(t)
	var once sync.Once
	restarted := make(chan struct{})
	startWorkers(t, s, 2, 1, func(w *natsrun.Worker) {
		w.OnTask = func(g, i int) {
			if g == 2 {
				once.Do(func() { s.restart(); close(restarted) })
			}
		}
	})
	cfg := tiny(t)
	if _, err := runNATS(t, s, cfg, false, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-restarted:
	default:
		t.Fatal("the server was not restarted")
	}
	sameRun(t, want, cfg.OutDir)
}

// TestAlteredRunConfigRefused: a worker whose copy of the run's config does
// not hash to the task's digest refuses the task; the coordinator fails
// naming the mismatch.
func TestAlteredRunConfigRefused(t *testing.T) {
	s := startServer(t)
	errc := make(chan error, 1)
	go func() {
		_, err := runNATS(t, s, tiny(t), false, nil)
		errc <- err
	}()
	js, err := jetstream.New(s.connect(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var kv jetstream.KeyValue
	var keys []string
	for len(keys) == 0 {
		if ctx.Err() != nil {
			t.Fatal("the coordinator stored no run config within 30 s")
		}
		time.Sleep(10 * time.Millisecond)
		if kv, err = js.KeyValue(ctx, natsrun.RunBucket); err == nil {
			keys, _ = kv.Keys(ctx)
		}
	}
	e, err := kv.Get(ctx, keys[0])
	if err != nil {
		t.Fatal(err)
	}
	altered := strings.Replace(string(e.Value()), "seed = 7", "seed = 8", 1)
	if altered == string(e.Value()) {
		t.Fatalf("no seed = 7 in the stored run: %s", e.Value())
	}
	if _, err := kv.Put(ctx, keys[0], []byte(altered)); err != nil {
		t.Fatal(err)
	}
	startWorkers(t, s, 1, 1, nil)
	select {
	case err := <-errc:
		if !errors.Is(err, natsrun.ErrMismatch) || !strings.Contains(err.Error(), "the run's config: it hashes to") {
			t.Fatalf("err = %v; want ErrMismatch about the config's digest", err)
		}
	case <-ctx.Done():
		t.Fatal("the coordinator did not fail within 30 s")
	}
}

// TestPythonRunsNeedTheWorkersConsent: a run on a "gym:" env names the
// interpreter a worker would start; a worker without -gym-python refuses
// it (the run fails with ErrRefused, saying how to allow Python) and then
// trains an ordinary run on the same server, and one started with that
// interpreter trains it like a local run.
func TestPythonRunsNeedTheWorkersConsent(t *testing.T) {
	pytest.StdlibEnvs(t, "../../envs/testdata/gymtest")
	gymCfg := func() evo.Config {
		cfg := tiny(t)
		cfg.Env.ID, cfg.Env.Options = "gym:masked", envs.Options{"module_env": "gymtest:Masked"}
		cfg.Population.MaxSteps = 2 * 3 * 256 // 2 generations
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	for _, c := range []struct {
		python, want string
	}{
		{"", "a worker refused the run: agent "},
		{"", "-gym-python python3"},
		{"/usr/bin/python-other", "starts only /usr/bin/python-other"},
	} {
		s := startServer(t)
		stopped := make(chan error, 1)
		ctx, cancel := context.WithCancel(context.Background())
		w := natsrun.NewWorker(s.connect(t))
		w.Log, w.GymPython = testLog(t), c.python
		go func() { stopped <- w.Run(ctx) }()
		_, err := runNATS(t, s, gymCfg(), false, nil)
		if !errors.Is(err, natsrun.ErrRefused) || !errors.Is(err, evo.ErrBadInput) || errors.Is(err, natsrun.ErrMismatch) ||
			!strings.Contains(err.Error(), c.want) {
			t.Fatalf("-gym-python %q: err = %v; want ErrRefused and ErrBadInput, not ErrMismatch, with %q", c.python, err, c.want)
		}
		// The worker that refused is still serving: it alone trains an
		// ordinary run.
		if _, err := runNATS(t, s, tiny(t), false, nil); err != nil {
			t.Fatalf("-gym-python %q: an ordinary run after the refusal: %v", c.python, err)
		}
		cancel()
		if err := <-stopped; err != nil {
			t.Fatalf("-gym-python %q: the worker returned %v", c.python, err)
		}
	}

	s := startServer(t)
	startWorkers(t, s, 2, 1, func(w *natsrun.Worker) { w.GymPython = "python3" })
	remote := gymCfg()
	if _, err := runNATS(t, s, remote, false, nil); err != nil {
		t.Fatal(err)
	}
	here := gymCfg()
	if _, err := train(t, here, evo.Options{}, false, nil); err != nil {
		t.Fatal(err)
	}
	sameRun(t, here.OutDir, remote.OutDir)
}

// TestPBTSameResultsAsLocal trains a PBT population whose fitness comes
// from training episodes and whose hyperparameters start drawn from their
// ranges, locally and through two NATS workers: the same bytes (the
// workers' reports carry the episode returns PBT's t-test reads).
func TestPBTSameResultsAsLocal(t *testing.T) { pbtSameResultsAsLocal(t, "") }

// TestPB2SameResultsAsLocal does the same with PB2's explore, whose
// observations come from the fitness the workers report.
func TestPB2SameResultsAsLocal(t *testing.T) { pbtSameResultsAsLocal(t, evo.ExplorePB2) }

func pbtSameResultsAsLocal(t *testing.T, explore string) {
	pbt := func() evo.Config {
		cfg := tiny(t)
		cfg.Population.Size = 4
		cfg.Population.MaxSteps = 3 * 4 * 256
		cfg.Population.Selection, cfg.Population.Fitness, cfg.Population.Init = evo.SelectPBT, evo.FitnessTrain, evo.InitSample
		p := evo.DefaultPBT()
		p.TTest = false
		if explore == evo.ExplorePB2 {
			p.Explore, p.PB2Region = explore, evo.DefaultPB2Region
			cfg.Population.MaxSteps = 4 * 4 * 256 // PB2's model from generation 2 on
			// and the KL-adaptive rate, whose state the agents' files carry
			cfg.PPO.KLThreshold = 0.01
			cfg.HP["kl_threshold"] = evo.HPRange{Min: 0.002, Max: 0.05, Grow: 1.2, Shrink: 0.8}
		}
		cfg.PBT = &p
		cfg.HP["gamma"] = evo.HPRange{Min: 0.9, Max: 0.999, Grow: 1.2, Shrink: 0.8}
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	want := localRun(t, pbt())
	s := startServer(t)
	startWorkers(t, s, 2, 1, nil)
	cfg := pbt()
	if _, err := runNATS(t, s, cfg, false, nil); err != nil {
		t.Fatal(err)
	}
	sameRun(t, want, cfg.OutDir)
	if m := runtest.Metrics(t, want); !strings.Contains(strings.Join(m[len(m)-1], ","), "pbt") {
		t.Errorf("the last generation's rows do not show PBT: %v", m[len(m)-1])
	}
	if explore == evo.ExplorePB2 { // PBT's step clock: an agent that waits gets no task
		m := runtest.Metrics(t, want)
		loss, idle := slices.Index(m[0], "loss"), 0
		for _, r := range m[1:] {
			if r[loss] == "NaN" {
				idle++
			}
		}
		if idle == 0 {
			t.Error("no agent waited for PBT's step clock: the run does not test it")
		}
	}
	if explore == evo.ExplorePB2 {
		all := ""
		for _, r := range runtest.Metrics(t, want) {
			all += strings.Join(r, ",")
		}
		if !strings.Contains(all, "explore (pb2") {
			t.Error("no clone explored by PB2's model")
		}
	}
}

// TestVersionNamesTheKernels: the build identity that coordinator and
// workers compare names the numeric kernels, so that a worker whose CPU runs
// the plain-Go loops (which round differently from the AVX2+FMA assembly)
// cannot join a run of the other kind.
func TestVersionNamesTheKernels(t *testing.T) {
	want := " kernels " + simd.Kernels()
	if v := natsrun.Version(); !strings.HasSuffix(v, want) {
		t.Errorf("Version() = %q, want it to end in %q", v, want)
	}
}

// TestResultAboveMaxPayloadFailsTheRun: a result larger than the server's
// max_payload (a generation of many small updates, each with its record)
// was retrained until max_deliver and blamed on the workers; the run now
// fails at once saying what to change.
func TestResultAboveMaxPayloadFailsTheRun(t *testing.T) {
	s := startServerWith(t, server.Options{MaxPayload: 135_000}) // above the object store's 128 KiB chunks
	startWorkers(t, s, 1, 1, nil)
	cfg := tiny(t)
	cfg.PPO.LearnStep, cfg.PPO.BatchSize, cfg.PPO.UpdateEpochs = 2, 2, 1
	cfg.Mutation.RLHP = 0 // no [hp] ranges around these sizes
	delete(cfg.HP, "learn_step")
	delete(cfg.HP, "batch_size")
	cfg.Population.EvoSteps = 12_000 // 6,000 updates a generation, ~100 bytes of record each
	cfg.Population.MaxSteps = 3 * 12_000
	_, err := runNATS(t, s, cfg, false, nil)
	if err == nil || !strings.Contains(err.Error(), "larger than the NATS server's max_payload, 135000 bytes") {
		t.Fatalf("err = %v; want a failure naming max_payload", err)
	}
}

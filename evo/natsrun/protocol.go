package natsrun

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/evolverl/evolve/evo"
	"github.com/evolverl/evolve/internal/simd"
	"github.com/nats-io/nats.go/jetstream"
)

// Names of the JetStream resources (see the package documentation).
const (
	TaskStream     = "EVOLVE_TASKS"
	ResultStream   = "EVOLVE_RESULTS"
	RunBucket      = "EVOLVE_RUNS"
	AgentBucket    = "EVOLVE_AGENTS"
	WorkerConsumer = "workers"

	taskPrefix   = "evolve.tasks."
	resultPrefix = "evolve.results."
)

// protocol numbers the message formats; it is part of Version. 2: a
// result's report carries every PPO update's statistics (Updates). 3: a
// task carries the env steps to train (Steps: under PBT, up to the
// population's step clock).
const protocol = 3

// ErrMismatch is what a coordinator's or a worker's error matches when the
// other side runs another evolve version or another run's config. A worker
// stops on it: it cannot train any task of that coordinator.
var ErrMismatch = errors.New("evolve version or run mismatch")

// ErrUndelivered is what a coordinator's error matches when a task was
// delivered max_deliver times without a result (Settings.MaxDeliver): the
// run stops, whole up to its last checkpoint, and resumes from it.
var ErrUndelivered = errors.New("its workers failed, were killed or lost the server each time")

// ErrRefused is what a coordinator's error matches when a worker refused a
// task of its run, by its operator's policy (the run is on a "gym:" env
// and the worker was not started with -gym-python naming the run's
// interpreter: Worker.GymPython) or because the worker cannot train the
// run as it is set up (its memory for Worker.Slots agents, an env its
// machine cannot make). The error also matches evo.ErrBadInput, and its
// message says why. The refusing worker is not stopped: it goes on
// training the tasks of other runs.
var ErrRefused = errors.New("a worker refused the run")

// inputError is an error that also matches evo.ErrBadInput without adding
// words to its message: a policy refusal (which matches ErrRefused through
// its wrapped error), a run another coordinator trains (evo.ErrRunInUse).
type inputError struct{ err error }

func (e inputError) Error() string   { return e.err.Error() }
func (e inputError) Unwrap() []error { return []error{e.err, evo.ErrBadInput} }

// Version identifies the evolve build: the version of module
// github.com/evolverl/evolve in the program (with the VCS revision when the
// build recorded one), the protocol number and the numeric kernels the
// machine runs (AVX2+FMA assembly, or the plain-Go loops of other CPUs and
// architectures, which round differently: a fleet of both would make a
// run's results depend on which machine took which task). Coordinator and
// workers must report the same.
func Version() string {
	v, rev := "(unknown)", ""
	if info, ok := debug.ReadBuildInfo(); ok {
		const path = "github.com/evolverl/evolve"
		if info.Main.Path == path {
			v = info.Main.Version
		}
		for _, d := range info.Deps {
			if d.Path == path {
				v = d.Version
			}
		}
		for _, s := range info.Settings {
			switch {
			case s.Key == "vcs.revision":
				rev = s.Value + rev
			case s.Key == "vcs.modified" && s.Value == "true":
				rev += "+modified"
			}
		}
	}
	if rev != "" {
		v += " " + rev
	}
	return fmt.Sprintf("%s protocol %d kernels %s", v, protocol, simd.Kernels())
}

// runID names a run on the server: a hash of the config's
// GenerationsDigest and the run's key (runKey).
func runID(digest, key string) string {
	sum := sha256.Sum256([]byte(digest + "\n" + key))
	return hex.EncodeToString(sum[:8])
}

// runInfo is the value of a run's key in the RunBucket.
type runInfo struct {
	Version string `json:"evolve_version"`
	Digest  string `json:"config_digest"`
	Session string `json:"session"`
	Config  string `json:"config"` // TOML, as evo.Config.TOML writes it
}

// taskMsg is a task on the work queue.
type taskMsg struct {
	ID         string `json:"id"` // <run>.<session>.g<gen>.a<index>
	Version    string `json:"evolve_version"`
	Run        string `json:"run"`
	Session    string `json:"session"`
	Digest     string `json:"config_digest"`
	Generation int    `json:"generation"`
	Index      int    `json:"index"`
	Parent     int    `json:"parent"`
	Mutation   string `json:"mutation"`
	EvalSeed   int64  `json:"eval_seed"`
	Steps      int    `json:"steps,omitempty"` // evo.Task.Steps
	Agent      string `json:"agent"`           // object name in AgentBucket
}

// resultMsg is a worker's answer to a task: a report and the trained
// agent's object, a training error, or a refusal.
type resultMsg struct {
	Task    string
	Worker  string
	Version string
	Digest  string
	Report  evo.MemberReport
	Agent   string // object name in AgentBucket
	Err     string // the task failed: the run fails with this error
	Refused string // the worker would not run the task: why
	// Policy marks a refusal by the worker's policy (ErrRefused) rather
	// than for a mismatch (ErrMismatch).
	Policy bool
}

func (r resultMsg) encode() ([]byte, error) {
	var b bytes.Buffer
	err := gob.NewEncoder(&b).Encode(r)
	return b.Bytes(), err
}

func decodeResult(b []byte) (resultMsg, error) {
	var r resultMsg
	err := gob.NewDecoder(bytes.NewReader(b)).Decode(&r)
	return r, err
}

func decodeTask(b []byte) (taskMsg, error) {
	var t taskMsg
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	err := d.Decode(&t)
	if err == nil && (t.ID == "" || t.Run == "" || t.Agent == "" || !strings.HasPrefix(t.Agent, t.Run+"/")) {
		err = fmt.Errorf("task %.80q is incomplete or names an agent outside its run", t.ID)
	}
	return t, err
}

// decodeTaskLoosely reads what it can of a task another build wrote
// (fields this one does not know are skipped): enough to refuse it naming
// its build, or to tell its coordinator why it cannot be trained.
func decodeTaskLoosely(b []byte) (taskMsg, error) {
	var t taskMsg
	err := json.Unmarshal(b, &t)
	if err == nil && (t.ID == "" || t.Run == "") {
		err = errors.New("no task id or run")
	}
	return t, err
}

// Settings are the work queue's delivery settings, owned by the
// coordinator, which creates the resources.
type Settings struct {
	// AckWait is how long a task may go without an ack or a progress
	// report before it is redelivered (default 30 s; workers report
	// progress every third of it).
	AckWait time.Duration
	// MaxDeliver is how many times a task is delivered before the run
	// fails (default 5).
	MaxDeliver int
}

func (s Settings) withDefaults() Settings {
	if s.AckWait <= 0 {
		s.AckWait = 30 * time.Second
	}
	if s.MaxDeliver <= 0 {
		s.MaxDeliver = 5
	}
	return s
}

// handles are the server resources both sides use.
type handles struct {
	js      jetstream.JetStream
	tasks   jetstream.Stream
	results jetstream.Stream
	runs    jetstream.KeyValue
	agents  jetstream.ObjectStore
	// agentStream is the stream under agents, to purge the delete
	// markers the object store leaves (see deleteAgentFile).
	agentStream jetstream.Stream
}

// createResources creates (or updates) the streams, buckets and the
// workers' consumer.
func createResources(ctx context.Context, js jetstream.JetStream, s Settings) (handles, jetstream.Consumer, error) {
	h := handles{js: js}
	var err error
	wrap := func(what string, err error) error { return fmt.Errorf("create %s on the NATS server: %w", what, err) }
	if h.tasks, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: TaskStream, Subjects: []string{taskPrefix + ">"},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage}); err != nil {
		return h, nil, wrap("stream "+TaskStream, err)
	}
	if h.results, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: ResultStream, Subjects: []string{resultPrefix + ">"},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage}); err != nil {
		return h, nil, wrap("stream "+ResultStream, err)
	}
	if h.runs, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: RunBucket, Storage: jetstream.FileStorage}); err != nil {
		return h, nil, wrap("key-value bucket "+RunBucket, err)
	}
	if h.agents, err = js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: AgentBucket, Storage: jetstream.FileStorage}); err != nil {
		return h, nil, wrap("object store "+AgentBucket, err)
	}
	if h.agentStream, err = js.Stream(ctx, agentStreamName); err != nil {
		return h, nil, wrap("object store "+AgentBucket, err)
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, TaskStream, jetstream.ConsumerConfig{Durable: WorkerConsumer,
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: s.AckWait, MaxDeliver: s.MaxDeliver, MaxAckPending: -1})
	if err != nil {
		return h, nil, wrap("consumer "+WorkerConsumer, err)
	}
	return h, cons, nil
}

// openResources opens what the coordinator created; it fails until a
// coordinator has run once on the server.
func openResources(ctx context.Context, js jetstream.JetStream) (handles, jetstream.Consumer, error) {
	h := handles{js: js}
	cons, err := js.Consumer(ctx, TaskStream, WorkerConsumer)
	if err != nil {
		return h, nil, err
	}
	if h.results, err = js.Stream(ctx, ResultStream); err != nil {
		return h, nil, err
	}
	if h.runs, err = js.KeyValue(ctx, RunBucket); err != nil {
		return h, nil, err
	}
	if h.agents, err = js.ObjectStore(ctx, AgentBucket); err != nil {
		return h, nil, err
	}
	if h.agentStream, err = js.Stream(ctx, agentStreamName); err != nil {
		return h, nil, err
	}
	return h, cons, nil
}

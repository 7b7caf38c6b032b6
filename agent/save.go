package agent

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/internal/atomicfile"
	"github.com/evolverl/evolve/internal/jsonfloat"
	"github.com/evolverl/evolve/netconf"
)

// An agent file is one safetensors file (see safetensors.go) that any
// safetensors reader can open. Its float32 tensors are
//
//	actor.<name>          every tensor of the actor's netconf.Params, e.g. actor.encoder.mlp.0.weight
//	critic.<name>         the critic's tensors (only head.* and out.* when share_encoders is set:
//	                      the critic then reads the actor's encoder.* and latent.*)
//	actor.log_std         [action dims], Gaussian (Box) policies only
//	adam.m.<tensor>       Adam's first moment of each tensor above, with the tensor's full name
//	adam.v.<tensor>       (adam.m.actor.encoder.mlp.0.weight, ..., adam.v.actor.log_std)
//	norm.mean, norm.var   [observation size], when normalize_obs is set: the running
//	                      statistics rounded to float32, for readers in other languages
//	rnd.*                 with rnd_coef > 0: RND's networks and moments (rnd_save.go)
//
// and its "__metadata__" holds the strings
//
//	format    "evolve-agent"
//	version   "2" when the description holds the env, else "1"
//	agent     the JSON description below
//	checksum  "sha256:<hex>" of the data section, added and checked by the codec
//
// The agent description is a JSON object with the keys observation_space and
// action_space (envs.MarshalSpace form), config (Config, including the
// architecture "net"), actor and critic (the full netconf specs, with input,
// output and output gain), adam ({lr, beta1, beta2, eps, step}), norm
// ({count, mean, var}, present when normalize_obs is set), steps, updates,
// total_steps, rng (the PCG state from MarshalBinary, standard base64),
// history (the mutation descriptions, oldest first) and, in version 2 only,
// env ({id, options}: the env it was trained on, as envs.Make takes it).
//
// The normaliser keeps float64 statistics. They are stored exactly in the
// description: finite values as JSON numbers in Go's shortest round-trip
// form, non-finite ones as the strings "nan", "inf" and "-inf". The norm.*
// tensors must equal those values rounded to float32; Load checks it.
//
// Not stored: the rollout in progress, the graphs, and the recurrent state
// Act keeps per row. A loaded agent starts with none of them, so Train
// resets the vector it is given (with a seed drawn from the restored RNG,
// exactly as the saved agent would have for a new vector), and a recurrent
// agent acts from a zero state as at an episode start.
const (
	fileFormat = "evolve-agent"
	// fileVersion is the layout Save writes when the agent's env is known:
	// version 1 and the description's "env". Without it Save writes version
	// 1, which earlier builds read.
	fileVersion  = "2"
	fileVersion1 = "1"

	// maxAgentFileBytes bounds the size of a file Load reads.
	maxAgentFileBytes = 1 << 30
)

// agentJSON is the "agent" metadata entry.
type agentJSON struct {
	ObservationSpace json.RawMessage `json:"observation_space"`
	ActionSpace      json.RawMessage `json:"action_space"`
	Config           Config          `json:"config"`
	Actor            netconf.Spec    `json:"actor"`
	Critic           netconf.Spec    `json:"critic"`
	Adam             adamJSON        `json:"adam"`
	Norm             *normJSON       `json:"norm,omitempty"`
	RewardNorm       *normJSON       `json:"reward_norm,omitempty"` // normalize_reward only
	ValueNorm        *normJSON       `json:"value_norm,omitempty"`  // normalize_value only
	Steps            int             `json:"steps"`
	Updates          int             `json:"updates"`
	TotalSteps       int             `json:"total_steps"`
	RNG              string          `json:"rng"`
	History          []string        `json:"history"`
	Env              *EnvRef         `json:"env,omitempty"` // version 2 only
	RND              *rndJSON        `json:"rnd,omitempty"` // rnd_coef > 0 only (see rnd_save.go)
}

type adamJSON struct {
	LR    float64 `json:"lr"`
	Beta1 float64 `json:"beta1"`
	Beta2 float64 `json:"beta2"`
	Eps   float64 `json:"eps"`
	Step  int     `json:"step"`
}

type normJSON struct {
	Count jsonfloat.F64   `json:"count"`
	Mean  []jsonfloat.F64 `json:"mean"`
	Var   []jsonfloat.F64 `json:"var"`
}

// tensorNames returns the file names of the tensors of (*PPO).tensors(), in
// the same order.
func (a *PPO) tensorNames() []string {
	var names []string
	eachTensor(a.actor, a.critic, &a.logStd, a.dist.stdShape(), func(name string, _ []int, _ *[]float32) { names = append(names, name) })
	return names
}

// tensorShapes returns the shapes of (*PPO).tensors(), in the same order.
func (a *PPO) tensorShapes() [][]int {
	var shapes [][]int
	eachTensor(a.actor, a.critic, &a.logStd, a.dist.stdShape(), func(_ string, shape []int, _ *[]float32) { shapes = append(shapes, shape) })
	return shapes
}

// encodeFile returns the tensors and metadata of the agent's file.
func (a *PPO) encodeFile() ([]namedTensor, map[string]string, error) {
	if a == nil || a.obsSpace == nil {
		return nil, nil, errors.New("the agent is not built (make it with agent.New or agent.Load)")
	}
	names, shapes, data := a.tensorNames(), a.tensorShapes(), a.tensors()
	if len(a.adam.M) != len(data) || len(a.adam.V) != len(data) {
		return nil, nil, fmt.Errorf("optimizer holds %d/%d moments for %d tensors", len(a.adam.M), len(a.adam.V), len(data))
	}
	tensors := make([]namedTensor, 0, 3*len(data)+2)
	for i := range data {
		tensors = append(tensors, namedTensor{Name: names[i], Shape: shapes[i], Data: data[i]})
	}
	for _, mom := range []struct {
		prefix string
		m      [][]float32
	}{{"adam.m.", a.adam.M}, {"adam.v.", a.adam.V}} {
		for i, m := range mom.m {
			if len(m) != len(data[i]) {
				return nil, nil, fmt.Errorf("optimizer moment of %s has %d values, the tensor %d", names[i], len(m), len(data[i]))
			}
			tensors = append(tensors, namedTensor{Name: mom.prefix + names[i], Shape: shapes[i], Data: m})
		}
	}
	d := agentJSON{
		Config: a.cfg, Actor: a.actorSpec, Critic: a.criticSpec,
		Adam:  adamJSON{LR: a.adam.LR, Beta1: a.adam.Beta1, Beta2: a.adam.Beta2, Eps: a.adam.Eps, Step: a.adam.Step},
		Steps: a.Steps, Updates: a.Updates, TotalSteps: a.TotalSteps, History: a.History,
		RewardNorm: scalarNormJSON(a.rewNorm), ValueNorm: scalarNormJSON(a.valNorm),
	}
	var err error
	if d.ObservationSpace, err = envs.MarshalSpace(a.obsSpace); err != nil {
		return nil, nil, fmt.Errorf("observation space: %w", err)
	}
	if d.ActionSpace, err = envs.MarshalSpace(a.actSpace); err != nil {
		return nil, nil, fmt.Errorf("action space: %w", err)
	}
	if a.norm != nil {
		d.Norm = &normJSON{Count: jsonfloat.F64(a.norm.Count), Mean: jsonfloat.Convert[jsonfloat.F64](a.norm.Mean), Var: jsonfloat.Convert[jsonfloat.F64](a.norm.Var)}
		for _, s := range []struct {
			name string
			x    []float64
		}{{"norm.mean", a.norm.Mean}, {"norm.var", a.norm.Var}} {
			f := make([]float32, len(s.x))
			for i, v := range s.x {
				f[i] = float32(v)
			}
			tensors = append(tensors, namedTensor{Name: s.name, Shape: []int{len(f)}, Data: f})
		}
	}
	rndTensors, rndDesc := a.rndFile()
	tensors = append(tensors, rndTensors...)
	d.RND = rndDesc
	rng, err := a.pcg.MarshalBinary()
	if err != nil {
		return nil, nil, fmt.Errorf("rng state: %w", err)
	}
	d.RNG = base64.StdEncoding.EncodeToString(rng)
	if d.Env, err = envRefJSON(a.Env); err != nil {
		return nil, nil, err
	}
	desc, err := json.Marshal(d)
	if err != nil {
		return nil, nil, fmt.Errorf("agent description: %w", err)
	}
	version := fileVersion1
	if d.Env != nil {
		version = fileVersion
	}
	meta := map[string]string{"format": fileFormat, "version": version, "agent": string(desc)}
	return tensors, meta, nil
}

// Save writes the whole agent — spaces, config, network specs, weights,
// optimizer state, observation statistics, counters, RNG state and mutation
// history — to path as one safetensors file that Load reads back. The write
// is atomic: a reader sees the old file or the new one, never a part, and a
// failed Save leaves any existing file untouched. The rollout in progress
// and the recurrent state of Act are not saved.
func (a *PPO) Save(path string) error {
	tensors, meta, err := a.encodeFile()
	if err == nil {
		err = atomicfile.Write(path, func(w io.Writer) error { return encodeSafetensors(w, tensors, meta) })
	}
	if err != nil {
		return fmt.Errorf("agent: save %s: %w", path, err)
	}
	return nil
}

// Encode returns the bytes Save would write to a file, for agents that
// travel without one (workers over NATS).
func (a *PPO) Encode() ([]byte, error) {
	tensors, meta, err := a.encodeFile()
	var b bytes.Buffer
	if err == nil {
		err = encodeSafetensors(&b, tensors, meta)
	}
	if err != nil {
		return nil, fmt.Errorf("agent: encode: %w", err)
	}
	return b.Bytes(), nil
}

// Decode reads an agent from the bytes of a file Save wrote (or Encode
// returned), with every check of Load; file must not be larger than Load
// accepts.
func Decode(file []byte) (*PPO, error) {
	if int64(len(file)) > maxAgentFileBytes {
		return nil, fmt.Errorf("agent: decode: %d bytes, more than the %d-byte limit", len(file), int64(maxAgentFileBytes))
	}
	a, err := decodeAgent(file)
	if err != nil {
		return nil, fmt.Errorf("agent: decode: %w", err)
	}
	return a, nil
}

// Load reads an agent written by Save. Nothing in the file is trusted: the
// file may be at most 1 GiB; the safetensors layout, the checksum, the
// format and version, the description (unknown fields are an error), the
// spaces, the config and the specs are all checked, every tensor the specs
// imply must be present with exactly its shape and no other tensor may be,
// and all of it before the weights are allocated. The agent acts and, given
// the same env seeds, trains exactly as the saved one would have; it has no
// rollout in progress, so Train resets the vector it is first given.
// Weights are taken as they are, finite or not (a checkpoint keeps a
// diverged agent as it was): CheckFinite tells, and Act refuses to act on
// non-finite outputs. The file's network backend must be registered in the
// program: an agent trained with the gorgonia backend needs an import of
// github.com/evolverl/evolve/nn/gorgonia, the default one none.
func Load(path string) (*PPO, error) {
	file, err := readFileLimited(path, maxAgentFileBytes)
	if err != nil {
		return nil, fmt.Errorf("agent: load %s: %w", path, err)
	}
	a, err := decodeAgent(file)
	if err != nil {
		return nil, fmt.Errorf("agent: load %s: %w", path, err)
	}
	return a, nil
}

// decodeAgent parses and checks a whole agent file held in memory.
func decodeAgent(file []byte) (*PPO, error) {
	tensors, meta, err := decodeSafetensors(file)
	if err != nil {
		return nil, err
	}
	d, version, err := decodeMeta(meta)
	if err != nil {
		return nil, err
	}
	obs, err := envs.UnmarshalSpace(d.ObservationSpace)
	if err != nil {
		return nil, fmt.Errorf("observation_space: %w", err)
	}
	act, err := envs.UnmarshalSpace(d.ActionSpace)
	if err != nil {
		return nil, fmt.Errorf("action_space: %w", err)
	}
	if err := d.Config.Validate(); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	a := &PPO{cfg: d.Config, obsSpace: obs, actSpace: act}
	if err := a.setSpecs(d.Config.Net); err != nil {
		return nil, fmt.Errorf("config.net: %w", err)
	}
	if a.Env, err = decodeEnvRef(d.Env, version); err != nil {
		return nil, err
	}
	if err := a.sameSpecs(d); err != nil {
		return nil, err
	}
	if err := a.allocate(tensors); err != nil {
		return nil, err
	}
	if err := a.bindTensors(tensors, d); err != nil {
		return nil, err
	}
	if err := a.restoreState(d); err != nil {
		return nil, err
	}
	return a, nil
}

// decodeMeta checks the file's metadata — only the known keys, the
// format, a version this build reads, a checksum entry (the codec checked
// it) — and decodes the agent description strictly.
func decodeMeta(meta map[string]string) (d agentJSON, version string, err error) {
	for k := range meta {
		switch k {
		case "format", "version", "agent", "checksum":
		default:
			return d, "", fmt.Errorf("metadata: unexpected key %.60q", k)
		}
	}
	if f := meta["format"]; f != fileFormat {
		return d, "", fmt.Errorf("metadata: format %.60q, want %q (not an evolve agent file)", f, fileFormat)
	}
	version = meta["version"]
	if version != fileVersion && version != fileVersion1 {
		return d, "", fmt.Errorf("metadata: version %.60q, this build reads versions %s and %s", version, fileVersion1, fileVersion)
	}
	if _, ok := meta["checksum"]; !ok {
		return d, "", errors.New("metadata: no checksum")
	}
	if err := decodeStrict(meta["agent"], &d); err != nil {
		return d, "", fmt.Errorf("metadata: agent description: %w", err)
	}
	return d, version, nil
}

// sameSpecs checks that the description's specs are those its config and
// spaces imply, which a holds.
func (a *PPO) sameSpecs(d agentJSON) error {
	for _, s := range []struct {
		key       string
		got, want netconf.Spec
	}{{"actor", d.Actor, a.actorSpec}, {"critic", d.Critic, a.criticSpec}} {
		gj, err1 := json.Marshal(s.got)
		wj, err2 := json.Marshal(s.want)
		if err := errors.Join(err1, err2); err != nil {
			return fmt.Errorf("%s spec: %w", s.key, err)
		}
		if !bytes.Equal(gj, wj) {
			return fmt.Errorf("%s spec %v (input %v, output %d) differs from the one config.net and the spaces imply: %v (input %v, output %d)",
				s.key, s.got, s.got.Input, s.got.Output, s.want, s.want.Input, s.want.Output)
		}
	}
	return nil
}

// allocate gives a zeroed networks (and log-std) of its specs, after
// checking that the file holds at least as many values, so that a small
// file cannot make it allocate much.
func (a *PPO) allocate(tensors []namedTensor) error {
	// Bound the allocation below by what the file holds: a valid file has
	// the weights of the actor and of the critic's head and two moments of
	// each, so it always holds at least as many values as both full networks.
	held := int64(0)
	for _, t := range tensors {
		held += int64(len(t.Data))
	}
	na, errA := netconf.ParamCount(a.actorSpec)
	nc, errC := netconf.ParamCount(a.criticSpec)
	if err := errors.Join(errA, errC); err != nil {
		return fmt.Errorf("specs: %w", err)
	}
	if need := min(na+nc, 1<<62); need > held {
		return fmt.Errorf("the specs need %d weights for actor and critic, but the file holds only %d values", need, held)
	}
	actor, err := netconf.Zeros(a.actorSpec)
	if err != nil {
		return fmt.Errorf("actor spec: %w", err)
	}
	critic, err := netconf.Zeros(a.criticSpec)
	if err != nil {
		return fmt.Errorf("critic spec: %w", err)
	}
	a.actor, a.critic = actor, a.criticParams(critic)
	if a.dist.kind == gaussian {
		a.logStd = make([]float32, a.dist.stdLen())
	}
	return nil
}

// bindTensors points the networks, log-std, Adam's moments and the
// normaliser's float32 statistics at the file's tensors, each of the shape
// the specs imply; none may be missing and no other may be present.
func (a *PPO) bindTensors(tensors []namedTensor, d agentJSON) error {
	names, shapes, dsts := a.tensorNames(), a.tensorShapes(), a.tensors()
	type want struct {
		shape []int
		dst   *[]float32
	}
	wanted := make(map[string]want, 3*len(names)+2)
	order := make([]string, 0, 3*len(names)+2)
	add := func(name string, shape []int, dst *[]float32) {
		wanted[name] = want{shape, dst}
		order = append(order, name)
	}
	// Weights are written into the params' Data (the tensors are laid out
	// by the specs, so the file's data, of the same shape, can replace them).
	eachTensor(a.actor, a.critic, &a.logStd, a.dist.stdShape(), add)
	a.adam = &Adam{LR: d.Adam.LR, Beta1: d.Adam.Beta1, Beta2: d.Adam.Beta2, Eps: d.Adam.Eps, Step: d.Adam.Step,
		M: make([][]float32, len(dsts)), V: make([][]float32, len(dsts))}
	for i := range dsts {
		add("adam.m."+names[i], shapes[i], &a.adam.M[i])
	}
	for i := range dsts {
		add("adam.v."+names[i], shapes[i], &a.adam.V[i])
	}
	var normMean, normVar []float32
	if a.cfg.NormalizeObs {
		n := []int{a.obsSpace.FlatSize()}
		add("norm.mean", n, &normMean)
		add("norm.var", n, &normVar)
	}
	if err := a.rndAllocate(add); err != nil {
		return err
	}
	got := make(map[string]bool, len(tensors))
	for _, t := range tensors {
		w, ok := wanted[t.Name]
		if !ok {
			return fmt.Errorf("unexpected tensor %.80q (not part of this agent's networks, optimizer or normaliser)", t.Name)
		}
		if !slices.Equal(t.Shape, w.shape) {
			return fmt.Errorf("tensor %q has shape %v, the specs imply %v", t.Name, t.Shape, w.shape)
		}
		got[t.Name] = true
		*w.dst = t.Data
	}
	for _, name := range order {
		if !got[name] {
			return fmt.Errorf("tensor %q is missing", name)
		}
	}
	if err := a.loadNorm(d.Norm, normMean, normVar); err != nil {
		return fmt.Errorf("norm: %w", err)
	}
	var err error
	if a.rewNorm, err = loadScalarNorm(d.RewardNorm, "normalize_reward", a.cfg.NormalizeReward, "the discounted return"); err != nil {
		return fmt.Errorf("reward_norm: %w", err)
	}
	if a.valNorm, err = loadScalarNorm(d.ValueNorm, "normalize_value", a.cfg.NormalizeValue, "the value targets"); err != nil {
		return fmt.Errorf("value_norm: %w", err)
	}
	return a.rndRestore(d.RND)
}

// restoreState restores the optimizer's settings, the counters, the
// history and the random generator.
func (a *PPO) restoreState(d agentJSON) error {
	if err := checkAdam(d.Adam); err != nil {
		return fmt.Errorf("adam: %w", err)
	}
	for _, c := range []struct {
		key string
		v   int
	}{{"steps", d.Steps}, {"updates", d.Updates}, {"total_steps", d.TotalSteps}} {
		if c.v < 0 {
			return fmt.Errorf("%s = %d: want >= 0", c.key, c.v)
		}
	}
	a.Steps, a.Updates, a.TotalSteps = d.Steps, d.Updates, d.TotalSteps
	a.History = d.History
	state, err := base64.StdEncoding.DecodeString(d.RNG)
	if err != nil {
		return fmt.Errorf("rng: not base64: %w", err)
	}
	a.pcg = &rand.PCG{}
	if err := a.pcg.UnmarshalBinary(state); err != nil {
		return fmt.Errorf("rng: %w", err)
	}
	a.rng = rand.New(a.pcg)
	return nil
}

// decodeStrict decodes one JSON value into v, refusing unknown fields and
// anything after the value.
func decodeStrict(s string, v any) error {
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON object")
	}
	return nil
}

func checkAdam(d adamJSON) error {
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	switch {
	case !(d.LR >= 0) || !finite(d.LR):
		return fmt.Errorf("lr = %v: want a finite value >= 0", d.LR)
	case !(d.Beta1 >= 0 && d.Beta1 < 1):
		return fmt.Errorf("beta1 = %v: want [0, 1)", d.Beta1)
	case !(d.Beta2 >= 0 && d.Beta2 < 1):
		return fmt.Errorf("beta2 = %v: want [0, 1)", d.Beta2)
	case !(d.Eps > 0) || !finite(d.Eps):
		return fmt.Errorf("eps = %v: want a finite value > 0", d.Eps)
	case d.Step < 0:
		return fmt.Errorf("step = %d: want >= 0", d.Step)
	}
	return nil
}

// loadNorm restores the normaliser from its exact description and checks
// the float32 tensors against it.
func (a *PPO) loadNorm(d *normJSON, mean, vars []float32) error {
	if !a.cfg.NormalizeObs {
		if d != nil {
			return errors.New("statistics given, but config.normalize_obs is false")
		}
		return nil
	}
	if d == nil {
		return errors.New("missing, but config.normalize_obs is true")
	}
	n := a.obsSpace.FlatSize()
	if len(d.Mean) != n || len(d.Var) != n {
		return fmt.Errorf("%d means and %d variances for observations of size %d", len(d.Mean), len(d.Var), n)
	}
	if c := float64(d.Count); !(c > 0) {
		return fmt.Errorf("count = %v: want > 0", c)
	}
	for i := range n {
		if v := float64(d.Var[i]); v < 0 {
			return fmt.Errorf("var[%d] = %v: want >= 0", i, v)
		}
		for _, c := range []struct {
			name  string
			exact jsonfloat.F64
			f32   float32
		}{{"mean", d.Mean[i], mean[i]}, {"var", d.Var[i], vars[i]}} {
			r := float32(c.exact)
			if math.Float32bits(r) != math.Float32bits(c.f32) && !(r != r && c.f32 != c.f32) {
				return fmt.Errorf("tensor norm.%s[%d] = %v, but the description's %v rounds to %v", c.name, i, c.f32, float64(c.exact), r)
			}
		}
	}
	a.norm = &RunningNorm{Mean: jsonfloat.Convert[float64](d.Mean), Var: jsonfloat.Convert[float64](d.Var), Count: float64(d.Count)}
	return nil
}

package evo

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/netconf"
)

// maxAgentFile is the largest agent file agent.Load reads (1 GiB): an
// agent whose file would be bigger could train, but no checkpoint of it
// could be resumed and no elite file loaded.
const maxAgentFile = 1 << 30

// Assumptions of the memory estimate that no config key sets.
const (
	// envBytes is charged for the state of each env of a training vector
	// and each evaluation env (Box2D's lander is the largest built in).
	envBytes = 64 << 10
	// baseBytes is the program itself: runtime, code, metrics, one env's
	// spaces.
	baseBytes = 128 << 20
	// fallbackMemory is the machine's memory when neither GOMEMLIMIT, the
	// cgroup limit nor /proc/meminfo gives it (not Linux).
	fallbackMemory = 16 << 30
)

// checkMemory refuses a config whose estimated memory exceeds the budget
// (memoryBudget), or whose agent files would be too big for agent.Load,
// with an error naming the keys that dominate. It allocates nothing in
// proportion to the sizes it checks. When the spaces or the network do not
// fit together it returns nil: agent.New then says why, before it
// allocates anything either.
func (c Config) checkMemory(obs, act envs.Space) error {
	est, err := c.estimate(obs, act)
	if err != nil {
		return nil
	}
	var errs []error
	if est.agentFile > maxAgentFile {
		errs = append(errs, fmt.Errorf("%s: an agent has %s weights (actor, critic and log-std); its file (weights and Adam's two moments, 12 bytes a weight) would take %s, more than the 1 GiB agent.Load reads, so no checkpoint of the run could be resumed",
			strings.Join(est.netKeys, ", "), commas(est.weights), gbString(est.agentFile)))
	}
	budget, from := memoryBudget()
	if est.total > budget {
		errs = append(errs, est.refusal(budget, from))
	}
	return errors.Join(errs...)
}

// memPart is one part of a memory estimate: what it holds, the keys that
// set its size, and its bytes.
type memPart struct {
	what  string
	keys  []string
	bytes int64
}

// memEstimate is what a run of a config needs, from its sizes and the
// env's spaces (see docs/config.md, "Memory").
type memEstimate struct {
	agents   int64     // population.size
	perAgent []memPart // each agent's, held for the whole run
	once     []memPart // the run's, whatever its population
	total    int64     // agents · Σ perAgent + Σ once, saturated
	// weights counts one agent's trainable values (actor, critic, log-std);
	// netKeys names the [net] keys that set most of them.
	weights int64
	netKeys []string
	// agentFile is the size of one agent file, checkpoint that of one
	// checkpoint directory on disk.
	agentFile, checkpoint int64
	// rndTarget and rndTrained are RND's weights (rnd_coef > 0): the fixed
	// target's, and the predictor's and intrinsic critic's (in weights).
	rndTarget, rndTrained int64
}

// estimate computes c's memEstimate for an env of the given spaces, with
// saturating arithmetic, from the specs alone: nothing is allocated in
// proportion to any size. learn_step and batch_size count at the largest
// value their [hp] range lets rl_hp mutations reach; the networks count at
// their initial size. It fails when the spaces or the network do not fit.
func (c Config) estimate(obs, act envs.Space) (memEstimate, error) {
	if len(c.Net.Memories) > 1 && c.Net.Recurrent() {
		// A memory gene counts its largest model.
		var most memEstimate
		for _, k := range c.Net.Memories {
			one := c
			net, err := c.Net.WithMemory(k)
			if err != nil {
				return memEstimate{}, err
			}
			net.Memories = nil
			one.Net = net
			e, err := one.estimate(obs, act)
			if err != nil {
				return memEstimate{}, fmt.Errorf("net.memory %q: %w", k, err)
			}
			if e.total > most.total {
				most = e
			}
		}
		return most, nil
	}
	actor, critic, logStd, err := agent.DeriveSpecs(obs, act, c.Net)
	if err != nil {
		return memEstimate{}, err
	}
	if c.PPO.UseSDE {
		logStd *= actor.FeatureWidth() // gSDE's log-std matrix
	}
	na, err := netconf.ParamCount(actor)
	if err != nil {
		return memEstimate{}, err
	}
	nc, err := netconf.ParamCount(critic)
	if err != nil {
		return memEstimate{}, err
	}
	e := memEstimate{agents: int64(c.Population.Size), weights: satAdd(satAdd(na, nc), int64(logStd)), netKeys: netKeys(actor, na)}
	// RND's networks: the predictor and the intrinsic critic train as the
	// others do; the fixed target is weights only.
	if e.rndTarget, e.rndTrained, err = agent.RNDParamCounts(c.PPO, obs.FlatSize()); err != nil {
		return memEstimate{}, err
	}
	e.weights = satAdd(e.weights, e.rndTrained)
	maskN, _ := envs.MaskSize(act)
	in := memInputs{actor: actor, critic: critic, n: int64(max(1, c.Env.NumEnvs)),
		obsN: int64(obs.FlatSize()), actN: int64(act.FlatSize()), mask: int64(maskN)}
	in.learnStep, in.learnKey = int64(c.PPO.LearnStep), "ppo.learn_step"
	if r, ok := c.HP["learn_step"]; ok && r.Max > float64(in.learnStep) {
		in.learnStep, in.learnKey = int64(min(r.Max, maxLearnStep)), "hp.learn_step.max"
	}
	in.batch, in.batchKey = int64(c.PPO.BatchSize), "ppo.batch_size"
	if r, ok := c.HP["batch_size"]; ok && r.Max > float64(in.batch) {
		in.batch, in.batchKey = int64(min(r.Max, maxLearnStep)), "hp.batch_size.max"
	}
	if actor.Recurrent() {
		// h (and an LSTM's c) of every layer, for the actor and the critic.
		in.state = int64(actor.StateSize())
		if !c.PPO.ShareEncoders {
			in.state = satMul(in.state, 2)
		}
	}
	e.perAgent = c.perAgentParts(in, e)
	e.once = c.onceParts(in, &e)
	for _, part := range e.perAgent {
		e.total = satAdd(e.total, satMul(e.agents, part.bytes))
	}
	for _, part := range e.once {
		e.total = satAdd(e.total, part.bytes)
	}
	e.checkpoint = satMul(e.agents, e.agentFile)
	return e, nil
}

// memInputs are the sizes the memory estimate multiplies: the networks,
// the largest learn_step and batch_size the [hp] ranges reach (with the
// key that sets each), the envs of a vector, the flat observation, action
// and mask, and the recurrent state's floats per env.
type memInputs struct {
	actor, critic              netconf.Spec
	learnStep, batch           int64
	learnKey, batchKey         string
	n, obsN, actN, mask, state int64
}

// f32 is the size of a float32.
const f32 = 4

// perAgentParts estimates what every agent holds: its networks, its
// rollout and its update's buffers.
func (c Config) perAgentParts(in memInputs, e memEstimate) []memPart {
	steps := satMul(max(1, in.learnStep/in.n), in.n) // one rollout, all envs
	// The rollout: per step the observation, the action, the state, six
	// floats (log-prob, value, reward, final value, advantage, return), a
	// shuffled index, two flags and the mask; BPTT adds a sequence (three
	// ints) per step at most.
	perStep := satAdd(satMul(f32, satAdd(satAdd(in.obsN, in.actN), satAdd(in.state, 6))), satAdd(8+2, in.mask))
	if in.actor.Recurrent() {
		perStep = satAdd(perStep, 24)
	}
	rollout := satMul(steps, perStep)
	// One update's minibatch: flat rows, or max(1, batch/L) sequences
	// padded to L steps with their initial states.
	rows, rowsKey, seqs := min(in.batch, steps), in.batchKey, int64(0)
	if in.actor.Recurrent() {
		L := int64(c.PPO.MaxSeqLen)
		seqs = max(1, in.batch/L)
		if rows = satMul(seqs, L); in.batch < L {
			rowsKey = "ppo.max_seq_len"
		}
	}
	minibatch := satAdd(satMul(rows, satAdd(satMul(f32, satAdd(satAdd(in.obsN, in.actN), 5)), in.mask)), satMul(seqs, satMul(f32, in.state)))
	// The networks' per-row buffers (activations and their gradients, the
	// distribution's, the preprocessed observations), grown to the largest
	// batch: an update's, or the acting vector's.
	rowA, fixedA := actFloats(in.actor)
	rowC, fixedC := actFloats(in.critic)
	dist := int64(in.actor.Output)
	perRow := satAdd(satAdd(rowA, rowC), satAdd(in.obsN, satAdd(satMul(4, dist), 10)))
	work := satMul(f32, satAdd(satMul(max(rows, in.n), perRow), satAdd(fixedA, fixedC)))
	// Weights, gradients and Adam's two moments, the backend's copies of
	// some weights, and the clone (weights and moments) of each agent made
	// while the next generation is selected: eight floats per weight.
	netBytes := satAdd(satMul(8*f32, e.weights), satMul(2*f32, e.rndTarget))
	if e.rndTrained > 0 {
		// RND's rollout: the raw and normalised observations and next
		// observations, the target's outputs and six floats per step.
		perStep = satAdd(perStep, satMul(f32, satAdd(satMul(4, in.obsN), int64(max(64, c.PPO.RNDEmbed))+6)))
		rollout = satMul(steps, perStep)
	}
	// Each part names its keys, the larger factor first.
	rolloutKeys, workKeys := []string{in.learnKey}, []string{rowsKey}
	if in.state > satAdd(in.obsN, in.actN) {
		rolloutKeys = append(rolloutKeys, e.netKeys...)
	}
	if perRow > rows {
		workKeys = append(slices.Clone(e.netKeys), rowsKey)
	}
	return []memPart{
		{fmt.Sprintf("networks (%s weights, with gradients, Adam's moments and the clone made at selection)", commas(e.weights)), e.netKeys, netBytes},
		{fmt.Sprintf("rollouts (%s: %s steps)", in.learnKey, commas(steps)), rolloutKeys, rollout},
		{fmt.Sprintf("update buffers (%s: %s rows of %s floats)", rowsKey, commas(rows), commas(perRow)), workKeys, satAdd(minibatch, work)},
	}
}

// onceParts estimates what the run holds once, whatever its size: only
// the agents being trained have an env vector and an evaluation env, and
// saving or loading a checkpoint holds one agent file at a time. It sets
// e.agentFile.
func (c Config) onceParts(in memInputs, e *memEstimate) []memPart {
	workers := int64(c.Population.Workers)
	if workers == 0 {
		workers = int64(runtime.GOMAXPROCS(0))
	}
	workers = min(workers, e.agents)
	vec := satMul(workers, satAdd(satMul(in.n, satAdd(envBytes, satMul(3*f32, in.obsN))), envBytes))
	e.agentFile = satAdd(satMul(3*f32, e.weights), satMul(f32, e.rndTarget))
	return []memPart{
		{fmt.Sprintf("env vectors (env.num_envs = %d, %d at once)", in.n, workers), []string{"env.num_envs"}, vec},
		{"one agent file being written or read", e.netKeys, e.agentFile},
		{"the program itself", nil, baseBytes},
	}
}

// refusal is the error of an estimate over budget: the keys of the parts
// that make at least a quarter of it first, then the parts.
func (e memEstimate) refusal(budget int64, from string) error {
	if baseBytes >= budget { // no config fits: the keys would be beside the point
		return fmt.Errorf("the memory budget of %s (%s) is less than the program itself needs, about %s, before any agent: give it more memory",
			gbString(budget), from, gbString(baseBytes))
	}
	type share struct {
		memPart
		total int64
	}
	var parts []share
	var agentsTotal int64
	for _, p := range e.perAgent {
		t := satMul(e.agents, p.bytes)
		agentsTotal = satAdd(agentsTotal, t)
		parts = append(parts, share{p, t})
	}
	for _, p := range e.once {
		parts = append(parts, share{p, p.bytes})
	}
	slices.SortStableFunc(parts, func(a, b share) int { return cmp.Compare(b.total, a.total) })
	var keys []string
	if agentsTotal >= e.total/2 {
		keys = append(keys, fmt.Sprintf("population.size = %d", e.agents))
	}
	var desc []string
	for i, p := range parts {
		if i == 0 || p.total >= e.total/4 {
			for _, k := range p.keys {
				if !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
			}
		}
		if i < 3 && p.total > 0 {
			desc = append(desc, fmt.Sprintf("%s %s", p.what, gbString(p.total)))
		}
	}
	lead := strings.Join(keys, ", ")
	if lead == "" { // no part dominates: the whole run is too big for the budget
		lead = "the run as a whole"
	}
	return fmt.Errorf("%s: the run needs about %s of memory, more than the budget of %s (%s); most of it: %s; an agent needs %s, a checkpoint %s on disk",
		lead, gbString(e.total), gbString(budget), from, strings.Join(desc, ", "),
		gbString(satAdd(satAdd(e.perAgent[0].bytes, e.perAgent[1].bytes), e.perAgent[2].bytes)), gbString(e.checkpoint))
}

// actFloats estimates the floats a backend keeps for a valid spec: per row
// of a batch (about six per unit of a dense layer — output, activation,
// their gradients, LayerNorm's — four per unit of a CNN feature map,
// fourteen per LSTM unit — gates, states, their gradients), and fixed (a
// convolution's im2col scratch for one sample at least).
func actFloats(s netconf.Spec) (perRow, fixed int64) {
	mlp := func(m *netconf.MLP) {
		for _, h := range m.Hidden {
			perRow = satAdd(perRow, satMul(6, int64(h)))
		}
	}
	cnn := func(c *netconf.CNN, in []int) {
		ch, h, w := int64(in[0]), int64(in[1]), int64(in[2])
		for i := range c.Channels {
			k, st := int64(c.Kernels[i]), int64(c.Strides[i])
			ckk := satMul(ch, satMul(k, k))
			ch, h, w = int64(c.Channels[i]), (h-k)/st+1, (w-k)/st+1
			px := satMul(h, w)
			perRow = satAdd(perRow, satMul(4, satMul(ch, px)))
			fixed = satAdd(fixed, satMul(px, satAdd(satMul(2, satAdd(ckk, 1)), ch)))
		}
	}
	latent := satMul(6, int64(s.Latent.Size))
	switch {
	case s.Dict():
		for _, k := range s.Inputs {
			if k.MLP != nil {
				mlp(k.MLP)
			} else if k.CNN != nil {
				cnn(k.CNN, k.Input)
			}
			perRow = satAdd(perRow, latent)
		}
	case s.Encoder == netconf.EncoderMLP:
		mlp(s.MLP)
		perRow = satAdd(perRow, latent)
	case s.Encoder == netconf.EncoderCNN:
		cnn(s.CNN, s.Input)
		perRow = satAdd(perRow, latent)
	case s.Encoder == netconf.EncoderTransformer:
		// Per row a window of Context positions, each keeping about 14 floats per
		// width unit and 3 per MLP unit in each layer, and the attention's Context
		// probabilities per head.
		t := s.Transformer
		perPos := satAdd(satMul(14, int64(t.Width)), satAdd(satMul(3, int64(t.MLP)), int64(t.Heads*t.Context)))
		perRow = satAdd(perRow, satMul(int64(t.Context), satMul(int64(t.Layers), perPos)))
		perRow = satAdd(perRow, latent)
	case s.Recurrent():
		// Per row and unit an LSTM layer keeps 14 floats (gates and their gradients 8, h
		// and c entering, c, tanh c, y and dy), a GRU layer 13 (gates, both gradients 9,
		// r's operand, h entering, y and dy).
		k := int64(14)
		if s.Encoder == netconf.EncoderGRU {
			k = 13
		}
		perRow = satAdd(perRow, satMul(k, satMul(int64(s.Memory().Layers), int64(s.Memory().Hidden))))
		perRow = satAdd(perRow, latent)
	}
	mlp(&s.Head)
	return satAdd(perRow, satMul(6, int64(s.Output))), fixed
}

// netKeys names the [net] keys that set most of a valid spec's total
// weights: the head's, the latent layer's or the encoder's.
func netKeys(s netconf.Spec, total int64) []string {
	noHead := s.Clone()
	noHead.Head.Hidden, noHead.Head.MinLayers = nil, 0
	thin := s.Clone()
	thin.Latent.Size, thin.Latent.Min = 1, 1
	h, errH := netconf.ParamCount(noHead)
	l, errL := netconf.ParamCount(thin)
	if errH != nil || errL != nil {
		return []string{"net"}
	}
	head, lat := total-h, total-l
	enc := total - head - lat
	enc2 := map[netconf.EncoderKind][]string{netconf.EncoderMLP: {"net.mlp.hidden"},
		netconf.EncoderCNN: {"net.cnn.channels"}, netconf.EncoderLSTM: {"net.lstm.hidden", "net.lstm.layers"},
		netconf.EncoderGRU: {"net.gru.hidden", "net.gru.layers"},
		// Its activations grow with the window as well as with the widths.
		netconf.EncoderTransformer: {"net.transformer.width", "net.transformer.mlp", "net.transformer.context", "net.transformer.layers"}}[s.Encoder]
	switch {
	case head >= lat && head >= enc:
		return []string{"net.head.hidden"}
	case lat >= enc:
		return []string{"net.latent.size"}
	}
	return enc2
}

// memoryBudget returns the bytes a run may be estimated to need, and where
// the figure comes from: 3/4 of the memory the process may use — the Go
// memory limit (GOMEMLIMIT) when one is set, else the smaller of the
// machine's memory (MemTotal of /proc/meminfo) and the cgroup's limit —,
// leaving a quarter to the garbage collector's headroom, the OS and the
// rest of the machine.
func memoryBudget() (int64, string) {
	mem, _ := readMemInfo("/proc/meminfo")
	cg, _ := readCgroupLimit("/sys/fs/cgroup/memory.max")
	if cg == 0 {
		cg, _ = readCgroupLimit("/sys/fs/cgroup/memory/memory.limit_in_bytes")
	}
	return budgetOf(debug.SetMemoryLimit(-1), mem, cg)
}

// budgetOf is memoryBudget's rule for a Go memory limit (math.MaxInt64:
// none), the machine's memory and the cgroup's limit (0: unknown).
func budgetOf(goLimit, machine, cgroup int64) (int64, string) {
	limit, from := int64(fallbackMemory), "16 GiB assumed: the machine's memory is unknown"
	switch {
	case goLimit > 0 && goLimit < math.MaxInt64:
		limit, from = goLimit, "GOMEMLIMIT"
	case cgroup > 0 && (machine <= 0 || cgroup < machine):
		limit, from = cgroup, "the cgroup's memory limit"
	case machine > 0:
		limit, from = machine, "the machine's memory"
	}
	return limit / 4 * 3, fmt.Sprintf("3/4 of %s, %s", from, gbString(limit))
}

// readMemInfo returns MemTotal from a /proc/meminfo file, in bytes.
func readMemInfo(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			f := strings.Fields(rest)
			if len(f) == 2 && f[1] == "kB" {
				kb, err := strconv.ParseInt(f[0], 10, 64)
				if err == nil && kb > 0 && kb < math.MaxInt64>>10 {
					return kb << 10, nil
				}
			}
		}
	}
	return 0, fmt.Errorf("%s: no MemTotal in kB", path)
}

// readCgroupLimit returns the byte limit of a cgroup's memory.max (v2) or
// memory.limit_in_bytes (v1) file; 0 when there is none ("max").
func readCgroupLimit(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%s: %q is not a limit", path, s)
	}
	return n, nil
}

// gbString formats bytes in decimal gigabytes, e.g. "0.13 GB", "17.6 GB",
// "11,534 GB".
func gbString(b int64) string {
	g := float64(b) / 1e9
	switch {
	case g < 10:
		return strconv.FormatFloat(g, 'f', 2, 64) + " GB"
	case g < 1000:
		return strconv.FormatFloat(g, 'f', 1, 64) + " GB"
	}
	return commas(int64(math.Round(g))) + " GB"
}

// commas formats n with thousands separators: 34,082,819.
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// satAdd and satMul are + and · on non-negative sizes, saturating at
// math.MaxInt64 (which no budget reaches).
func satAdd(x, y int64) int64 {
	if x > math.MaxInt64-y {
		return math.MaxInt64
	}
	return x + y
}

func satMul(x, y int64) int64 {
	if x == 0 || y == 0 {
		return 0
	}
	if x > math.MaxInt64/y {
		return math.MaxInt64
	}
	return x * y
}

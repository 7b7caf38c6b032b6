package evo

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/netconf"
	"github.com/evolverl/evolve/nn"
)

// ErrBadInput marks every error caused by what the user gave rather than by
// the machine: a config file that does not parse or holds a bad value, a
// flag, an output directory that already holds another run, a damaged or
// mismatched checkpoint. Test with errors.Is; the command exits 2 on it.
var ErrBadInput = errors.New("bad input")

// inputError is an error that also matches ErrBadInput, without adding
// words to its message.
type inputError struct{ err error }

func (e inputError) Error() string   { return e.err.Error() }
func (e inputError) Unwrap() []error { return []error{e.err, ErrBadInput} }

// badInput marks err as caused by the user's input (nil stays nil).
func badInput(err error) error {
	if err == nil || errors.Is(err, ErrBadInput) {
		return err
	}
	return inputError{err}
}

// Config is one experiment, as read from a TOML file by LoadConfig. Every
// section and key is documented in configs/pop.toml and the README.
type Config struct {
	// Seed determines the whole run: a run is a pure function of its
	// config, whatever the number of workers.
	Seed int64 `toml:"seed"`
	// OutDir receives config.toml, metrics.csv, summary.json, the
	// checkpoints and elite.safetensors.
	OutDir     string           `toml:"out_dir"`
	Env        EnvConfig        `toml:"env"`
	Population PopulationConfig `toml:"population"`
	// PPO holds the initial hyperparameters of every agent ([ppo]); its
	// Net field is not read from [ppo] but set from Net.
	PPO agent.Config `toml:"ppo"`
	// Net is the initial architecture of every agent's actor and critic.
	Net        netconf.Spec     `toml:"net"`
	Mutation   MutationConfig   `toml:"mutation"`
	Tournament TournamentConfig `toml:"tournament"`
	// HP lists the hyperparameters that rl_hp mutations change, by their
	// [ppo] key (see HPNames), with their ranges.
	HP         map[string]HPRange `toml:"hp"`
	Checkpoint CheckpointConfig   `toml:"checkpoint"`
}

// EnvConfig is the [env] section.
type EnvConfig struct {
	// ID is a registered env id (envs.IDs), e.g. "CartPole-v1".
	ID string `toml:"id"`
	// NumEnvs is the number of envs in each agent's training vector.
	NumEnvs int `toml:"num_envs"`
	// EvalEpisodes is the number of deterministic episodes whose mean
	// return is an agent's fitness.
	EvalEpisodes int `toml:"eval_episodes"`
	// Options are passed to envs.Make ([env.options]).
	Options envs.Options `toml:"options"`
}

// PopulationConfig is the [population] section.
type PopulationConfig struct {
	// Size is the number of agents.
	Size int `toml:"size"`
	// MaxSteps is the budget: the run stops after the generation in which
	// the population's env steps reach it.
	MaxSteps int `toml:"max_steps"`
	// EvoSteps is the number of env steps each agent trains per generation
	// (rounded up to whole rollouts).
	EvoSteps int `toml:"evo_steps"`
	// Target stops the run once a generation's best fitness reaches it
	// (after MinGenerations); +Inf never stops early.
	Target float64 `toml:"target"`
	// MinGenerations is the number of generations run before Target can
	// stop the run.
	MinGenerations int `toml:"min_generations"`
	// Workers bounds the agents trained at once; 0 means GOMAXPROCS. It
	// never changes the results.
	Workers int `toml:"workers"`
}

// MutationConfig is the [mutation] section: relative weights of the mutation
// kinds (each agent gets exactly one kind per generation, drawn with these
// weights) and their strength.
type MutationConfig struct {
	NoMutation   float64 `toml:"no_mutation"`
	Architecture float64 `toml:"architecture"`
	// NewLayer is the share of architecture mutations that add or remove a
	// layer; the rest resize one.
	NewLayer   float64 `toml:"new_layer"`
	Parameters float64 `toml:"parameters"`
	Activation float64 `toml:"activation"`
	RLHP       float64 `toml:"rl_hp"`
	// MutationSD scales the Gaussian noise of parameter mutations: an
	// entry w gets noise of standard deviation MutationSD·|w|.
	MutationSD float64 `toml:"mutation_sd"`
	// MutateElite lets the elite be mutated too; false keeps it intact.
	MutateElite bool `toml:"mutate_elite"`
}

// TournamentConfig is the [tournament] section.
type TournamentConfig struct {
	// Size is the number of agents drawn (with replacement) per tournament.
	Size int `toml:"size"`
	// Elitism keeps the best agent of each generation, unmutated unless
	// mutate_elite is set.
	Elitism bool `toml:"elitism"`
}

// HPRange is one [hp.<name>] table: an rl_hp mutation multiplies the value
// by Grow or Shrink (50/50), clips it to [Min, Max] and rounds integers.
type HPRange struct {
	Min    float64 `toml:"min"`
	Max    float64 `toml:"max"`
	Grow   float64 `toml:"grow"`
	Shrink float64 `toml:"shrink"`
}

// CheckpointConfig is the [checkpoint] section.
type CheckpointConfig struct {
	// Every writes a checkpoint after every Every-th generation (and always
	// after the initial population and the last generation).
	Every int `toml:"every"`
	// Keep is how many of the newest checkpoints are kept; 0 keeps all.
	Keep int `toml:"keep"`
}

// Defaults of rl_hp mutation steps.
const (
	DefaultGrow   = 1.2
	DefaultShrink = 0.8
)

// DefaultConfig returns the defaults every config file is decoded onto:
// CartPole-v1 with 8 envs and 10 evaluation episodes, a population of 4
// training 10,000 steps per generation up to 1,000,000 steps in all, no
// target, agent.DefaultConfig's PPO hyperparameters, AgileRL's mutation
// weights, tournaments of 2 with elitism, and a checkpoint every generation
// of which the 3 newest are kept. Net and HP are left empty: ParseConfig
// fills the network's defaults for the chosen encoder and adds the default
// ranges of lr, batch_size and learn_step, which depend on the [ppo] values.
func DefaultConfig() Config {
	ppo := agent.DefaultConfig()
	ppo.Net = netconf.Spec{}
	return Config{
		Seed:   1,
		OutDir: "runs/evolve",
		Env:    EnvConfig{ID: "CartPole-v1", NumEnvs: 8, EvalEpisodes: 10},
		Population: PopulationConfig{Size: 4, MaxSteps: 1_000_000, EvoSteps: 10_000,
			Target: math.Inf(1), MinGenerations: 1},
		PPO: ppo,
		Mutation: MutationConfig{NoMutation: 0.4, Architecture: 0.2, NewLayer: 0.2,
			Parameters: 0.2, Activation: 0, RLHP: 0.2, MutationSD: 0.1, MutateElite: true},
		Tournament: TournamentConfig{Size: 2, Elitism: true},
		Checkpoint: CheckpointConfig{Every: 1, Keep: 3},
	}
}

// HPNames returns the [ppo] keys an [hp.<name>] table may name, in a fixed
// order. lr, batch_size and learn_step are mutable by default.
func HPNames() []string {
	return []string{"lr", "batch_size", "learn_step", "ent_coef", "clip_coef", "vf_coef",
		"max_grad_norm", "update_epochs", "gamma", "gae_lambda"}
}

// hpField returns a pointer to the hyperparameter name of c: a float or an
// integer one.
func hpField(c *agent.Config, name string) (f *float64, i *int) {
	switch name {
	case "lr":
		return &c.LR, nil
	case "batch_size":
		return nil, &c.BatchSize
	case "learn_step":
		return nil, &c.LearnStep
	case "ent_coef":
		return &c.EntCoef, nil
	case "clip_coef":
		return &c.ClipCoef, nil
	case "vf_coef":
		return &c.VFCoef, nil
	case "max_grad_norm":
		return &c.MaxGradNorm, nil
	case "update_epochs":
		return nil, &c.UpdateEpochs
	case "gamma":
		return &c.Gamma, nil
	case "gae_lambda":
		return &c.GAELambda, nil
	}
	return nil, nil
}

// hpValue returns hyperparameter name of c as a float64.
func hpValue(c agent.Config, name string) float64 {
	f, i := hpField(&c, name)
	if f != nil {
		return *f
	}
	return float64(*i)
}

// setHP sets hyperparameter name of c to v, rounded for integers.
func setHP(c *agent.Config, name string, v float64) {
	f, i := hpField(c, name)
	if f != nil {
		*f = v
	} else {
		*i = int(math.Round(v))
	}
}

// isIntHP reports whether hyperparameter name is an integer.
func isIntHP(name string) bool {
	_, i := hpField(&agent.Config{}, name)
	return i != nil
}

// defaultRange returns the default range of hyperparameter name around
// value: lr in [value/10, value×10], the others in [value/4, value×4]
// (integers rounded, at least 1; gamma and gae_lambda at most 1).
func defaultRange(name string, value float64) HPRange {
	f := 4.0
	if name == "lr" {
		f = 10
	}
	// Rounded to 12 digits, so that 3e-4/10 reads 3e-05 in config.toml.
	round := func(x float64) float64 { y, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 12, 64), 64); return y }
	r := HPRange{Min: round(value / f), Max: round(value * f), Grow: DefaultGrow, Shrink: DefaultShrink}
	if isIntHP(name) {
		r.Min, r.Max = max(1, math.Floor(r.Min)), math.Ceil(r.Max)
	}
	if name == "gamma" || name == "gae_lambda" {
		r.Max = min(r.Max, 1)
	}
	return r
}

// LoadConfig reads the TOML file at path on top of DefaultConfig, fills the
// defaults of the network and of the hyperparameter ranges, and validates
// the result. Every error names the file; syntax and type errors give the
// line and key, unknown keys are listed, and each bad value is named with
// what is allowed. All of its errors match ErrBadInput.
func LoadConfig(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, badInput(fmt.Errorf("config: %w", err))
	}
	cfg, err := ParseConfig(data)
	if err != nil {
		return Config{}, badInput(fmt.Errorf("config %s: %w", path, err))
	}
	return cfg, nil
}

// ParseConfig is LoadConfig for a file's contents.
func ParseConfig(data []byte) (Config, error) {
	cfg := DefaultConfig()
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&cfg)
	if err != nil {
		return Config{}, badInput(err)
	}
	var keys []string
	for _, k := range md.Undecoded() {
		if k.String() != "net.backend" { // not a part of the spec: read below
			keys = append(keys, k.String())
		}
	}
	if len(keys) > 0 {
		return Config{}, badInput(fmt.Errorf("unknown keys: %s", strings.Join(keys, ", ")))
	}
	if md.IsDefined("net", "backend") {
		var nb struct {
			Net struct {
				Backend string `toml:"backend"`
			} `toml:"net"`
		}
		if _, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&nb); err != nil {
			return Config{}, badInput(err)
		}
		if nb.Net.Backend == "" {
			return Config{}, badInput(fmt.Errorf("net.backend = \"\": want %q (the default) or another registered backend", nn.DefaultBackend))
		}
		if nb.Net.Backend != nn.DefaultBackend { // the default stays "", as in agent files
			cfg.PPO.Backend = nb.Net.Backend
		}
	}
	var errs []error
	if md.IsDefined("ppo", "net") {
		errs = append(errs, errors.New("[ppo.net]: the network is configured in [net], not under [ppo]"))
	}
	for _, k := range []string{"input", "output", "output_gain"} {
		if md.IsDefined("net", k) {
			errs = append(errs, fmt.Errorf("net.%s: set from the env's spaces, not by the config", k))
		}
	}
	if cfg.Net.Encoder == "" {
		cfg.Net.Encoder = netconf.EncoderMLP
	}
	for _, k := range []netconf.EncoderKind{netconf.EncoderMLP, netconf.EncoderCNN, netconf.EncoderLSTM} {
		if k != cfg.Net.Encoder && md.IsDefined("net", string(k)) {
			errs = append(errs, fmt.Errorf("[net.%s] given, but net.encoder = %q: remove it or set encoder = %q", k, cfg.Net.Encoder, k))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Config{}, badInput(err)
	}
	switch cfg.Net.Encoder {
	case netconf.EncoderMLP, netconf.EncoderCNN, netconf.EncoderLSTM:
		cfg.Net.FillDefaults()
	default:
		return Config{}, badInput(fmt.Errorf("net.encoder = %q: want \"mlp\", \"cnn\" or \"lstm\"", cfg.Net.Encoder))
	}
	cfg.PPO.Net = cfg.Net
	if cfg.Env.Options == nil {
		cfg.Env.Options = envs.Options{}
	}
	// Fill each [hp.<name>] table's missing keys from the default range
	// around the [ppo] value, and add the default mutable ones.
	hp := map[string]HPRange{}
	for name, r := range cfg.HP {
		if f, i := hpField(&cfg.PPO, name); f == nil && i == nil {
			errs = append(errs, fmt.Errorf("[hp.%s]: not a mutable hyperparameter; want one of %s", name, strings.Join(HPNames(), ", ")))
			continue
		}
		d := defaultRange(name, hpValue(cfg.PPO, name))
		for _, k := range []struct {
			key string
			dst *float64
			def float64
		}{{"min", &r.Min, d.Min}, {"max", &r.Max, d.Max}, {"grow", &r.Grow, d.Grow}, {"shrink", &r.Shrink, d.Shrink}} {
			if !md.IsDefined("hp", name, k.key) {
				*k.dst = k.def
			}
		}
		hp[name] = r
	}
	if err := errors.Join(errs...); err != nil {
		return Config{}, badInput(err)
	}
	for _, name := range []string{"lr", "batch_size", "learn_step"} {
		if _, ok := hp[name]; !ok {
			hp[name] = defaultRange(name, hpValue(cfg.PPO, name))
		}
	}
	cfg.HP = hp
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// Validate checks every value of a complete config (as LoadConfig returns
// it) and returns all problems, each naming the key, the value and what is
// allowed. It also builds the env and one agent, so that an env option, an
// observation space the network cannot read or an encoder the env does not
// suit is reported before a run starts. Its errors match ErrBadInput.
func (c Config) Validate() error {
	var errs []error
	bad := func(key string, v any, want string) {
		errs = append(errs, fmt.Errorf("%s = %v: want %s", key, v, want))
	}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	if c.OutDir == "" {
		bad("out_dir", `""`, "a directory")
	}
	if _, ok := envs.Lookup(c.Env.ID); !ok {
		bad("env.id", fmt.Sprintf("%q", c.Env.ID), "a registered env: "+strings.Join(envs.IDs(), ", "))
	}
	if c.Env.NumEnvs < 1 {
		bad("env.num_envs", c.Env.NumEnvs, ">= 1")
	}
	if c.Env.EvalEpisodes < 1 {
		bad("env.eval_episodes", c.Env.EvalEpisodes, ">= 1")
	}
	p := c.Population
	if p.Size < 1 {
		bad("population.size", p.Size, ">= 1")
	}
	if p.EvoSteps < 1 {
		bad("population.evo_steps", p.EvoSteps, ">= 1")
	}
	if p.MaxSteps < 1 {
		bad("population.max_steps", p.MaxSteps, ">= 1")
	}
	if math.IsNaN(p.Target) {
		bad("population.target", p.Target, "a number (inf: no target)")
	}
	if p.MinGenerations < 0 {
		bad("population.min_generations", p.MinGenerations, ">= 0")
	}
	if p.Workers < 0 {
		bad("population.workers", p.Workers, ">= 0 (0: GOMAXPROCS)")
	}
	if c.PPO.LearnStep < c.Env.NumEnvs && c.Env.NumEnvs >= 1 {
		bad("ppo.learn_step", c.PPO.LearnStep, fmt.Sprintf(">= env.num_envs (%d): a rollout takes learn_step/num_envs steps of each env", c.Env.NumEnvs))
	}
	ppo := c.PPO
	if ppo.Backend != "" {
		// The backend is chosen in [net], not [ppo]: check it here by its key.
		if _, err := nn.Lookup(ppo.Backend); err != nil {
			errs = append(errs, fmt.Errorf("net.backend = %q: %w", ppo.Backend, err))
		}
		ppo.Backend = ""
	}
	ppoErr := ppo.Validate()
	if ppoErr != nil {
		errs = append(errs, prefixLines("ppo.", ppoErr))
	}
	m := c.Mutation
	weights := []struct {
		key string
		v   float64
	}{{"no_mutation", m.NoMutation}, {"architecture", m.Architecture}, {"parameters", m.Parameters},
		{"activation", m.Activation}, {"rl_hp", m.RLHP}}
	sum := 0.0
	for _, w := range weights {
		if !(w.v >= 0) || !finite(w.v) {
			bad("mutation."+w.key, w.v, "a weight >= 0")
		} else {
			sum += w.v
		}
	}
	if !(sum > 0) {
		errs = append(errs, errors.New("mutation: no_mutation, architecture, parameters, activation and rl_hp are all 0: want at least one weight > 0"))
	}
	if !(m.NewLayer >= 0 && m.NewLayer <= 1) {
		bad("mutation.new_layer", m.NewLayer, "a probability in [0, 1]")
	}
	if !(m.MutationSD >= 0) || !finite(m.MutationSD) {
		bad("mutation.mutation_sd", m.MutationSD, ">= 0")
	}
	if c.Tournament.Size < 1 || (p.Size >= 1 && c.Tournament.Size > p.Size) {
		bad("tournament.size", c.Tournament.Size, fmt.Sprintf("in [1, population.size = %d]", p.Size))
	}
	if c.Checkpoint.Every < 1 {
		bad("checkpoint.every", c.Checkpoint.Every, ">= 1 (generations)")
	}
	if c.Checkpoint.Keep < 0 {
		bad("checkpoint.keep", c.Checkpoint.Keep, ">= 0 (0 keeps all)")
	}
	names := make([]string, 0, len(c.HP))
	for name := range c.HP {
		names = append(names, name)
	}
	sort.Strings(names)
	if ppoErr == nil { // ranges derive from, and are checked against, valid [ppo] values
		for _, name := range names {
			errs = append(errs, c.validateHP(name, c.HP[name])...)
		}
	}
	if len(errs) == 0 {
		errs = append(errs, c.tryBuild())
	}
	if err := errors.Join(errs...); err != nil {
		return badInput(err)
	}
	return nil
}

// validateHP checks one [hp.<name>] table against the [ppo] value.
func (c Config) validateHP(name string, r HPRange) []error {
	var errs []error
	key := "hp." + name
	if f, i := hpField(&c.PPO, name); f == nil && i == nil {
		return []error{fmt.Errorf("[%s]: not a mutable hyperparameter; want one of %s", key, strings.Join(HPNames(), ", "))}
	}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	if !finite(r.Min) || !finite(r.Max) || !(r.Min <= r.Max) {
		return []error{fmt.Errorf("%s: min = %v, max = %v: want finite min <= max", key, r.Min, r.Max)}
	}
	if !(r.Grow >= 1) || !finite(r.Grow) {
		errs = append(errs, fmt.Errorf("%s.grow = %v: want a factor >= 1", key, r.Grow))
	}
	if !(r.Shrink > 0 && r.Shrink <= 1) {
		errs = append(errs, fmt.Errorf("%s.shrink = %v: want a factor in (0, 1]", key, r.Shrink))
	}
	if isIntHP(name) && (r.Min != math.Trunc(r.Min) || r.Max != math.Trunc(r.Max)) {
		errs = append(errs, fmt.Errorf("%s: min = %v, max = %v: want integers", key, r.Min, r.Max))
	}
	if v := hpValue(c.PPO, name); v < r.Min || v > r.Max {
		errs = append(errs, fmt.Errorf("ppo.%s = %v: outside [%s] min = %v, max = %v", name, v, key, r.Min, r.Max))
	}
	for _, end := range []struct {
		key string
		v   float64
	}{{"min", r.Min}, {"max", r.Max}} {
		t := c.PPO
		t.Backend = "" // checked once, as net.backend
		setHP(&t, name, end.v)
		if err := t.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("%s.%s = %v: %w", key, end.key, end.v, err))
		} else if name == "learn_step" && end.key == "min" && int(end.v) < c.Env.NumEnvs {
			errs = append(errs, fmt.Errorf("%s.min = %v: want >= env.num_envs (%d)", key, end.v, c.Env.NumEnvs))
		}
	}
	return errs
}

// tryBuild makes the env with its options and one agent for it.
func (c Config) tryBuild() error {
	env, err := envs.Make(c.Env.ID, c.Env.Options)
	if err != nil {
		return fmt.Errorf("env (id %q, options %v): %w", c.Env.ID, c.Env.Options, err)
	}
	if _, err := agent.New(env.ObservationSpace(), env.ActionSpace(), c.PPO, 0); err != nil {
		return fmt.Errorf("net and ppo for %s: %w", c.Env.ID, err)
	}
	return nil
}

// prefixLines prefixes every line of err's message with prefix (for the
// key names of a joined error from a sub-config's Validate).
func prefixLines(prefix string, err error) error {
	lines := strings.Split(err.Error(), "\n")
	for i, l := range lines {
		if rest, ok := strings.CutPrefix(l, "net: "); ok {
			lines[i] = "net." + rest // [net] is a section of its own
		} else {
			lines[i] = prefix + l
		}
	}
	return errors.New(strings.Join(lines, "\n"))
}

// fileConfig is the shape of a resolved config file: Config with [ppo]
// written as a plain table without the network (which is [net]).
type fileConfig struct {
	Seed       int64              `toml:"seed"`
	OutDir     string             `toml:"out_dir"`
	Env        EnvConfig          `toml:"env"`
	Population PopulationConfig   `toml:"population"`
	PPO        map[string]any     `toml:"ppo"`
	Net        netFile            `toml:"net"`
	Mutation   MutationConfig     `toml:"mutation"`
	Tournament TournamentConfig   `toml:"tournament"`
	HP         map[string]HPRange `toml:"hp"`
	Checkpoint CheckpointConfig   `toml:"checkpoint"`
}

// netFile is [net] as written: netconf.Spec without what the agent sets
// from the env's spaces (input, output, output_gain), and the backend when
// one was chosen.
type netFile struct {
	Backend string              `toml:"backend,omitempty"`
	Encoder netconf.EncoderKind `toml:"encoder"`
	MLP     *netconf.MLP        `toml:"mlp,omitempty"`
	CNN     *netconf.CNN        `toml:"cnn,omitempty"`
	LSTM    *netconf.LSTM       `toml:"lstm,omitempty"`
	Latent  netconf.Latent      `toml:"latent"`
	Head    netconf.MLP         `toml:"head"`
}

// MarshalTOML returns the resolved config as a TOML file that LoadConfig
// reads back to an equal Config: every key written out, defaults filled.
func (c Config) MarshalTOML() ([]byte, error) {
	ppo := map[string]any{}
	v, t := reflect.ValueOf(c.PPO), reflect.TypeOf(c.PPO)
	for i := range t.NumField() {
		tag, _, _ := strings.Cut(t.Field(i).Tag.Get("toml"), ",")
		if tag == "" || tag == "-" || tag == "net" {
			continue
		}
		ppo[tag] = v.Field(i).Interface()
	}
	n := c.Net
	f := fileConfig{Seed: c.Seed, OutDir: c.OutDir, Env: c.Env, Population: c.Population, PPO: ppo,
		Net: netFile{Backend: c.PPO.Backend, Encoder: n.Encoder, MLP: n.MLP, CNN: n.CNN, LSTM: n.LSTM, Latent: n.Latent, Head: n.Head}, Mutation: c.Mutation, Tournament: c.Tournament, HP: c.HP, Checkpoint: c.Checkpoint}
	if f.Env.Options == nil {
		f.Env.Options = envs.Options{}
	}
	var buf bytes.Buffer
	buf.WriteString("# The resolved config of this run (defaults filled in); evolve -resume reads it.\n")
	if err := toml.NewEncoder(&buf).Encode(f); err != nil {
		return nil, fmt.Errorf("encode config: %w", err)
	}
	return buf.Bytes(), nil
}

// Digest identifies everything in the config that determines a run's
// results (all of it but out_dir and population.workers): "sha256:<hex>".
// A checkpoint records it so that resuming with a changed config fails.
func (c Config) Digest() (string, error) {
	c.OutDir, c.Population.Workers = "", 0
	b, err := c.MarshalTOML()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// mutableHPs returns the names of the hyperparameters an rl_hp mutation
// can change (those whose range is not a single value), sorted.
func (c Config) mutableHPs() []string {
	var names []string
	for name, r := range c.HP {
		if r.Min < r.Max {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

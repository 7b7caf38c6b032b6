package evo

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"runtime"
	"runtime/debug"
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

// ErrRunInUse is the error (also ErrBadInput) of a run directory that
// another process is training: New's Run and Resume take the directory's
// lock, and hold it until Run returns.
var ErrRunInUse = errors.New("run in use")

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
	HP map[string]HPRange `toml:"hp"`
	// PBT is the [pbt] section, set (with its defaults filled) exactly
	// when population.selection = "pbt".
	PBT        *PBTConfig       `toml:"pbt,omitempty"`
	Checkpoint CheckpointConfig `toml:"checkpoint"`
}

// EnvConfig is the [env] section.
type EnvConfig struct {
	// ID is a registered env id (envs.IDs), e.g. "CartPole-v1", or a
	// Gymnasium env id behind "gym:", run through the Python bridge.
	ID string `toml:"id"`
	// NumEnvs is the number of envs in each agent's training vector.
	NumEnvs int `toml:"num_envs"`
	// EvalEpisodes is the number of deterministic episodes whose mean
	// return is an agent's fitness.
	EvalEpisodes int `toml:"eval_episodes"`
	// EvalMaxSteps caps an evaluation episode: one that reaches it is cut
	// there and counts with its return so far, as a truncation would, so
	// that evaluation ends on an env without a time limit.
	EvalMaxSteps int `toml:"eval_max_steps"`
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
	// (after MinGenerations), or with EliteEpisodes once the elite's
	// confirmed score does; +Inf never stops early.
	Target float64 `toml:"target"`
	// MinGenerations is the number of generations run before Target can
	// stop the run.
	MinGenerations int `toml:"min_generations"`
	// Workers bounds the agents trained at once; 0 means GOMAXPROCS. It
	// never changes the results.
	Workers int `toml:"workers"`
	// Independent turns evolution off: no tournament and no mutation, every
	// agent keeps training with its initial hyperparameters, as that many
	// separate PPO runs would (the baseline evolution is compared against).
	// Omitted when false, so that the digests of earlier runs stay valid.
	Independent bool `toml:"independent,omitempty"`
	// EliteEpisodes, when > 0, confirms an elite before it is saved: a
	// generation's best agent whose fitness reaches the elite's score plays
	// EliteEpisodes more episodes from the run's confirmation seed, and replaces
	// the elite only if its mean return on them is higher. The elite's score
	// (summary.json's elite_fitness, the target's test) is then that
	// confirmed mean rather than the best of many noisy fitnesses. 0 saves
	// the best fitness as it is; omitted when 0, so that the digests of
	// earlier runs stay valid.
	EliteEpisodes int `toml:"elite_episodes,omitempty"`
	// Selection makes the next generation from this one: "" or
	// "tournament" (SelectTournament) or "pbt" (SelectPBT). The default is
	// stored as "", so that the digests of earlier runs stay valid.
	Selection string `toml:"selection,omitempty"`
	// Fitness says what an agent's fitness is: "" or "eval" (FitnessEval)
	// or "train" (FitnessTrain).
	Fitness string `toml:"fitness,omitempty"`
	// Init says where the agents' hyperparameters start: "" or "config"
	// (InitConfig) or "sample" (InitSample).
	Init string `toml:"init,omitempty"`
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
// Scale is the range's geometry, which PBT's explore and population.init =
// "sample" use (see HPScale); "" means the hyperparameter's default scale.
type HPRange struct {
	Min    float64 `toml:"min"`
	Max    float64 `toml:"max"`
	Grow   float64 `toml:"grow"`
	Shrink float64 `toml:"shrink"`
	Scale  string  `toml:"scale,omitempty"`
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
		Env:    EnvConfig{ID: "CartPole-v1", NumEnvs: 8, EvalEpisodes: 10, EvalMaxSteps: 100_000},
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
// (integers rounded, at least 1; gamma and gae_lambda at most 1;
// learn_step and batch_size at most maxLearnStep).
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
	if name == "learn_step" || name == "batch_size" {
		r.Max = min(r.Max, maxLearnStep)
	}
	return r
}

// LoadConfig reads the TOML file at path on top of DefaultConfig, fills the
// defaults of the network and of the hyperparameter ranges, and validates
// the result. Every error names the file; syntax and type errors give the
// line and key, unknown keys are listed with their line and the nearest
// known key of their table, and each bad value is named with what is
// allowed. All of its errors match ErrBadInput.
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

// ParseConfig is LoadConfig for a file's contents. An empty file, or one
// of comments only, is the defaults.
func ParseConfig(data []byte) (Config, error) { return parseConfig(data, true) }

// parseConfig is ParseConfig; without build it checks everything but
// building an agent (the fuzz test's fast path).
func parseConfig(data []byte, build bool) (Config, error) {
	cfg := DefaultConfig()
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&cfg)
	if err != nil {
		return Config{}, badInput(err)
	}
	var keys []string
	for _, k := range md.Undecoded() {
		// net.backend is not a part of the spec: it is read below. Env
		// options are the env's to check; the decoder reports the keys of
		// tables inside their arrays (gym wrappers) as undecoded.
		if k.String() != "net.backend" && !(len(k) > 2 && k[0] == "env" && k[1] == "options") {
			keys = append(keys, k.String()+keyNotes(data, k))
		}
	}
	if len(keys) > 0 {
		return Config{}, badInput(fmt.Errorf("unknown keys: %s", strings.Join(keys, ", ")))
	}
	// The decoder matches keys to fields ignoring case, but what is
	// defined (md.IsDefined, which decides what gets a default) is exact:
	// keys are spelled as documented, in lower case. Env options are the
	// env's to check.
	for _, k := range md.Keys() {
		if s := k.String(); s != strings.ToLower(s) && !(len(k) > 2 && k[0] == "env" && k[1] == "options") {
			keys = append(keys, s)
		}
	}
	if len(keys) > 0 {
		return Config{}, badInput(fmt.Errorf("keys not in lower case: %s: write them as configs/pop.toml does", strings.Join(keys, ", ")))
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
	for _, k := range []string{"input", "output", "output_gain", "inputs"} {
		if md.IsDefined("net", k) {
			errs = append(errs, fmt.Errorf("net.%s: set from the env's spaces, not by the config", k))
		}
	}
	if !md.IsDefined("net", "encoder") {
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
		fillNetDefaults(md, &cfg.Net)
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
	if err := cfg.resolveStrategy(md); err != nil {
		return Config{}, err
	}
	if err := cfg.validate(build); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// fillNetDefaults gives every key of [net]'s tables that the file does not
// set its default (the encoder's table, [net.latent], [net.head]), and
// leaves every key it sets as written, zero or empty included: hidden = []
// with min_layers = 0 is a head without hidden layers, not the default head.
// (netconf's FillDefaults cannot tell a zero from an absent key.)
func fillNetDefaults(md toml.MetaData, n *netconf.Spec) {
	switch n.Encoder {
	case netconf.EncoderMLP:
		if n.MLP == nil {
			n.MLP = &netconf.MLP{}
		}
		fillAbsent(md, n.MLP, netconf.DefaultMLP(), "net", "mlp")
	case netconf.EncoderCNN:
		if n.CNN == nil {
			n.CNN = &netconf.CNN{}
		}
		fillAbsent(md, n.CNN, netconf.DefaultCNN(), "net", "cnn")
	case netconf.EncoderLSTM:
		if n.LSTM == nil {
			n.LSTM = &netconf.LSTM{}
		}
		fillAbsent(md, n.LSTM, netconf.DefaultLSTM(), "net", "lstm")
	}
	fillAbsent(md, &n.Latent, netconf.DefaultLatent(), "net", "latent")
	fillAbsent(md, &n.Head, netconf.DefaultHead(), "net", "head")
}

// fillAbsent sets every field of the struct *dst whose TOML key under
// table is not defined in md to the field of def (a fresh value: its
// slices are not shared).
func fillAbsent[T any](md toml.MetaData, dst *T, def T, table ...string) {
	v, d := reflect.ValueOf(dst).Elem(), reflect.ValueOf(def)
	for i := range v.NumField() {
		key, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("toml"), ",")
		if key == "" || key == "-" {
			continue
		}
		if !md.IsDefined(append(slices.Clip(table), key)...) {
			v.Field(i).Set(d.Field(i))
		}
	}
}

// Validate checks every value of a complete config (as LoadConfig returns
// it) and returns all problems, each naming the key, the value and what is
// allowed. It also builds the env and one agent, so that an env option, an
// observation space the network cannot read or an encoder the env does not
// suit is reported before a run starts; in between, it refuses a config
// whose estimated memory exceeds the machine's (see checkMemory). Its errors
// match ErrBadInput.
func (c Config) Validate() error { return c.validate(true) }

// validate is Validate; without build it does not build the agent.
func (c Config) validate(build bool) error {
	var errs []error
	bad := func(key string, v any, want string) {
		errs = append(errs, fmt.Errorf("%s = %v: want %s", key, v, want))
	}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	if c.OutDir == "" {
		bad("out_dir", `""`, "a directory")
	}
	if _, ok := envs.Lookup(c.Env.ID); !ok && !strings.HasPrefix(c.Env.ID, envs.GymPrefix) {
		// A "gym:" id is checked when the env is built (tryBuild), which
		// starts the Python child and asks it for the env.
		bad("env.id", fmt.Sprintf("%q", c.Env.ID), "a registered env ("+strings.Join(envs.IDs(), ", ")+") or a Gymnasium env as \"gym:<id>\"")
	}
	if c.Env.NumEnvs < 1 {
		bad("env.num_envs", c.Env.NumEnvs, ">= 1")
	} else if c.Env.NumEnvs > maxNumEnvs {
		bad("env.num_envs", c.Env.NumEnvs, fmt.Sprintf("<= %d", maxNumEnvs))
	}
	if c.Env.EvalEpisodes < 1 {
		bad("env.eval_episodes", c.Env.EvalEpisodes, ">= 1")
	} else if c.Env.EvalEpisodes > maxEvalEpisodes {
		bad("env.eval_episodes", c.Env.EvalEpisodes, fmt.Sprintf("<= %d", maxEvalEpisodes))
	}
	if c.Env.EvalMaxSteps < 1 {
		bad("env.eval_max_steps", c.Env.EvalMaxSteps, ">= 1")
	}
	p := c.Population
	if p.Size < 1 {
		bad("population.size", p.Size, ">= 1")
	} else if p.Size > maxPopulationSize {
		bad("population.size", p.Size, fmt.Sprintf("<= %d agents", maxPopulationSize))
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
	if p.EliteEpisodes < 0 || p.EliteEpisodes > maxEvalEpisodes {
		bad("population.elite_episodes", p.EliteEpisodes, fmt.Sprintf("0 (off) to %d", maxEvalEpisodes))
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
	sizeErrs := c.validateSizes()
	errs = append(errs, sizeErrs...)
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
	errs = append(errs, c.validateStrategy()...)
	// The tournament's size is checked against the population only where a
	// tournament is held: independent agents and PBT hold none.
	tournament := !p.Independent && p.Selection != SelectPBT
	if c.Tournament.Size < 1 || (tournament && p.Size >= 1 && c.Tournament.Size > p.Size) {
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
	if ppoErr == nil && len(sizeErrs) == 0 { // ranges derive from, and are checked against, valid [ppo] values
		for _, name := range names {
			errs = append(errs, c.validateHP(name, c.HP[name])...)
		}
	}
	if len(errs) == 0 {
		errs = append(errs, c.tryBuild(build))
	}
	if err := errors.Join(errs...); err != nil {
		return badInput(err)
	}
	return nil
}

// validateSizes checks the upper bounds of the [ppo] sizes that set an
// agent's memory: learn_step, batch_size and max_seq_len.
func (c Config) validateSizes() []error {
	var errs []error
	p := c.PPO
	if p.LearnStep > maxLearnStep {
		errs = append(errs, fmt.Errorf("ppo.learn_step = %d: want <= %d", p.LearnStep, maxLearnStep))
	}
	if p.LearnStep >= 1 && p.BatchSize > p.LearnStep {
		errs = append(errs, fmt.Errorf("ppo.batch_size = %d: want <= ppo.learn_step (%d): a minibatch is drawn from one rollout", p.BatchSize, p.LearnStep))
	}
	n := c.Env.NumEnvs
	if c.Net.Encoder == netconf.EncoderLSTM && n >= 1 && p.LearnStep >= n && p.MaxSeqLen > p.LearnStep/n {
		errs = append(errs, fmt.Errorf("ppo.max_seq_len = %d: want <= learn_step/num_envs = %d: a BPTT sequence lies within one env's part of a rollout (a longer one is only padding)",
			p.MaxSeqLen, p.LearnStep/n))
	} else if p.MaxSeqLen > maxLearnStep {
		errs = append(errs, fmt.Errorf("ppo.max_seq_len = %d: want <= %d", p.MaxSeqLen, maxLearnStep))
	}
	return errs
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
	if (name == "learn_step" || name == "batch_size") && r.Max > maxLearnStep {
		return append(errs, fmt.Errorf("%s.max = %v: want <= %d", key, r.Max, maxLearnStep))
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

// keyNotes returns what helps find and fix the unknown key k of the config
// data: " (line N, did you mean NAME?)", either part when it is known, or
// "". See keyLine and didYouMean.
func keyNotes(data []byte, k toml.Key) string {
	var notes []string
	if line := keyLine(data, k); line > 0 {
		notes = append(notes, fmt.Sprintf("line %d", line))
	}
	if name := didYouMean(k); name != "" {
		notes = append(notes, "did you mean "+name+"?")
	}
	if len(notes) == 0 {
		return ""
	}
	return " (" + strings.Join(notes, ", ") + ")"
}

// didYouMean returns the key of the same table as the unknown config key k
// that is at most 2 edits from k's last part (the closest, the first in
// the struct's order on a tie), or "".
func didYouMean(k toml.Key) string {
	if len(k) == 0 {
		return ""
	}
	last := k[len(k)-1]
	best, bestD := "", 3
	for _, name := range tableKeys(reflect.TypeFor[Config](), k[:len(k)-1]) {
		if d := editDistance(last, name); d < bestD {
			best, bestD = name, d
		}
	}
	return best
}

// keyProbe fails to decode whatever it is given, so that the decoder's
// error tells where the key decoded into it is (see keyLine).
type keyProbe struct{}

var errKeyProbe = errors.New("key probe")

// UnmarshalTOML implements toml.Unmarshaler.
func (keyProbe) UnmarshalTOML(any) error { return errKeyProbe }

// keyLine returns the line of the config data on which key k is defined,
// or 0 if that cannot be told. The decoder's metadata keeps key positions
// but does not export them; its errors carry them, so data is decoded again
// into a struct made for k alone, with a keyProbe at k.
func keyLine(data []byte, k toml.Key) int {
	t := reflect.TypeFor[keyProbe]()
	for i := len(k) - 1; i >= 0; i-- {
		if k[i] == "" || strings.ContainsAny(k[i], "\"\\`,") {
			return 0 // not expressible as a struct tag
		}
		t = reflect.StructOf([]reflect.StructField{{Name: "XEvolveKeyProbe", Type: t, Tag: reflect.StructTag(`toml:"` + k[i] + `"`)}})
	}
	var pe toml.ParseError
	_, err := toml.NewDecoder(bytes.NewReader(data)).Decode(reflect.New(t).Interface())
	if errors.As(err, &pe) && pe.Message == errKeyProbe.Error() && pe.LastKey == k.String() {
		return pe.Position.Line
	}
	return 0
}

// tableKeys returns the keys the table at path holds when decoded into a
// value of type t: the toml names of its struct's fields, those of
// embedded structs included. It returns nil when path leads to no struct.
func tableKeys(t reflect.Type, path []string) []string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
		t = t.Elem()
	}
	if t.Kind() == reflect.Map {
		if len(path) == 0 {
			return nil
		}
		return tableKeys(t.Elem(), path[1:])
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var names []string
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Anonymous && f.Tag.Get("toml") == "" {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		if len(path) > 0 && name == path[0] {
			return tableKeys(f.Type, path[1:])
		}
		names = append(names, name)
	}
	if len(path) > 0 {
		return nil
	}
	if t == reflect.TypeFor[netconf.Spec]() {
		names = append(names, "backend") // net.backend is read apart from the spec
	}
	return names
}

// editDistance returns the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// tryBuild makes the env with its options and, with build, one agent for
// it. Before the agent it estimates what the whole run needs (checkMemory),
// so that a config too big for the machine is refused before anything is
// allocated for it, rather than crashing the run with "out of memory".
func (c Config) tryBuild(build bool) error {
	env, err := envs.Make(c.Env.ID, c.Env.Options)
	if err != nil {
		return fmt.Errorf("env %s: %w", c.Env.ID, err)
	}
	defer envs.Close(env)
	if err := c.checkMemory(env.ObservationSpace(), env.ActionSpace()); err != nil || !build {
		return err
	}
	if _, err := agent.New(env.ObservationSpace(), env.ActionSpace(), c.PPO, 0); err != nil {
		return fmt.Errorf("net and ppo for %s: %w", c.Env.ID, err)
	}
	return nil
}

// Upper bounds of config values, far above any run this program is made
// for (the README's Config reference lists them). A few extra digits typed
// by mistake are then an error naming the key, and every product of sizes
// in the memory estimate stays far inside int64.
const (
	maxPopulationSize = 10_000
	maxNumEnvs        = 4096
	maxEvalEpisodes   = 1_000_000
	// maxLearnStep bounds learn_step, and with it batch_size (at most
	// learn_step) and max_seq_len, also as the max of their [hp] ranges.
	maxLearnStep = 100_000_000
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
// env's spaces (see the README's Config reference, "Memory").
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
}

// estimate computes c's memEstimate for an env of the given spaces, with
// saturating arithmetic, from the specs alone: nothing is allocated in
// proportion to any size. learn_step and batch_size count at the largest
// value their [hp] range lets rl_hp mutations reach; the networks count at
// their initial size. It fails when the spaces or the network do not fit.
func (c Config) estimate(obs, act envs.Space) (memEstimate, error) {
	actor, critic, logStd, err := netSpecs(obs, act, c.Net)
	if err != nil {
		return memEstimate{}, err
	}
	na, err := netconf.ParamCount(actor)
	if err != nil {
		return memEstimate{}, err
	}
	nc, err := netconf.ParamCount(critic)
	if err != nil {
		return memEstimate{}, err
	}
	p := c.PPO
	e := memEstimate{agents: int64(c.Population.Size), weights: satAdd(satAdd(na, nc), int64(logStd)), netKeys: netKeys(actor, na)}
	n := int64(max(1, c.Env.NumEnvs))
	learnStep, learnKey := int64(p.LearnStep), "ppo.learn_step"
	if r, ok := c.HP["learn_step"]; ok && r.Max > float64(learnStep) {
		learnStep, learnKey = int64(min(r.Max, maxLearnStep)), "hp.learn_step.max"
	}
	batch, batchKey := int64(p.BatchSize), "ppo.batch_size"
	if r, ok := c.HP["batch_size"]; ok && r.Max > float64(batch) {
		batch, batchKey = int64(min(r.Max, maxLearnStep)), "hp.batch_size.max"
	}
	steps := satMul(max(1, learnStep/n), n) // one rollout, all envs
	obsN, actN := int64(obs.FlatSize()), int64(act.FlatSize())
	maskN, _ := envs.MaskSize(act)
	mask := int64(maskN)
	state := int64(0) // floats of recurrent state per env: h and c of every layer, actor and critic
	if actor.Recurrent() {
		state = satMul(satMul(2, int64(actor.LSTM.Layers)), int64(actor.LSTM.Hidden))
		if !p.ShareEncoders {
			state = satMul(state, 2)
		}
	}
	const f32 = 4
	// The rollout: per step the observation, the action, the state, six
	// floats (log-prob, value, reward, final value, advantage, return), a
	// shuffled index, two flags and the mask; BPTT adds a sequence (three
	// ints) per step at most.
	perStep := satAdd(satMul(f32, satAdd(satAdd(obsN, actN), satAdd(state, 6))), satAdd(8+2, mask))
	if actor.Recurrent() {
		perStep = satAdd(perStep, 24)
	}
	rollout := satMul(steps, perStep)
	// One update's minibatch: flat rows, or max(1, batch/L) sequences
	// padded to L steps with their initial states.
	rows, rowsKey, seqs := min(batch, steps), batchKey, int64(0)
	if actor.Recurrent() {
		L := int64(p.MaxSeqLen)
		seqs = max(1, batch/L)
		if rows = satMul(seqs, L); batch < L {
			rowsKey = "ppo.max_seq_len"
		}
	}
	minibatch := satAdd(satMul(rows, satAdd(satMul(f32, satAdd(satAdd(obsN, actN), 5)), mask)), satMul(seqs, satMul(f32, state)))
	// The networks' per-row buffers (activations and their gradients, the
	// distribution's, the preprocessed observations), grown to the largest
	// batch: an update's, or the acting vector's.
	rowA, fixedA := actFloats(actor)
	rowC, fixedC := actFloats(critic)
	dist := int64(actor.Output)
	perRow := satAdd(satAdd(rowA, rowC), satAdd(obsN, satAdd(satMul(4, dist), 10)))
	work := satMul(f32, satAdd(satMul(max(rows, n), perRow), satAdd(fixedA, fixedC)))
	// Weights, gradients and Adam's two moments, the backend's copies of
	// some weights, and the clone (weights and moments) of each agent made
	// while the next generation is selected: eight floats per weight.
	netBytes := satMul(8*f32, e.weights)
	// Each part names its keys, the larger factor first.
	rolloutKeys, workKeys := []string{learnKey}, []string{rowsKey}
	if state > satAdd(obsN, actN) {
		rolloutKeys = append(rolloutKeys, e.netKeys...)
	}
	if perRow > rows {
		workKeys = append(slices.Clone(e.netKeys), rowsKey)
	}
	e.perAgent = []memPart{
		{fmt.Sprintf("networks (%s weights, with gradients, Adam's moments and the clone made at selection)", commas(e.weights)), e.netKeys, netBytes},
		{fmt.Sprintf("rollouts (%s: %s steps)", learnKey, commas(steps)), rolloutKeys, rollout},
		{fmt.Sprintf("update buffers (%s: %s rows of %s floats)", rowsKey, commas(rows), commas(perRow)), workKeys, satAdd(minibatch, work)},
	}
	// Only the agents being trained have an env vector and an evaluation
	// env; saving or loading a checkpoint holds one agent file at a time.
	workers := int64(c.Population.Workers)
	if workers == 0 {
		workers = int64(runtime.GOMAXPROCS(0))
	}
	workers = min(workers, e.agents)
	vec := satMul(workers, satAdd(satMul(n, satAdd(envBytes, satMul(3*f32, obsN))), envBytes))
	e.agentFile = satMul(3*f32, e.weights)
	e.once = []memPart{
		{fmt.Sprintf("env vectors (env.num_envs = %d, %d at once)", n, workers), []string{"env.num_envs"}, vec},
		{"one agent file being written or read", e.netKeys, e.agentFile},
		{"the program itself", nil, baseBytes},
	}
	for _, part := range e.perAgent {
		e.total = satAdd(e.total, satMul(e.agents, part.bytes))
	}
	for _, part := range e.once {
		e.total = satAdd(e.total, part.bytes)
	}
	e.checkpoint = satMul(e.agents, e.agentFile)
	return e, nil
}

// refusal is the error of an estimate over budget: the keys of the parts
// that make at least a quarter of it first, then the parts.
func (e memEstimate) refusal(budget int64, from string) error {
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
	return fmt.Errorf("%s: the run needs about %s of memory, more than the budget of %s (%s); most of it: %s; an agent needs %s, a checkpoint %s on disk",
		strings.Join(keys, ", "), gbString(e.total), gbString(budget), from, strings.Join(desc, ", "),
		gbString(satAdd(satAdd(e.perAgent[0].bytes, e.perAgent[1].bytes), e.perAgent[2].bytes)), gbString(e.checkpoint))
}

// netSpecs returns the actor's and the critic's full specs for the spaces,
// and the size of the log-std of Box actions, as agent.New derives them,
// without building anything.
func netSpecs(obs, act envs.Space, net netconf.Spec) (actor, critic netconf.Spec, logStd int, err error) {
	var out int
	switch a := act.(type) {
	case envs.Discrete:
		out = a.N
	case envs.MultiDiscrete:
		for _, k := range a.Nvec {
			out += k
		}
	case envs.MultiBinary:
		out = a.N
	case envs.Box:
		if len(a.Dims) != 1 {
			return actor, critic, 0, fmt.Errorf("box actions %v", a)
		}
		out, logStd = a.Dims[0], a.Dims[0]
	default:
		return actor, critic, 0, fmt.Errorf("action space %v", act)
	}
	s := net.Clone()
	switch o := obs.(type) {
	case envs.Box:
		switch {
		case s.Dict():
			return actor, critic, 0, errors.New("net.inputs without a Dict")
		case s.Encoder == netconf.EncoderCNN:
			s.Input = slices.Clone(o.Dims)
		case len(o.Dims) == 1:
			s.Input = []int{o.Dims[0]}
		default:
			return actor, critic, 0, fmt.Errorf("observations %v", o.Dims)
		}
	case envs.Dict:
		if s.Encoder == netconf.EncoderLSTM {
			return actor, critic, 0, errors.New("lstm on a Dict")
		}
		if !s.Dict() { // else a mutated or loaded spec: its encoders are kept
			for i, key := range o.Keys {
				box, ok := o.Spaces[i].(envs.Box)
				if !ok {
					return actor, critic, 0, fmt.Errorf("dict key %q", key)
				}
				k := netconf.KeyInput{Key: key, Input: slices.Clone(box.Dims)}
				switch {
				case len(box.Dims) == 1 && s.Encoder == netconf.EncoderMLP && s.MLP != nil:
					k.Encoder, k.MLP = netconf.EncoderMLP, s.MLP
				case len(box.Dims) == 1:
					m := netconf.DefaultMLP()
					k.Encoder, k.MLP = netconf.EncoderMLP, &m
				case len(box.Dims) == 3 && s.Encoder == netconf.EncoderCNN && s.CNN != nil:
					k.Encoder, k.CNN = netconf.EncoderCNN, s.CNN
				case len(box.Dims) == 3:
					cn := netconf.DefaultCNN()
					k.Encoder, k.CNN = netconf.EncoderCNN, &cn
				default:
					return actor, critic, 0, fmt.Errorf("dict key %q of shape %v", key, box.Dims)
				}
				s.Inputs = append(s.Inputs, k)
			}
		}
		s.Input = []int{o.FlatSize()}
	default:
		return actor, critic, 0, fmt.Errorf("observation space %v", obs)
	}
	actor, critic = s, s.Clone()
	actor.Output, actor.OutputGain = out, netconf.PolicyGain
	critic.Output, critic.OutputGain = 1, netconf.ValueGain
	return actor, critic, logStd, nil
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
	case s.Encoder == netconf.EncoderLSTM:
		perRow = satAdd(perRow, satMul(14, satMul(int64(s.LSTM.Layers), int64(s.LSTM.Hidden))))
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
		netconf.EncoderCNN: {"net.cnn.channels"}, netconf.EncoderLSTM: {"net.lstm.hidden", "net.lstm.layers"}}[s.Encoder]
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
	PBT        *PBTConfig         `toml:"pbt,omitempty"`
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
		Net: netFile{Backend: c.PPO.Backend, Encoder: n.Encoder, MLP: n.MLP, CNN: n.CNN, LSTM: n.LSTM, Latent: n.Latent, Head: n.Head}, Mutation: c.Mutation, Tournament: c.Tournament, HP: c.HP, PBT: c.PBT, Checkpoint: c.Checkpoint}
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

// Digest identifies the whole config but out_dir and population.workers,
// which never change a run's results: "sha256:<hex>". Two configs with the
// same digest describe the same run, stopping rules included.
func (c Config) Digest() (string, error) {
	c.OutDir, c.Population.Workers = "", 0
	b, err := c.MarshalTOML()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// GenerationsDigest identifies what determines the generations a run
// trains, which a checkpoint records: Digest's fields less the stopping
// rules, population.target and population.max_steps, which only decide
// when the run ends — except that with ppo.anneal_lr the budget is also
// the learning rate's horizon, and stays. So a run can go on under a new
// target or budget (Trainer.SetStopRules) and still resume.
func (c Config) GenerationsDigest() (string, error) {
	c.Population.Target = 0
	if !c.PPO.AnnealLR {
		c.Population.MaxSteps = 0
	}
	return c.Digest()
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

// envRef is the env the run's agents train on, as their files record it.
func (c Config) envRef() agent.EnvRef {
	return agent.EnvRef{ID: c.Env.ID, Options: c.Env.Options}
}

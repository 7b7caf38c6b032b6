package evo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/internal/readcap"
	"github.com/evolverl/evolve/netconf"
	"github.com/evolverl/evolve/nn"
)

// Config is one experiment, as read from a TOML file by LoadConfig. Every
// section and key is documented in configs/pop.toml and docs/config.md.
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
	// Demos is the [demos] section, set when the config has one (PPO+D's
	// demonstrations).
	Demos *DemosConfig `toml:"demos,omitempty"`
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
	// generation's best agent whose fitness reaches the elite's bar (its
	// confirmed score; with Fitness "train", its fitness when it was saved) plays
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
	// ConfirmMargin widens the gate to elite confirmation (with
	// EliteEpisodes): a generation's best agent is confirmed when its
	// fitness plus ConfirmMargin standard errors of its fitness episodes'
	// mean reaches the elite's bar (see EliteEpisodes: its confirmed score,
	// or its fitness). With Fitness "train" the bar is the elite's
	// fitness, the best of a generation's noisy fitnesses, so with 0 a
	// later, better agent whose episodes happen to fall short of that lucky
	// value is never confirmed. A margin costs confirmation
	// episodes, counted in the global steps. Omitted when 0, so that the
	// digests of earlier runs stay valid.
	ConfirmMargin float64 `toml:"confirm_margin,omitzero"`
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

// CheckpointConfig is the [checkpoint] section.
type CheckpointConfig struct {
	// Every writes a checkpoint after every Every-th generation (and always
	// after the initial population and the last generation).
	Every int `toml:"every"`
	// Keep is how many of the newest checkpoints are kept; 0 keeps all.
	Keep int `toml:"keep"`
}

// DefaultConfig returns the defaults every config file is decoded onto:
// CartPole-v1 with 8 envs and 10 evaluation episodes, a population of 4
// training 10,000 steps per generation up to 1,000,000 steps in all, no
// target, agent.DefaultConfig's PPO hyperparameters, AgileRL's mutation
// weights, tournaments of 2 with elitism, and a checkpoint every generation
// of which the 3 newest are kept. Net and HP are left empty: ParseConfig
// fills the network's defaults for the chosen encoder and adds the default
// ranges of lr, batch_size and learn_step, which depend on the [ppo] values;
// Complete, Validate and New do the same for a config built in Go (an empty
// Net becomes the default MLP), so DefaultConfig with an OutDir trains. One
// thing a file's decoding does that Complete cannot: a file without
// tournament.size gets min(2, population.size), so a population of 1 set in
// Go needs Tournament.Size = 1 too (New says so otherwise).
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

// MaxConfigBytes is the longest config file read: a config is kilobytes, and
// a path naming a device or an endless stream must not exhaust the memory.
const MaxConfigBytes = 16 << 20

// LoadConfig reads the TOML file at path on top of DefaultConfig, fills the
// defaults of the network and of the hyperparameter ranges, and validates
// the result. Every error names the file; syntax and type errors give the
// line and key, unknown keys are listed with their line and the nearest
// known key of their table, and each bad value is named with what is
// allowed. All of its errors match ErrBadInput.
func LoadConfig(path string) (Config, error) { return LoadConfigContext(context.Background(), path) }

// LoadConfigContext is LoadConfig with a context: once ctx is done, the
// env it builds to check the config (a gym: env's Python child, which may
// take long to start) is stopped, and it fails with an error matching
// envs.ErrInterrupted.
func LoadConfigContext(ctx context.Context, path string) (Config, error) {
	data, err := readcap.File(path, MaxConfigBytes)
	if err != nil {
		return Config{}, badInput(fmt.Errorf("config: %w", err))
	}
	cfg, err := ParseConfigContext(ctx, data)
	if err != nil {
		return Config{}, badInput(fmt.Errorf("config %s: %w", path, err))
	}
	return cfg, nil
}

// ParseConfig is LoadConfig for a file's contents. An empty file, or one
// of comments only, is the defaults.
func ParseConfig(data []byte) (Config, error) { return parseConfig(context.Background(), data, true) }

// ParseConfigContext is ParseConfig with a context, as LoadConfigContext.
func ParseConfigContext(ctx context.Context, data []byte) (Config, error) {
	return parseConfig(ctx, data, true)
}

// parseConfig is ParseConfigContext; without build it checks everything
// but building an agent (the fuzz test's fast path).
func parseConfig(ctx context.Context, data []byte, build bool) (Config, error) {
	cfg, keysErr, err := decodeConfig(data)
	if err != nil {
		return Config{}, errors.Join(keysErr, err)
	}
	// With unknown keys the values are still checked, but no agent is
	// built: the file is not the one the user meant yet.
	if err := errors.Join(keysErr, withKeyLines(data, cfg.validate(ctx, build && keysErr == nil))); err != nil {
		return Config{}, badInput(err)
	}
	return cfg, nil
}

// ReadRunConfig reads the config.toml of the run directory dir — the
// resolved config the run wrote — with DecodeConfig: what a tool needs of a
// run (its env, its target, its strategy) without starting the env or
// building an agent, as LoadConfig would.
func ReadRunConfig(dir string) (Config, error) {
	path := filepath.Join(dir, "config.toml")
	data, err := readcap.File(path, MaxConfigBytes)
	if err != nil {
		return Config{}, err
	}
	cfg, err := DecodeConfig(data)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// DecodeConfig decodes a config file's contents onto DefaultConfig and
// completes it (the network's and the [hp] ranges' defaults, the strategy's
// settings), refusing unknown keys, without validating the values or making
// the env. ParseConfig is DecodeConfig followed by Validate.
func DecodeConfig(data []byte) (Config, error) {
	cfg, keysErr, err := decodeConfig(data)
	if err := errors.Join(keysErr, err); err != nil {
		return Config{}, badInput(err)
	}
	return cfg, nil
}

// decodeConfig is DecodeConfig, which keeps apart the errors of unknown or
// misspelt keys (keysErr): the values that did decode can still be
// validated, so that one run of the checks lists every problem.
func decodeConfig(data []byte) (cfg Config, keysErr, err error) {
	cfg = DefaultConfig()
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&cfg)
	if err != nil {
		return Config{}, nil, badInput(typeErrors(data, err))
	}
	keysErr = checkKeys(md, data)
	// The decoder drops a value that is not a table where a map belongs.
	for _, key := range [][]string{{"env", "options"}, {"hp"}} {
		if t := md.Type(key...); md.IsDefined(key...) && t != "Hash" && t != "" { // "": a table defined by its subtables
			return Config{}, nil, badInput(fmt.Errorf("%s: a value of type %s, where a table belongs ([%s])",
				strings.Join(key, "."), strings.ToLower(t), strings.Join(key, ".")))
		}
	}
	if !md.IsDefined("tournament", "size") && cfg.Population.Size >= 1 {
		// The default tournament of two cannot be held in a population of one.
		cfg.Tournament.Size = min(cfg.Tournament.Size, cfg.Population.Size)
	}
	if err := readBackend(md, data, &cfg); err != nil {
		return Config{}, nil, badInput(withKeyLines(data, err))
	}
	if err := completeNet(md, &cfg); err != nil {
		return Config{}, nil, badInput(withKeyLines(data, err))
	}
	if cfg.Env.Options == nil {
		cfg.Env.Options = envs.Options{}
	}
	completeVTrace(md, &cfg.PPO)
	if err := completeHP(md, &cfg); err != nil {
		return Config{}, nil, badInput(withKeyLines(data, err))
	}
	if err := cfg.resolveStrategy(md); err != nil {
		return Config{}, nil, badInput(withKeyLines(data, err))
	}
	return cfg, keysErr, nil
}

// completeVTrace gives V-trace's clips IMPALA's 1 where advantage =
// "vtrace" and the file does not set them; a clip set to 0 stays 0, for
// validation to refuse.
func completeVTrace(md toml.MetaData, ppo *agent.Config) {
	if ppo.Advantage != agent.AdvantageVTrace {
		return
	}
	if !md.IsDefined("ppo", "vtrace_rho_clip") {
		ppo.VTraceRhoClip = 1
	}
	if !md.IsDefined("ppo", "vtrace_c_clip") {
		ppo.VTraceCClip = 1
	}
}

// checkKeys refuses keys the config does not know, with their line and the
// nearest known key, and known keys not written in lower case.
func checkKeys(md toml.MetaData, data []byte) error {
	var keys []string
	for _, k := range md.Undecoded() {
		// net.backend is not a part of the spec: readBackend reads it. Env
		// options are the env's to check; the decoder reports the keys of
		// tables inside their arrays (gym wrappers) as undecoded.
		if k.String() != "net.backend" && !isEnvOption(k) {
			keys = append(keys, k.String()+keyNotes(data, k))
		}
	}
	if len(keys) > 0 {
		return fmt.Errorf("unknown keys: %s", strings.Join(keys, ", "))
	}
	// The decoder matches keys to fields ignoring case, but what is
	// defined (md.IsDefined, which decides what gets a default) is exact:
	// keys are spelled as documented, in lower case.
	for _, k := range md.Keys() {
		if s := k.String(); s != strings.ToLower(s) && !isEnvOption(k) {
			if line := keyLine(data, k); line > 0 {
				s += fmt.Sprintf(" (line %d, write %s)", line, strings.ToLower(s))
			}
			keys = append(keys, s)
		}
	}
	if len(keys) > 0 {
		return fmt.Errorf("keys not in lower case: %s: write them as configs/pop.toml does", strings.Join(keys, ", "))
	}
	return nil
}

// isEnvOption reports whether k lies inside [env.options].
func isEnvOption(k toml.Key) bool { return len(k) > 2 && k[0] == "env" && k[1] == "options" }

// readBackend sets the PPO config's backend from net.backend; the default
// stays "", as in agent files.
func readBackend(md toml.MetaData, data []byte, cfg *Config) error {
	if !md.IsDefined("net", "backend") {
		return nil
	}
	var nb struct {
		Net struct {
			Backend string `toml:"backend"`
		} `toml:"net"`
	}
	if _, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&nb); err != nil {
		return err
	}
	if nb.Net.Backend == "" {
		return fmt.Errorf("net.backend = \"\": want %q (the default) or another registered backend", nn.DefaultBackend)
	}
	if nb.Net.Backend != nn.DefaultBackend {
		cfg.PPO.Backend = nb.Net.Backend
	}
	return nil
}

// completeNet checks [net]'s tables against its encoder and fills the keys
// the file does not set; the agent's config gets the same network.
func completeNet(md toml.MetaData, cfg *Config) error {
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
	// A memory list naming something other than memory models, or one twice, is reported
	// as such by the network's validation: the tables it would allow are not judged by it.
	listed := true
	for i, m := range cfg.Net.Memories {
		listed = listed && m.Recurrent() && !slices.Contains(cfg.Net.Memories[:i], m)
	}
	for _, k := range []netconf.EncoderKind{netconf.EncoderMLP, netconf.EncoderCNN, netconf.EncoderLSTM, netconf.EncoderGRU, netconf.EncoderTransformer} {
		if k != cfg.Net.Encoder && md.IsDefined("net", string(k)) && !memoryTable(cfg.Net, k) && !dictPair(cfg.Net.Encoder, k) && listed {
			if len(cfg.Net.Memories) > 0 {
				errs = append(errs, fmt.Errorf("[net.%s] given, but net.encoder = %q and net.memory does not list %q: remove the table, or list it",
					k, cfg.Net.Encoder, k))
				continue
			}
			errs = append(errs, fmt.Errorf("[net.%s] given, but net.encoder = %q: remove it or set encoder = %q", k, cfg.Net.Encoder, k))
		}
	}
	if md.IsDefined("net", "lstm") && md.IsDefined("net", "gru") {
		errs = append(errs, errors.New("[net.lstm] and [net.gru] both given: an LSTM and a GRU share their sizes, give one table"))
	}
	if md.IsDefined("net", "memory") && len(cfg.Net.Memories) < 2 {
		errs = append(errs, fmt.Errorf("net.memory = %q: want two or three memory models, the encoder among them (or no memory key: the model stays the encoder)",
			cfg.Net.Memories))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	switch cfg.Net.Encoder {
	case netconf.EncoderMLP, netconf.EncoderCNN, netconf.EncoderLSTM, netconf.EncoderGRU, netconf.EncoderTransformer:
		fillNetDefaults(md, &cfg.Net)
	default:
		return fmt.Errorf("net.encoder = %q: want \"mlp\", \"cnn\", \"lstm\", \"gru\" or \"transformer\"", cfg.Net.Encoder)
	}
	cfg.PPO.Net = cfg.Net.Clone()
	return nil
}

// clone returns a copy of c that shares no memory with it: what a caller
// changes in it never reaches the config it came from.
func (c Config) clone() Config {
	d := c
	d.Env.Options = envs.Options(maps.Clone(map[string]any(c.Env.Options)))
	d.Net, d.PPO.Net = c.Net.Clone(), c.PPO.Net.Clone()
	d.HP = maps.Clone(c.HP)
	if c.PBT != nil {
		p := *c.PBT
		d.PBT = &p
	}
	if c.Demos != nil {
		x := *c.Demos
		d.Demos = &x
	}
	return d
}

// memoryTable reports whether the table of encoder kind k may stand beside the encoder's:
// k is a memory model the gene lists, a Transformer (its own sizes) or, while the encoder
// is a Transformer, the LSTM's or GRU's (their shared sizes).
func memoryTable(n netconf.Spec, k netconf.EncoderKind) bool {
	if !slices.Contains(n.Memories, k) {
		return false
	}
	return k == netconf.EncoderTransformer || n.Encoder == netconf.EncoderTransformer
}

// dictPair reports whether the table of encoder kind k may stand beside the encoder's
// for a Dict observation's keys: an MLP's and a CNN's (1-D keys through the MLP, images
// through the CNN). Whether the observation is a Dict is known when the env is made
// (tryBuild).
func dictPair(encoder, k netconf.EncoderKind) bool {
	mlpOrCNN := func(e netconf.EncoderKind) bool { return e == netconf.EncoderMLP || e == netconf.EncoderCNN }
	return mlpOrCNN(encoder) && mlpOrCNN(k)
}

// fillMemoryDefaults fills the tables of the memory models the gene lists beside the
// encoder: the Transformer's, and while the encoder is a Transformer the LSTM's or GRU's
// (one table: the one given, its absent keys filled, else the first listed).
func fillMemoryDefaults(md toml.MetaData, n *netconf.Spec) {
	for _, k := range n.Memories {
		switch {
		case k == n.Encoder:
		case k == netconf.EncoderTransformer:
			if n.Transformer == nil {
				n.Transformer = &netconf.Transformer{}
			}
			fillAbsent(md, n.Transformer, netconf.DefaultTransformer(), "net", "transformer")
		case n.Encoder == netconf.EncoderTransformer && n.LSTM != nil:
			fillAbsent(md, n.LSTM, netconf.DefaultLSTM(), "net", "lstm")
		case n.Encoder == netconf.EncoderTransformer && n.GRU != nil:
			fillAbsent(md, n.GRU, netconf.DefaultLSTM(), "net", "gru")
		case n.Encoder == netconf.EncoderTransformer:
			given := netconf.EncoderLSTM
			if md.IsDefined("net", "gru") || !md.IsDefined("net", "lstm") && k == netconf.EncoderGRU {
				given = netconf.EncoderGRU
			}
			sizes := &netconf.LSTM{}
			fillAbsent(md, sizes, netconf.DefaultLSTM(), "net", string(given))
			if given == netconf.EncoderGRU {
				n.GRU = sizes
			} else {
				n.LSTM = sizes
			}
		}
	}
}

// fillNetDefaults gives every key of [net]'s tables that the file does not
// set its default (the encoder's table, [net.latent], [net.head]), and
// leaves every key it sets as written, zero or empty included: hidden = []
// with min_layers = 0 is a head without hidden layers, not the default head.
// (netconf's FillDefaults cannot tell a zero from an absent key.)
func fillNetDefaults(md toml.MetaData, n *netconf.Spec) {
	switch n.Encoder {
	case netconf.EncoderMLP, netconf.EncoderCNN:
		// The encoder's table, and the other one when given (dictPair).
		if n.MLP == nil && n.Encoder == netconf.EncoderMLP {
			n.MLP = &netconf.MLP{}
		}
		if n.CNN == nil && n.Encoder == netconf.EncoderCNN {
			n.CNN = &netconf.CNN{}
		}
		if n.MLP != nil {
			fillAbsent(md, n.MLP, netconf.DefaultMLP(), "net", "mlp")
		}
		if n.CNN != nil {
			fillAbsent(md, n.CNN, netconf.DefaultCNN(), "net", "cnn")
		}
	case netconf.EncoderLSTM:
		if n.LSTM == nil {
			n.LSTM = &netconf.LSTM{}
		}
		fillAbsent(md, n.LSTM, netconf.DefaultLSTM(), "net", "lstm")
	case netconf.EncoderGRU:
		if n.GRU == nil {
			n.GRU = &netconf.GRU{}
		}
		fillAbsent(md, n.GRU, netconf.DefaultLSTM(), "net", "gru")
	case netconf.EncoderTransformer:
		if n.Transformer == nil {
			n.Transformer = &netconf.Transformer{}
		}
		fillAbsent(md, n.Transformer, netconf.DefaultTransformer(), "net", "transformer")
	}
	fillMemoryDefaults(md, n)
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

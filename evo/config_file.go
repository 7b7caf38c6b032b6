package evo

// The resolved config as a file: what a run writes to config.toml, how a
// config built in Go is completed to it, and the digests that identify it.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/netconf"
)

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
	Demos      *DemosConfig       `toml:"demos,omitempty"`
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
	GRU     *netconf.GRU        `toml:"gru,omitempty"`
	// Transformer sizes a "transformer" encoder.
	Transformer *netconf.Transformer `toml:"transformer,omitempty"`
	// Memory is written only when set, so that other configs (and their digests) stay
	// as they were.
	Memory []netconf.EncoderKind `toml:"memory,omitempty"`
	Latent netconf.Latent        `toml:"latent"`
	Head   netconf.MLP           `toml:"head"`
}

// resolvedHeader opens every config.toml a run writes: what tells a run's
// own config from a user's file of that name.
const resolvedHeader = "# The resolved config of this run (defaults filled in); evolve -resume reads it.\n"

// TOML returns the resolved config as a TOML file that LoadConfig
// reads back to an equal Config: every key written out, defaults filled,
// but for keys added in later releases, left out at their zero values. (It
// is not MarshalTOML, which would make a Config a toml.Marshaler: a struct
// of a user's embedding one would then encode a whole file as a value.)
func (c Config) TOML() ([]byte, error) {
	ppo := map[string]any{}
	v, t := reflect.ValueOf(c.PPO), reflect.TypeOf(c.PPO)
	for i := range t.NumField() {
		tag, opts, _ := strings.Cut(t.Field(i).Tag.Get("toml"), ",")
		if tag == "" || tag == "-" || tag == "net" {
			continue
		}
		// Keys added later are left out at their zero value, so that the
		// configs (and digests) of runs without them stay as they were.
		if opts == "omitzero" && v.Field(i).IsZero() {
			continue
		}
		ppo[tag] = v.Field(i).Interface()
	}
	n := c.Net
	f := fileConfig{Seed: c.Seed, OutDir: c.OutDir, Env: c.Env, Population: c.Population, PPO: ppo,
		Net: netFile{Backend: c.PPO.Backend, Encoder: n.Encoder, MLP: n.MLP, CNN: n.CNN, LSTM: n.LSTM, GRU: n.GRU, Transformer: n.Transformer, Memory: n.Memories, Latent: n.Latent, Head: n.Head}, Mutation: c.Mutation, Tournament: c.Tournament, HP: c.HP, PBT: c.PBT, Checkpoint: c.Checkpoint, Demos: c.Demos}
	if f.Env.Options == nil {
		f.Env.Options = envs.Options{}
	}
	var buf bytes.Buffer
	buf.WriteString(resolvedHeader)
	if err := toml.NewEncoder(&buf).Encode(f); err != nil {
		return nil, fmt.Errorf("encode config: %w", err)
	}
	return buf.Bytes(), nil
}

// Complete returns c as the config.toml of its run reads back
// (DecodeConfig of TOML): a config built or changed in Go gets what
// decoding a file gives it — the agents' network from Net (PPO.Net follows
// it), the network's defaults for its encoder, the default ranges of lr,
// batch_size and learn_step where HP has none, the strategy's settings —
// so that New trains what Resume later reads. Ranges already in HP stay as
// they are, those ParseConfig derived from [ppo] values included: after
// changing such a value in Go, delete its HP entry to have its range
// derived again. New and Validate complete their config this way.
func (c Config) Complete() (Config, error) {
	if reflect.DeepEqual(c.Net, netconf.Spec{}) {
		// DefaultConfig's empty network (no [net] table): a file without
		// one gets the default MLP, and so does a config built in Go.
		d, err := ParseConfig(nil)
		if err != nil {
			return Config{}, err
		}
		c.Net = d.Net
	}
	b, err := c.TOML()
	if err != nil {
		return Config{}, badInput(err)
	}
	d, err := DecodeConfig(b)
	if err != nil {
		return Config{}, err
	}
	return d, nil
}

// Digest identifies the whole config but out_dir and population.workers,
// which never change a run's results: "sha256:<hex>". Two configs with the
// same digest describe the same run, stopping rules included.
func (c Config) Digest() (string, error) {
	c.OutDir, c.Population.Workers = "", 0
	b, err := c.TOML()
	if err != nil {
		return "", err
	}
	return tomlDigest(b), nil
}

// GenerationsDigest identifies what determines the generations a run
// trains, which a checkpoint records: Digest's fields less the stopping
// rules, population.target and population.max_steps, which only decide
// when the run ends — except that with ppo.anneal_lr the budget is also
// the learning rate's horizon, and stays — and less a gym: env's python,
// timeout and start_timeout options. So a run can go on under a new
// target or budget (Trainer.SetStopRules), or with its Python moved or
// given more time, and still resume.
func (c Config) GenerationsDigest() (string, error) {
	b, err := c.generationsTOML()
	if err != nil {
		return "", err
	}
	return tomlDigest(b), nil
}

// generationsTOML is the config as GenerationsDigest hashes it, which a
// checkpoint keeps so that a refused resume can name the keys that changed.
// A gym: env's runtime options (gymRuntimeOptions) are left out.
func (c Config) generationsTOML() ([]byte, error) {
	if strings.HasPrefix(c.Env.ID, envs.GymPrefix) {
		c.Env.Options = maps.Clone(c.Env.Options)
		for _, k := range gymRuntimeOptions {
			delete(c.Env.Options, k)
		}
	}
	return c.legacyGenerationsTOML()
}

// gymRuntimeOptions are the gym: options that say where and how patiently
// the env's Python runs, not what it computes: a run may go on with
// another interpreter path (the same Python moved) or timeouts.
var gymRuntimeOptions = []string{"python", "timeout", "start_timeout"}

// legacyGenerationsTOML is generationsTOML as checkpoints recorded it
// before gymRuntimeOptions were left out.
func (c Config) legacyGenerationsTOML() ([]byte, error) {
	c.Population.Target = 0
	if !c.PPO.AnnealLR {
		c.Population.MaxSteps = 0
	}
	c.OutDir, c.Population.Workers = "", 0
	return c.TOML()
}

// tomlDigest is the digest of a config's TOML: "sha256:<hex>".
func tomlDigest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

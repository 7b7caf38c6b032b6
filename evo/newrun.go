package evo

// Building a fresh run: the config completed and checked, the out_dir
// checked, the initial population made.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"path/filepath"
	"strings"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/envs"
)

// New prepares a fresh run of cfg in cfg.OutDir: a config LoadConfig
// returns, or one built or changed in Go, which is completed as its
// config.toml will read back (Config.Complete).
// It refuses an out_dir that already holds a run or anything else, or
// lies inside a run (CheckNewOutDir), so that nothing written is ever
// overwritten. Run writes the files.
func New(cfg Config, opts Options) (*Trainer, error) {
	return newRun(context.Background(), cfg, opts, false)
}

// NewContext is New with a context: once ctx is done, the env it builds to
// check the config and size the agents (a gym: env's Python child, which
// may take long to start) is stopped, and it fails with an error matching
// envs.ErrInterrupted. Run takes its own context.
func NewContext(ctx context.Context, cfg Config, opts Options) (*Trainer, error) {
	return newRun(ctx, cfg, opts, false)
}

// newRun is NewContext; restarting is set when Resume starts again a run
// of its own directory that stopped before its first checkpoint, whose
// files New would otherwise refuse to write over.
func newRun(ctx context.Context, cfg Config, opts Options, restarting bool) (*Trainer, error) {
	// The run trains what its config.toml will say, which Resume reads.
	cfg, err := cfg.Complete()
	if err != nil {
		return nil, err
	}
	env, err := cfg.validateEnv(ctx, true) // the env the agents are made for
	if err != nil {
		return nil, err
	}
	defer envs.Close(env)
	if !restarting {
		if err := CheckNewOutDir(cfg.OutDir); err != nil {
			if !strings.HasPrefix(err.Error(), cfg.OutDir+" ") { // about a directory above it
				return nil, fmt.Errorf("out_dir %s: %w", cfg.OutDir, err)
			}
			return nil, fmt.Errorf("out_dir: %w", err)
		}
	}
	if cfg.Demos != nil && cfg.Demos.Dir != "" {
		// Relative to where the run starts; config.toml records it whole,
		// so that a resume from elsewhere reads the same directory.
		d := *cfg.Demos
		if abs, err := filepath.Abs(d.Dir); err == nil {
			d.Dir = abs
		}
		cfg.Demos = &d
	}
	t, err := newTrainer(cfg, cfg.OutDir, opts)
	if err != nil {
		return nil, err
	}
	t.restarting = restarting
	if _, box := env.ActionSpace().(envs.Box); !box && cfg.PPO.ActionStdInit != 0 {
		// Not refused: runs begun before this note was added hold it in
		// their config.toml, and must resume.
		t.log.Warn(fmt.Sprintf("ppo.action_std_init = %g has no effect: it is the initial log standard deviation of a Gaussian policy, for Box actions, and %s acts in %v",
			cfg.PPO.ActionStdInit, cfg.Env.ID, env.ActionSpace()), "config", "ppo.action_std_init")
	}
	for i := range cfg.Population.Size {
		ppo := cfg.PPO
		if cfg.Population.Init == InitSample {
			ppo = cfg.sampleHPs(i)
		}
		if ms := cfg.Net.Memories; len(ms) > 1 {
			// A memory gene: the population starts with every listed model, in turn.
			if ppo.Net, err = ppo.Net.WithMemory(ms[i%len(ms)]); err != nil {
				return nil, badInput(fmt.Errorf("agent %d: %w", i, err))
			}
		}
		a, err := agent.New(env.ObservationSpace(), env.ActionSpace(), ppo, deriveSeed(cfg.Seed, i, 0, purposeInit))
		if err != nil {
			return nil, badInput(fmt.Errorf("agent %d: %w", i, err))
		}
		a.TotalSteps = agentHorizon(cfg.Population)
		a.Env = cfg.envRef()
		t.members = append(t.members, &Member{Index: i, Parent: -1, Mutation: "initial", Agent: a})
	}
	t.nextIndex = cfg.Population.Size
	if err := t.initDemos(); err != nil {
		return nil, err
	}
	return t, nil
}

// agentHorizon is an agent's share of the population's budget, the
// horizon of its learning-rate annealing — at least one generation's
// evo_steps, since a run trains one generation whatever its budget (with a
// smaller horizon the rate would reach 0 early in it and the rest would
// train at 0).
func agentHorizon(p PopulationConfig) int {
	return max((p.MaxSteps+p.Size-1)/p.Size, p.EvoSteps)
}

func newTrainer(cfg Config, dir string, opts Options) (*Trainer, error) {
	genTOML, err := cfg.generationsTOML()
	if err != nil {
		return nil, err
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if n, l := cfg.Env.NumEnvs, cfg.PPO.LearnStep; n > 0 && l%n != 0 {
		// A rollout is whole steps of every env; the config keeps the
		// value as written (its digest, and runs begun with it, resume).
		log.Warn(fmt.Sprintf("ppo.learn_step = %d is not a multiple of env.num_envs = %d: each rollout takes %d env steps (%d per env), while the config and metrics.csv say %d",
			l, n, l/n*n, l/n, l), "config", "ppo.learn_step")
	}
	return &Trainer{cfg: cfg, dir: dir, opts: opts, log: log, digest: tomlDigest(genTOML), genTOML: genTOML,
		best: math.Inf(-1), bestFit: math.Inf(-1), bestIndex: -1, elite: EliteRecord{Index: -1}}, nil
}

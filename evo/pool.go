package evo

import (
	"context"
	"fmt"

	"github.com/evolverl/evolve/agent"
	"golang.org/x/sync/errgroup"
)

// Task is one member's work in a generation: train Agent for Steps (the
// run's evo_steps when 0) on a fresh vector env of the run's env, then score it (with
// fitness = "eval" on eval_episodes episodes seeded from EvalSeed, with
// "train" from its last training episodes). Together with the run's
// config it is all a trainer needs, here or on another machine: the agent
// carries its own RNG, so the outcome depends on nothing else.
type Task struct {
	Generation    int
	Index, Parent int
	Mutation      string
	EvalSeed      int64
	// Steps is the env steps the agent trains, rounded up to whole
	// rollouts; 0 means population.evo_steps. Under PBT it is what brings
	// the agent to the population's step clock: its own env steps up to the
	// laggard's plus evo_steps, in whole rollouts.
	Steps int `json:",omitempty"`
	Agent *agent.PPO
	// Demos are the demonstrations the agent replays with PPO+D (shared,
	// read-only); a remote pool does not carry them (runs with [demos]
	// train on local workers).
	Demos []agent.Demo `json:"-"`
}

// Result is a finished Task: its report and the trained agent (Task.Agent
// itself, trained in place, for LocalPool; a copy decoded from a worker's
// file for a remote pool).
type Result struct {
	Report MemberReport
	Agent  *agent.PPO
}

// A Pool is where the members of a generation train: the seam between the
// generation loop, which stays in the Trainer (selection, mutation,
// checkpoints, metrics), and the machines that do the work. LocalPool runs
// goroutines of this process; package evo/natsrun sends tasks to workers
// over NATS JetStream.
type Pool interface {
	// Train runs every task with the run's config cfg and returns one
	// Result per task, in the order of tasks, or the first error (naming
	// the agent). progress, when called (from any goroutine), adds env steps
	// taken to the run's Progress. A task's error fails the generation.
	Train(ctx context.Context, cfg Config, tasks []Task, progress func(steps int)) ([]Result, error)
}

// LocalPool trains tasks on goroutines of this process, at most Workers at
// once (at least one).
type LocalPool struct {
	Workers int
}

// Train implements Pool: each task's agent trains in place.
func (p LocalPool) Train(ctx context.Context, cfg Config, tasks []Task, progress func(steps int)) ([]Result, error) {
	eg, ctx := errgroup.WithContext(ctx)
	eg.SetLimit(max(1, p.Workers))
	results := make([]Result, len(tasks))
	for i, task := range tasks {
		eg.Go(func() error {
			r, err := TrainTask(ctx, cfg, task, progress)
			results[i] = Result{Report: r, Agent: task.Agent}
			return err
		})
	}
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	return results, nil
}

// TrainTask trains task.Agent in place with the run's config cfg and
// scores it (see Task): what every Pool does with a task, wherever it runs. A loss
// or weights that are not finite make the fitness −Inf (the report's
// Divergence says why); bad env output and a panic (an env's, most likely)
// become an error naming the agent and the env. progress, if not nil, is
// called with the env steps of each rollout as it finishes.
func TrainTask(ctx context.Context, cfg Config, task Task, progress func(steps int)) (MemberReport, error) {
	if progress == nil {
		progress = func(int) {}
	}
	if task.Agent == nil {
		return MemberReport{}, fmt.Errorf("train task of agent %d: no agent", task.Index)
	}
	return taskRunner{cfg: cfg, progress: progress}.trainOne(ctx, task)
}

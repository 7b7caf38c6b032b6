package evo

import (
	"log/slog"
	"maps"
	"time"

	"github.com/evolverl/evolve/agent"
)

// Why a run stopped (Summary.StopReason).
const (
	StopTarget      = "target"      // a generation's best fitness reached population.target
	StopBudget      = "budget"      // the population's env steps reached population.max_steps
	StopInterrupted = "interrupted" // the context was cancelled (a signal)
	StopError       = "error"       // an agent or env failed
)

// Member is one agent of the population with what evolution knows of it.
type Member struct {
	// Index identifies the agent for the whole run; clones get new ones.
	Index int
	// Parent is the index of the agent this one was cloned from (-1 for the
	// initial population). An elite kept as it is keeps its own Parent.
	Parent int
	// Mutation describes the mutation it received before its current
	// generation ("initial" for the initial population).
	Mutation string
	// Fitness lists its fitness in every generation it was evaluated,
	// inherited from its ancestors, oldest first.
	Fitness []float64
	// Returns are the episode returns behind its last fitness (PBT's
	// t-test reads them).
	Returns []float64
	Agent   *agent.PPO
	// genSteps are its env steps in the generation of its last fitness,
	// idle whether that generation left it idle (MemberReport.Idle), for
	// PB2's observations; genSteps 0 stands for evo_steps (as
	// population.json omits it) or, in a checkpoint of an earlier build,
	// for steps unknown: either way PB2 takes the change as it is.
	genSteps int
	idle     bool
}

// Options are run-time settings that never change a run's results.
type Options struct {
	// Workers overrides population.workers when > 0.
	Workers int
	// Log receives warnings (a diverged agent, a resume on other numeric
	// kernels, rows of metrics.csv lost) and notes (a new elite); nil
	// discards them: a program that wants them passes slog.Default() or its
	// own logger.
	Log *slog.Logger
	// OnGeneration, when set, is called after each generation from the
	// goroutine that runs Run.
	OnGeneration func(GenerationReport)
	// Pool trains and evaluates the members of each generation; nil means
	// LocalPool with Workers goroutines. Where agents train never changes
	// what they learn.
	Pool Pool
}

// GenerationReport describes one finished generation.
type GenerationReport struct {
	Generation int
	// TotalSteps is the population's env steps so far, MaxSteps the budget.
	TotalSteps, MaxSteps int
	// Members are the agents as they were trained and evaluated, in
	// population order.
	Members []MemberReport
	// Best is the position in Members of the generation's best agent;
	// NewElite is set when it is the best of the run so far and was saved
	// to elite.safetensors.
	Best     int
	NewElite bool
	// EliteFitness is the elite's score: the best fitness of the run so
	// far, or with population.elite_episodes the best confirmed score.
	EliteFitness float64
	// Confirmed is the mean return of the generation's best agent on the
	// elite confirmation episodes, NaN when it did not play them.
	Confirmed float64
	// GlobalSteps counts every env step of the run so far: training,
	// evaluation and elite confirmation (TotalSteps counts training only).
	GlobalSteps int
	Wall        time.Duration // since the start of this session
}

// MemberReport is one agent's row of a generation.
type MemberReport struct {
	Index, Parent int
	Fitness       float64
	// Diverged is set when its loss or weights were not finite; its
	// fitness is then −Inf, and Divergence says what was not finite.
	Diverged   bool
	Divergence string
	// Steps is the agent's own env steps in all (inherited ones included),
	// GenSteps those of this generation.
	Steps, GenSteps int
	// Idle is set when the agent trained nothing this generation: under
	// PBT it was ahead of the population's step clock (a rollout longer
	// than evo_steps carried it there). Its Fitness and Returns are those
	// it had; TrainReturn and Stats are NaN.
	Idle bool
	// TrainReturn is the mean return of the training episodes finished in
	// this generation (NaN if none).
	TrainReturn float64
	// Returns are the episode returns whose mean is Fitness (evaluation
	// episodes, or with population.fitness = "train" training episodes);
	// EvalSteps are the env steps its evaluation took (0 without one).
	Returns   []float64
	EvalSteps int
	Stats     agent.Stats // the last PPO update
	// Updates are the generation's PPO updates in order (the last one's
	// Stats are Stats), for TensorBoard's per-update series.
	Updates  []Update
	Config   agent.Config
	Mutation string
}

// An Update is one PPO update of a member's generation: its statistics,
// and GenSteps, the member's env steps in the generation when it was made
// (the rollout it learned from included).
type Update struct {
	GenSteps int
	Stats    agent.Stats
}

// Summary describes a run at its end or stop; summary.json holds it.
type Summary struct {
	Dir         string `json:"dir"`
	Generations int    `json:"generations"`
	TotalSteps  int    `json:"total_steps"`
	// GlobalSteps counts training, evaluation and confirmation steps.
	GlobalSteps int     `json:"global_steps"`
	WallSeconds float64 `json:"wall_s"` // over all sessions of the run
	// StepsPerSecond is the population's env steps per second of this
	// session (resumed runs count only their own steps and time).
	StepsPerSecond float64 `json:"steps_per_s"`
	// EliteFitness is the elite's score, as GenerationReport's (−Inf before
	// any);
	// summary.json writes it as elite_fitness, infinities as strings.
	EliteFitness float64 `json:"-"`
	EliteIndex   int     `json:"elite_index"`
	// EliteFile is the path of elite.safetensors ("" if no agent ever had
	// a finite fitness).
	EliteFile  string `json:"elite_file"`
	StopReason string `json:"stop_reason"`
	Finished   bool   `json:"finished"`
	// Elite is the elite as it was when saved (nil before any, and in runs
	// that saved their elite before it was recorded); summary.json writes it
	// last, as "elite".
	Elite *EliteRecord `json:"-"`
}

// Elite describes the run's elite as it was when saved (summary.json's
// "elite"); Index is −1 before any, and Generation 0 in runs that saved
// their elite before it was recorded.
func (t *Trainer) Elite() EliteRecord {
	e := t.elite
	e.HP = maps.Clone(e.HP)
	return e
}

// EliteRecord is the elite when it was saved: the generation it was saved
// after, its agent index, its network and its mutable hyperparameters (the
// metrics.csv columns). Indices outlive mutation, so the index alone does
// not say which network was the elite.
type EliteRecord struct {
	Generation int                `json:"generation,omitempty"`
	Index      int                `json:"index"`
	Net        string             `json:"net,omitempty"`
	HP         map[string]float64 `json:"hp,omitempty"`
}

// Progress is a snapshot of a running run, safe to take from any goroutine.
type Progress struct {
	Generation int // the generation being trained (the last one when done)
	// TotalSteps counts the population's env steps, including those taken
	// so far in the running generation.
	TotalSteps, MaxSteps int
}

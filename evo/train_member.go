package evo

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/internal/panicsite"
)

// trainGeneration trains and evaluates the members through the pool and
// returns one report per member in population order; each member then holds
// its trained agent. Under PBT a member ahead of the population's step
// clock (see memberSteps) trains nothing and keeps its fitness (an idle
// report).
func (t *Trainer) trainGeneration(ctx context.Context, g int) ([]MemberReport, error) {
	// Every agent of a generation starts its evaluation from the same seed,
	// so that the tournament compares like with like (exactly so on envs
	// that draw random numbers only at reset).
	evalSeed := int64(deriveSeed(t.cfg.Seed, -1, g, purposeEval) >> 1)
	demos := t.generationDemos(g)
	toTrain := t.memberSteps()
	reports := make([]MemberReport, len(t.members))
	var tasks []Task
	var at []int // the member of each task
	for i, m := range t.members {
		if toTrain != nil && toTrain[i] <= 0 {
			reports[i] = idleReport(m)
			continue
		}
		task := Task{Generation: g, Index: m.Index, Parent: m.Parent, Mutation: m.Mutation, EvalSeed: evalSeed, Agent: m.Agent, Demos: demos}
		if toTrain != nil {
			task.Steps = toTrain[i]
		}
		tasks, at = append(tasks, task), append(at, i)
	}
	pool := t.opts.Pool
	if pool == nil {
		pool = LocalPool{Workers: t.Workers()}
	}

	results, err := pool.Train(ctx, t.cfg, tasks, func(steps int) { t.progSteps.Add(int64(steps)) })
	if err != nil {
		return nil, err
	}
	if len(results) != len(tasks) {
		return nil, fmt.Errorf("generation %d: the pool returned %d results for %d agents", g, len(results), len(tasks))
	}
	for k, r := range results {
		if r.Report.Index != tasks[k].Index || r.Agent == nil {
			return nil, fmt.Errorf("generation %d: the pool's result %d is for agent %d (agent %v), want agent %d", g, k, r.Report.Index, r.Agent != nil, tasks[k].Index)
		}
		i := at[k]
		t.members[i].Agent = r.Agent
		reports[i] = r.Report
		if r.Report.Diverged {
			t.log.Warn("agent diverged: fitness -Inf for this generation", "agent", r.Report.Index, "why", r.Report.Divergence)
		}
	}
	// A generation without a step would be followed by the same one, for
	// ever (agents whose weights are not finite fail before their first).
	steps, why := 0, ""
	for _, r := range reports {
		steps += r.GenSteps
		if r.Diverged && why == "" {
			why = fmt.Sprintf(": agent %d: %s", r.Index, r.Divergence)
		}
	}
	if steps == 0 {
		return nil, fmt.Errorf("generation %d: no agent took an env step (every one that trained diverged%s)", g, why)
	}
	return reports, nil
}

// memberSteps returns the env steps each member trains in the coming
// generation, nil for the tournament (each trains evo_steps rounded up to
// its own whole rollouts, as AgileRL's do). Under PBT the members keep a
// step clock instead: each trains until its own env steps (agent.PPO.Steps,
// inherited by copies) reach the laggard's plus evo_steps, in whole
// rollouts, so that every member has trained about as much as the others
// when PBT ranks them. A member whose rollout carried it past that (one
// longer than evo_steps) trains nothing (0) until the others catch up, and
// PBT leaves it out of its ranking meanwhile (see aheadOfClock). Without
// the clock, an agent whose rollout was 4 × evo_steps trained 4 × the
// steps of the others each generation, ranked first for that rather than
// for its hyperparameters, and was copied until the population updated a
// few times per generation (CartPoleNoVel's PB2 benchmark lost two seeds
// of five so). Where every rollout divides evo_steps the clock changes
// nothing: each member trains evo_steps.
func (t *Trainer) memberSteps() []int {
	p := t.cfg.Population
	if p.Independent || t.cfg.selection() != SelectPBT {
		return nil
	}
	target := t.laggardSteps() + p.EvoSteps
	steps := make([]int, len(t.members))
	for i, m := range t.members {
		steps[i] = target - m.Agent.Steps
		if len(m.Fitness) == 0 { // never scored: it trains, whatever its steps
			steps[i] = max(steps[i], 1)
		}
	}
	return steps
}

// laggardSteps returns the fewest env steps any member has trained, of
// those whose last fitness is not −Inf: a diverged agent (which may take
// no step at all) must not stop the clock; PBT ranks it, last, and
// replaces it. With every member diverged, of them all.
func (t *Trainer) laggardSteps() int {
	least, all := math.MaxInt, math.MaxInt
	for _, m := range t.members {
		all = min(all, m.Agent.Steps)
		if !diverged(m) {
			least = min(least, m.Agent.Steps)
		}
	}
	if least == math.MaxInt {
		return all
	}
	return least
}

// diverged reports whether member m's last fitness is −Inf (its loss or
// weights were not finite).
func diverged(m *Member) bool {
	return len(m.Fitness) > 0 && math.IsInf(m.Fitness[len(m.Fitness)-1], -1)
}

// aheadOfClock returns how many env steps member m has trained beyond the
// population's laggard when that is half of evo_steps or more, else 0:
// PBT ranks such a member neither as a source nor as a target until the
// others have caught up (its fitness was measured after more training
// than theirs).
func (t *Trainer) aheadOfClock(m *Member) int {
	ahead := m.Agent.Steps - t.laggardSteps()
	if 2*ahead < t.cfg.Population.EvoSteps || diverged(m) {
		return 0
	}
	return ahead
}

// idleReport is the report of a member that trains nothing this
// generation: its steps and its fitness as they were (diverged, if it
// was), no statistics.
func idleReport(m *Member) MemberReport {
	nan := math.NaN()
	r := MemberReport{Index: m.Index, Parent: m.Parent, Mutation: m.Mutation, Config: m.Agent.Config(),
		Fitness: m.Fitness[len(m.Fitness)-1], Returns: m.Returns, Steps: m.Agent.Steps, Idle: true,
		TrainReturn: nan, Stats: agent.Stats{PolicyLoss: nan, ValueLoss: nan, Entropy: nan, Loss: nan,
			ApproxKL: nan, ClipFrac: nan, ExplainedVariance: nan, GradNorm: nan, LR: nan, IntrinsicReward: nan, RNDLoss: nan}}
	if diverged(m) {
		r.Diverged, r.Divergence = true, "in an earlier generation"
	}
	return r
}

// taskRunner trains tasks with a run's config, wherever they run.
type taskRunner struct {
	cfg      Config
	progress func(steps int) // called as steps are taken, from any goroutine
}

// trainOne trains one task's agent in place for m.Steps (evo_steps when 0)
// on a fresh vector env and evaluates it (episodes cut at eval_max_steps).
// A loss or weights that are not finite make its fitness −Inf
// (r.Divergence says why); bad env output, in training or in evaluation,
// and a panic (an env's, most likely) become an error naming the agent and
// the env. An agent trained on MinAtar's full action set under a "-v1" id
// (a run begun when -v1 named that set) trains on the "-v0" id
// (envs.LegacyMinAtarID). It is long so that one recover and one vector
// env span training and scoring alike: a panic in either names the agent
// and the env.
func (t taskRunner) trainOne(ctx context.Context, m Task) (r MemberReport, err error) {
	id := envs.LegacyMinAtarID(t.cfg.Env.ID, t.cfg.Env.Options, m.Agent.ActionSpace())
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("agent %d on env %s: panic: %v, in %s", m.Index, id, p, panicsite.Of())
		}
	}()
	a := m.Agent
	if err := a.SetDemos(m.Demos); err != nil {
		return MemberReport{}, fmt.Errorf("agent %d: %w", m.Index, err)
	}
	r = MemberReport{Index: m.Index, Parent: m.Parent, Mutation: m.Mutation, Config: a.Config(), TrainReturn: math.NaN()}
	vec, err := envs.MakeVectorContext(ctx, id, t.cfg.Env.NumEnvs, t.cfg.Env.Options) // a stop does not wait for a gym: child to start
	if err != nil {
		return r, fmt.Errorf("agent %d: %w", m.Index, err)
	}
	defer vec.Close()
	retSum, episodes := 0.0, 0
	var ended []float64 // training episodes' returns, for population.fitness = "train"
	// Episodes that ended after the generation's first update: the first
	// rollout's were played by the weights (and hyperparameters' effect)
	// the generation began with, so a generation of one rollout (a
	// learn_step at least the generation's steps) would be scored on its
	// parent's work.
	endedAfterUpdate := 0
	diverged := ""
	// One rollout per call, so that progress is visible while it trains
	// and each call's ts.Last is one update (r.Updates); the agent
	// continues on the same vector, exactly as one long call.
	target := m.Steps
	if target <= 0 {
		target = t.cfg.Population.EvoSteps
	}
	for r.GenSteps < target {
		ts, err := a.Train(ctx, vec, 1)
		r.GenSteps += ts.Steps
		t.progress(ts.Steps)
		if ts.Episodes > 0 {
			if len(r.Updates) > 0 {
				endedAfterUpdate += ts.Episodes
			}
			retSum += ts.Return * float64(ts.Episodes)
			episodes += ts.Episodes
			if t.cfg.Population.Fitness == FitnessTrain {
				ended = append(ended, ts.Returns...)
				// Only the last eval_episodes count: keep no more.
				if k := t.cfg.Env.EvalEpisodes; len(ended) > 2*k {
					ended = append(ended[:0], ended[len(ended)-k:]...)
				}
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return r, err
			}
			if d, ok := divergence(a, err); ok {
				diverged = d
				break
			}
			return r, fmt.Errorf("agent %d on env %s: train: %w", m.Index, id, err)
		}
		r.Stats = ts.Last
		r.Updates = append(r.Updates, Update{GenSteps: r.GenSteps, Stats: ts.Last})
	}
	if episodes > 0 {
		r.TrainReturn = retSum / float64(episodes)
	}
	r.Steps = a.Steps
	if diverged == "" {
		if !finiteStats(r.Stats) {
			diverged = fmt.Sprintf("loss %v", r.Stats.Loss)
		} else if err := a.CheckFinite(); err != nil {
			diverged = err.Error()
		}
	}
	if diverged == "" && len(ended) > 0 && endedAfterUpdate > 0 {
		r.Returns = ended[max(0, len(ended)-t.cfg.Env.EvalEpisodes):]
		r.Fitness = mean(r.Returns)
	} else if diverged == "" {
		// The vector's env 0 is done training: Play seeds its episodes,
		// which makes it as good as a new env (the reset contract that
		// envs.Check holds every env to), and a Python env needs no second
		// child.
		play := a.PlayContext
		if t.cfg.Population.Fitness == FitnessTrain {
			// Sampled actions, as the training episodes it stands in for:
			// deterministic returns (often higher) would rank this agent on
			// another footing than the rest, and PB2 would credit its
			// hyperparameters with the difference.
			play = a.PlaySampled
		}
		played, err := play(ctx, vec.Env(0), t.cfg.Env.EvalEpisodes, t.cfg.Env.EvalMaxSteps, m.EvalSeed)
		switch {
		case errors.Is(err, agent.ErrNonFinite):
			// Finite weights whose outputs overflowed: diverged too (its
			// steps so far were taken, and count).
			diverged, r.EvalSteps = err.Error(), played.Steps
		case err != nil:
			// Play's errors begin "evaluate episode N step S".
			return r, fmt.Errorf("agent %d on env %s: %w", m.Index, id, err)
		default:
			r.Fitness, r.Returns, r.EvalSteps = played.Mean(), played.Returns, played.Steps
			if math.IsNaN(r.Fitness) {
				diverged = "fitness NaN"
			}
		}
	}
	if diverged != "" {
		r.Fitness, r.Diverged, r.Divergence = math.Inf(-1), true, diverged
	}
	return r, nil
}

// divergence reports whether a training error means the agent diverged
// (non-finite loss, gradient or weights) rather than a failure of the env
// or the code.
func divergence(a *agent.PPO, err error) (string, bool) {
	if errors.Is(err, agent.ErrNonFinite) {
		return err.Error(), true
	}
	if werr := a.CheckFinite(); werr != nil {
		return werr.Error() + " (" + err.Error() + ")", true
	}
	return "", false
}

func finiteStats(st agent.Stats) bool {
	for _, v := range []float64{st.Loss, st.PolicyLoss, st.ValueLoss, st.Entropy} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

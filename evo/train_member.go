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

// trainGeneration trains and evaluates every member through the pool and
// returns one report per member in population order; each member then holds
// its trained agent.
func (t *Trainer) trainGeneration(ctx context.Context, g int) ([]MemberReport, error) {
	// Every agent of a generation starts its evaluation from the same seed,
	// so that the tournament compares like with like (exactly so on envs
	// that draw random numbers only at reset).
	evalSeed := int64(deriveSeed(t.cfg.Seed, -1, g, purposeEval) >> 1)
	demos := t.generationDemos(g)
	steps := t.generationSteps()
	tasks := make([]Task, len(t.members))
	for i, m := range t.members {
		tasks[i] = Task{Generation: g, Index: m.Index, Parent: m.Parent, Mutation: m.Mutation, EvalSeed: evalSeed, Steps: steps, Agent: m.Agent, Demos: demos}
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
	reports := make([]MemberReport, len(results))
	for i, r := range results {
		if r.Report.Index != tasks[i].Index || r.Agent == nil {
			return nil, fmt.Errorf("generation %d: the pool's result %d is for agent %d (agent %v), want agent %d", g, i, r.Report.Index, r.Agent != nil, tasks[i].Index)
		}
		t.members[i].Agent = r.Agent
		reports[i] = r.Report
		if r.Report.Diverged {
			t.log.Warn("agent diverged: fitness -Inf for this generation", "agent", r.Report.Index, "why", r.Report.Divergence)
		}
	}
	return reports, nil
}

// generationSteps returns how many env steps each member trains in the
// coming generation: 0 (population.evo_steps, each agent rounding up to
// its own whole rollouts) for the tournament, as AgileRL does; under PBT,
// the largest of those roundings over the members (a rollout of 192 steps
// makes evo_steps 256 into 384; one of 1,024 makes it 1,024), which every
// member trains (to within its own rollout) before PBT ranks them. Otherwise an agent whose rollout outruns evo_steps trains several
// times the steps of the others in the generation, ranks first for that
// training rather than for its hyperparameters, and is copied until the
// whole population updates a few times per generation (CartPoleNoVel's
// PB2 benchmark lost two seeds of five so).
func (t *Trainer) generationSteps() int {
	p := t.cfg.Population
	if p.Independent || t.cfg.selection() != SelectPBT {
		return 0
	}
	steps := p.EvoSteps
	for _, m := range t.members {
		r := rolloutSteps(m.Agent.Config().LearnStep, t.cfg.Env.NumEnvs)
		steps = max(steps, (p.EvoSteps+r-1)/r*r)
	}
	return steps
}

// rolloutSteps is the env steps of one rollout of learnStep over numEnvs
// envs (agent.PPO.Train's: learnStep/numEnvs steps of each env, at least 1).
func rolloutSteps(learnStep, numEnvs int) int {
	n := max(numEnvs, 1)
	return max(1, learnStep/n) * n
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
	vec, err := envs.MakeVector(id, t.cfg.Env.NumEnvs, t.cfg.Env.Options)
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
		if err != nil {
			// Play's errors begin "evaluate episode N step S".
			return r, fmt.Errorf("agent %d on env %s: %w", m.Index, id, err)
		}
		r.Fitness, r.Returns, r.EvalSteps = played.Mean(), played.Returns, played.Steps
		if math.IsNaN(r.Fitness) {
			diverged = "fitness NaN"
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

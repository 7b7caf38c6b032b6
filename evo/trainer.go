package evo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/internal/tbevent"
)

// Trainer runs the generations of one run. Build it with New or Resume,
// then call Run once (a second call is an error).
type Trainer struct {
	cfg    Config
	dir    string
	opts   Options
	log    *slog.Logger
	digest string
	// genTOML is the config GenerationsDigest hashes into digest.
	genTOML []byte

	members []*Member
	demos   *demoLoader // PPO+D's demonstrations ([demos]); nil without
	// loggedDemos is set once the demos in use have been logged.
	loggedDemos bool
	gen         int // generations completed
	totalSteps  int
	// measureSteps are the env steps spent on evaluation and elite
	// confirmation so far; with totalSteps, the run's global steps.
	measureSteps int
	// metricsWidth is the number of metrics.csv's columns: fewer than
	// metricsHeader's in a run begun by an earlier build.
	metricsWidth int
	nextIndex    int
	// pb2 are PB2's observations (pbt.explore = "pb2"), the newest
	// pb2MaxObs.
	pb2  []pb2Obs
	best float64 // best fitness of the run so far
	// bestFit is the elite's fitness when it was saved, which a
	// candidate's fitness is held against when fitness comes from
	// training episodes (a stochastic policy's returns, on another scale
	// than the elite's confirmed score).
	bestFit float64
	// elite describes the elite when it was saved (agent indices outlive
	// the networks and hyperparameters they had).
	elite     EliteRecord
	bestIndex int
	// eliteMissing: resumed with the elite file its checkpoint records
	// removed (see forgetElite).
	eliteMissing bool
	// eliteCopy is the elite file of the checkpoint resumed from (see
	// restoreElite), or "".
	eliteCopy  string
	finished   bool
	stopReason string
	reopened   bool    // a finished run that SetStopRules lets go on: its last population is not evolved yet
	saveConfig bool    // config.toml is to be rewritten (new stopping rules) after the next checkpoint
	wallBefore float64 // seconds spent by earlier sessions
	resumed    bool
	// restarting: Resume starts again a run that stopped before its first
	// checkpoint, into the directory holding its config.toml.
	restarting bool
	// resumedWholeDigest: the checkpoint resumed from records the config's
	// whole Digest (an older build), not GenerationsDigest.
	resumedWholeDigest bool
	ran                bool // Run was called: a Trainer runs once
	// beforeLatest, when set (by tests), runs just before a checkpoint is
	// named latest: the moment a stop would leave the run at.
	beforeLatest func()
	events       *tbevent.Writer // this session's TensorBoard event file
	confirmEnv   envs.Env        // the elite confirmation env, made on first use
	runLock      *runLock        // the run directory's lock; nil when not held

	progSteps atomic.Int64
	progGen   atomic.Int64
}

// Config returns the run's config.
func (t *Trainer) Config() Config { return t.cfg.clone() }

// Dir returns the run's directory.
func (t *Trainer) Dir() string { return t.dir }

// Finished reports whether the run has ended by its target or its budget
// (a resumed finished run has nothing left to do).
func (t *Trainer) Finished() bool { return t.finished }

// SetStopRules replaces the run's stopping rules, population.max_steps and
// population.target (+Inf for none), before Run: to train a run further
// than its config said, or to stop it sooner. The generations trained are
// the same as under the old rules up to where either stops, and the new
// rules go to config.toml with the next checkpoint, so that a later resume
// keeps them (a crash before that checkpoint resumes under the old ones).
//
// A finished run goes on if the new rules would not have stopped it after
// its last generation: that generation's population is then selected and
// mutated as it would have been, and training continues. If they would
// have stopped it too (or, for a run stopped between checkpoints, its
// checkpoint's generation), SetStopRules fails naming the rule, as it does when
// ppo.anneal_lr makes the budget the learning rate's horizon and max_steps
// changes. Errors match ErrBadInput.
func (t *Trainer) SetStopRules(maxSteps int, target float64) error {
	p := t.cfg.Population
	switch {
	case maxSteps < 1:
		return badInput(fmt.Errorf("max_steps %d: want >= 1", maxSteps))
	case math.IsNaN(target):
		return badInput(errors.New("target NaN: want a number (+Inf: no target)"))
	case t.cfg.PPO.AnnealLR && maxSteps != p.MaxSteps:
		return badInput(fmt.Errorf("max_steps %d: the run anneals its learning rate to 0 over population.max_steps (%d), so its budget cannot change", maxSteps, p.MaxSteps))
	}
	// Rules the run already meets are refused, finished or not (a run
	// stopped between checkpoints trained one more generation under them).
	last := math.Inf(-1) // as applyStopRules saw it: of the members that trained
	for _, m := range t.members {
		if n := len(m.Fitness); n > 0 && !m.idle {
			last = max(last, m.Fitness[n-1])
		}
	}
	score, what := last, "its last generation's best fitness"
	if p.EliteEpisodes > 0 {
		score, what = t.best, "its elite's confirmed score"
	}
	switch {
	case t.totalSteps >= maxSteps && t.cfg.PPO.AnnealLR:
		// A larger budget is refused too (above): do not suggest one.
		return badInput(fmt.Errorf("the run spent its budget, max_steps %d, and anneals its learning rate to 0 over it: it cannot train further; start a new run with a larger population.max_steps",
			maxSteps))
	case t.totalSteps >= maxSteps:
		return badInput(fmt.Errorf("max_steps %d: the run has already taken %s env steps; give a larger budget to train it further",
			maxSteps, commas(int64(t.totalSteps))))
	case t.gen > 0 && t.gen >= p.MinGenerations && score >= target:
		return badInput(fmt.Errorf("target %v: %s, %v, already reaches it; give a higher target (or none) to train it further",
			target, what, score))
	}
	if t.finished {
		t.finished, t.stopReason, t.reopened = false, "", true
	}
	if maxSteps != p.MaxSteps || target != p.Target {
		t.cfg.Population.MaxSteps, t.cfg.Population.Target = maxSteps, target
		t.saveConfig = true
		// Each agent records the budget's share as its horizon, which
		// without anneal_lr nothing reads: it follows the new budget, as
		// in a run that had it from the start.
		for _, m := range t.members {
			m.Agent.TotalSteps = agentHorizon(t.cfg.Population)
		}
	}
	return nil
}

// Members returns the current population (after the last completed
// generation's selection and mutation). It must not be called while Run
// runs.
func (t *Trainer) Members() []*Member { return t.members }

// Progress returns a snapshot of the run's progress.
func (t *Trainer) Progress() Progress {
	return Progress{Generation: int(t.progGen.Load()), TotalSteps: int(t.progSteps.Load()),
		MaxSteps: t.cfg.Population.MaxSteps}
}

// Workers returns the number of agents trained at once.
func (t *Trainer) Workers() int {
	switch {
	case t.opts.Workers > 0:
		return t.opts.Workers
	case t.cfg.Population.Workers > 0:
		return t.cfg.Population.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// Run trains generations until the target or the budget is reached or ctx
// is cancelled. Each generation: every agent trains evo_steps (under PBT,
// up to the population's step clock: its env steps up to the laggard's plus
// evo_steps) on a fresh vector
// env of its own and is scored (at most Workers at once), the elite is saved when
// it is the best so far, metrics rows are appended, the
// selection (tournament or PBT; none for independent agents) makes the next
// population and mutates it, and a checkpoint is written. On cancellation
// the running generation is abandoned (the newest checkpoint stays the
// resume point) and the error wraps ctx.Err(); ctx is checked between
// training rollouts and before every evaluation and confirmation step. An
// env panic fails the run with an error naming the agent and the env.
// summary.json is written at the end and whenever a generation is
// abandoned.
func (t *Trainer) Run(ctx context.Context) (Summary, error) {
	if ctx == nil {
		// Before anything is written: errgroup panics on a nil context.
		return Summary{}, errors.New("evo: Run with a nil context (use context.Background())")
	}
	if t.ran {
		return Summary{}, errors.New("evo: Run called twice on one Trainer (Resume the run directory to go on)")
	}
	t.ran = true
	defer t.release()
	start := time.Now()
	sessionStart := t.totalSteps
	t.progSteps.Store(int64(t.totalSteps))
	t.progGen.Store(int64(t.gen))
	t.forgetElite()
	if err := t.restoreElite(); err != nil {
		return Summary{}, err
	}
	if t.finished {
		s := t.summary(start, sessionStart)
		// A stop between the last checkpoint and summary.json (a SIGKILL)
		// leaves the file stale or missing: a finished run says it is.
		if old, err := ReadSummary(t.dir); err != nil || !old.Finished || old.Generations != s.Generations ||
			old.EliteIndex != s.EliteIndex || old.StopReason != s.StopReason || old.TotalSteps != s.TotalSteps {
			return s, t.writeSummary(s)
		}
		return s, nil
	}
	if err := t.prepare(t.wallBefore); err != nil {
		return Summary{}, err
	}
	if err := t.openEvents(); err != nil {
		return Summary{}, err
	}
	defer t.events.Close()
	defer func() {
		if t.confirmEnv != nil {
			envs.Close(t.confirmEnv)
			t.confirmEnv = nil
		}
	}()
	wall := func() float64 { return t.wallBefore + time.Since(start).Seconds() }
	if t.reopened {
		// A finished run keeps its last population as evaluated; going on,
		// it is selected and mutated first, as it would have been.
		if err := t.advance(t.gen); err != nil {
			return Summary{}, err
		}
		t.reopened = false
	}
	for !t.finished {
		rep, err := t.generation(ctx, t.gen+1, wall)
		var stop runStopped
		switch {
		case errors.As(err, &stop):
			sum := t.summary(start, sessionStart)
			return sum, errors.Join(stop.err, t.writeSummary(sum))
		case err != nil:
			return Summary{}, err
		}
		rep.Wall = time.Since(start)
		if t.opts.OnGeneration != nil {
			t.opts.OnGeneration(rep)
		}
	}
	sum := t.summary(start, sessionStart)
	return sum, t.writeSummary(sum)
}

// runStopped is an error that ends a run with its reason recorded
// (t.stopReason) and summary.json written: a generation abandoned on
// cancellation or an env's failure.
type runStopped struct{ err error }

func (e runStopped) Error() string { return e.err.Error() }
func (e runStopped) Unwrap() error { return e.err }

// generation runs generation g: training and evaluation, the elite, the
// metrics and events, the stopping rules, selection and mutation for the
// next one, and the checkpoint.
func (t *Trainer) generation(ctx context.Context, g int, wall func() float64) (GenerationReport, error) {
	t.progGen.Store(int64(g))
	genStart := time.Now()
	reports, err := t.trainGeneration(ctx, g)
	if err != nil {
		return GenerationReport{}, runStopped{t.abandoned(ctx, g, err)}
	}
	undo := t.untally()
	rep := t.tally(g, reports)
	best := rep.Best
	score, err := t.eliteScore(ctx, reports[best], t.members[best].Agent, &rep)
	if err != nil {
		// The generation is not recorded: the summary describes the
		// checkpoint the run resumes from, as after a stop in training.
		undo()
	}
	if err != nil && ctx.Err() != nil { // stopped during the confirmation
		return GenerationReport{}, runStopped{t.abandoned(ctx, g, err)}
	}
	if err != nil {
		t.stopReason = StopError
		return rep, runStopped{fmt.Errorf("generation %d: %w", g, err)}
	}
	if score > t.best {
		if err := t.saveElite(&rep, score); err != nil {
			return rep, err
		}
	}
	rep.EliteFitness = t.best
	rep.GlobalSteps = t.totalSteps + t.measureSteps
	if err := t.appendMetrics(rep, wall()); err != nil {
		return rep, err
	}
	if err := t.writeEvents(rep, genStart); err != nil {
		return rep, err
	}
	t.applyStopRules(g, reports[best].Fitness)
	if !t.finished { // the last generation's population is kept as it was evaluated
		if err := t.advance(g); err != nil {
			return rep, err
		}
	}
	t.gen = g
	if t.finished || g%t.cfg.Checkpoint.Every == 0 {
		if err := t.writeCheckpoint(wall()); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// abandoned records why generation g failed with err and returns the
// error the run ends with: the context's cancellation (and its cause) when
// the run was stopped.
func (t *Trainer) abandoned(ctx context.Context, g int, err error) error {
	t.stopReason = StopError
	if ctx.Err() == nil && errors.Is(err, envs.ErrInterrupted) {
		// A terminal's Ctrl-C reaches the envs' Python children as it
		// reaches the program that runs this; the child's end can be seen
		// before the program has cancelled ctx.
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Second):
		}
	}
	if ctx.Err() == nil {
		return err
	}
	t.stopReason = StopInterrupted
	err = fmt.Errorf("generation %d abandoned: %w", g, ctx.Err())
	if cause := context.Cause(ctx); cause != ctx.Err() {
		err = fmt.Errorf("%w (%w)", err, cause)
	}
	return err
}

// untally returns a function that takes the run back to before the next
// tally: its step counts and its members' fitnesses.
func (t *Trainer) untally() func() {
	total, measure := t.totalSteps, t.measureSteps
	before := make([]Member, len(t.members))
	for i, m := range t.members {
		before[i] = *m
	}
	return func() {
		t.totalSteps, t.measureSteps = total, measure
		for i, m := range t.members {
			b := before[i]
			m.Fitness, m.Returns, m.genSteps, m.idle = m.Fitness[:len(b.Fitness)], b.Returns, b.genSteps, b.idle
		}
		t.progSteps.Store(int64(total))
	}
}

// tally adds the generation's steps and fitnesses to the run and returns
// its report, Best the member with the highest fitness of those that
// trained (the first on ties).
func (t *Trainer) tally(g int, reports []MemberReport) GenerationReport {
	// The best is a member that trained: an idle one's fitness was in the
	// running when it was measured.
	best := -1
	for i, r := range reports {
		t.totalSteps += r.GenSteps
		t.measureSteps += r.EvalSteps
		m := t.members[i]
		m.Fitness = append(m.Fitness, r.Fitness)
		m.Returns, m.genSteps, m.idle = r.Returns, r.GenSteps, r.Idle
		if !r.Idle && (best < 0 || r.Fitness > reports[best].Fitness) {
			best = i
		}
	}
	best = max(best, 0) // the laggard always trains
	t.progSteps.Store(int64(t.totalSteps))
	return GenerationReport{Generation: g, TotalSteps: t.totalSteps, MaxSteps: t.cfg.Population.MaxSteps,
		Members: reports, Best: best}
}

// saveElite writes the generation's best as the run's elite, whose score
// is score.
func (t *Trainer) saveElite(rep *GenerationReport, score float64) error {
	r := rep.Members[rep.Best]
	path := filepath.Join(t.dir, eliteFile)
	if err := t.members[rep.Best].Agent.Save(path); err != nil {
		return fmt.Errorf("save elite: %w", err)
	}
	t.best, t.bestIndex, rep.NewElite = score, r.Index, true
	t.bestFit = r.Fitness
	cfg := t.members[rep.Best].Agent.Config()
	t.elite = EliteRecord{Generation: rep.Generation, Index: r.Index, Net: cfg.Net.String(), HP: map[string]float64{}}
	for _, n := range t.cfg.metricsHPs() {
		t.elite.HP[n] = hpValue(cfg, n)
	}
	t.log.Info("new elite", "generation", rep.Generation, "agent", t.bestIndex, "fitness", r.Fitness, "score", score, "file", path)
	return nil
}

// applyStopRules ends the run after generation g, whose best fitness is
// bestFitness, when the target is reached (by the elite's confirmed score
// with elite_episodes) or the budget spent.
func (t *Trainer) applyStopRules(g int, bestFitness float64) {
	reached := bestFitness >= t.cfg.Population.Target
	if t.cfg.Population.EliteEpisodes > 0 {
		reached = t.best >= t.cfg.Population.Target
	}
	switch {
	case g >= t.cfg.Population.MinGenerations && reached:
		t.finished, t.stopReason = true, StopTarget
	case t.totalSteps >= t.cfg.Population.MaxSteps:
		t.finished, t.stopReason = true, StopBudget
	}
}

// advance makes the next generation's population from generation g's:
// selection and mutation (or PBT's exploit and explore), or with
// independent agents the same agents.
func (t *Trainer) advance(g int) error {
	switch {
	case t.cfg.Population.Independent:
		for _, m := range t.members {
			m.Mutation = "none (independent)"
		}
		return nil
	case t.cfg.Population.Selection == SelectPBT:
		return t.exploitExplore(g)
	}
	return t.evolve(g)
}

// eliteScore is the score that decides whether the generation's best agent
// a (reported as r) becomes the elite. Without elite_episodes it is r's
// fitness. With them, an agent whose fitness reaches the elite's score (with
// fitness from training episodes: the elite's fitness when it was saved) plays
// the run's confirmation episodes (from one seed for the whole run, so that
// candidates are compared on the same episodes where the env draws random
// numbers only at reset; none of them the episodes that picked it) and
// scores their mean return; an agent whose
// fitness is lower, by more than population.confirm_margin standard errors
// of its fitness episodes' mean, scores −Inf. rep.Confirmed records a confirmation.
func (t *Trainer) eliteScore(ctx context.Context, r MemberReport, a *agent.PPO, rep *GenerationReport) (float64, error) {
	rep.Confirmed = math.NaN()
	n := t.cfg.Population.EliteEpisodes
	if n == 0 {
		return r.Fitness, nil
	}
	bar := t.best
	if t.cfg.Population.Fitness == FitnessTrain {
		bar = t.bestFit
	}
	if r.Diverged || !(r.Fitness+t.cfg.Population.ConfirmMargin*stdErr(r.Returns) >= bar) {
		return math.Inf(-1), nil
	}
	if t.confirmEnv == nil {
		id := envs.LegacyMinAtarID(t.cfg.Env.ID, t.cfg.Env.Options, a.ActionSpace())
		env, err := envs.MakeContext(ctx, id, t.cfg.Env.Options)
		if err != nil {
			return 0, fmt.Errorf("confirm the elite: env %s: %w", id, err)
		}
		t.confirmEnv = env
	}
	seed := int64(deriveSeed(t.cfg.Seed, -1, 0, purposeConfirm) >> 1)
	played, err := a.PlayContext(ctx, t.confirmEnv, n, t.cfg.Env.EvalMaxSteps, seed)
	if err != nil {
		return 0, fmt.Errorf("confirm agent %d as the elite: %w", r.Index, err)
	}
	t.measureSteps += played.Steps
	rep.Confirmed = played.Mean()
	return rep.Confirmed, nil
}

// lock takes the run directory's lock unless this trainer holds it.
func (t *Trainer) lock() error {
	if t.runLock != nil {
		return nil
	}
	l, err := lockRunDir(t.dir)
	if err != nil {
		return err
	}
	t.runLock = l
	return nil
}

// Close lets go of the run directory's lock, for a Trainer that will not
// Run: Resume takes the lock (New leaves it to Run), and Run lets go of it
// when it returns. It may be called more than once.
func (t *Trainer) Close() { t.release() }

// release lets go of the run directory's lock, if held.
func (t *Trainer) release() {
	if t.runLock != nil {
		t.runLock.release()
		t.runLock = nil
	}
}

// summary describes the run now; start and sessionSteps are the time and
// the total steps at which this session began.
func (t *Trainer) summary(start time.Time, sessionSteps int) Summary {
	el := time.Since(start).Seconds()
	s := Summary{Dir: t.dir, Generations: t.gen, TotalSteps: t.totalSteps, GlobalSteps: t.totalSteps + t.measureSteps, WallSeconds: t.wallBefore + el,
		EliteFitness: t.best, EliteIndex: t.bestIndex, StopReason: t.stopReason, Finished: t.finished}
	if el > 0 {
		s.StepsPerSecond = float64(t.totalSteps-sessionSteps) / el
	}
	if t.bestIndex >= 0 {
		s.EliteFile = filepath.Join(t.dir, eliteFile)
	}
	if t.elite.Index >= 0 {
		e := t.elite
		e.HP = maps.Clone(e.HP)
		s.Elite = &e
	}
	return s
}

package evo

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/internal/tbevent"
)

// tbDir is where the TensorBoard event files go, under the run's directory.
const tbDir = "tb"

// openEvents starts this session's TensorBoard event file in tb/, after
// dropping from the earlier sessions' files the events of steps after the
// current generation's (a resumed run repeats those generations, exactly as
// metrics.csv's rows are dropped).
func (t *Trainer) openEvents() error {
	dir := filepath.Join(t.dir, tbDir)
	notes, err := tbevent.Trim(dir, int64(t.totalSteps))
	for _, n := range notes {
		t.log.Warn("tensorboard: " + n)
	}
	if err != nil {
		return fmt.Errorf("tensorboard: %w", err)
	}
	host, _ := os.Hostname()
	w, err := tbevent.Create(dir, time.Now(), host)
	if err != nil {
		return fmt.Errorf("tensorboard: %w", err)
	}
	t.events = w
	return nil
}

// writeEvents appends generation rep's scalars to the event file, the
// generation having begun at genStart. Steps are the population's env
// steps (so that runs of different population sizes or evo_steps compare
// on the same axis). The generation's scalars and each population slot's
// (the member at that position of rep.Members: "slot_<i>/") are at step
// rep.TotalSteps; each slot's update statistics at the step of every
// update (updateStep), with a wall time interpolated in the same
// proportion over the generation's, so that every event of the generation
// lies in its steps and a resume's Trim drops them together. Tags do not
// depend on agent indices, which grow with every clone: the agent in a
// slot is its "agent" scalar.
func (t *Trainer) writeEvents(rep GenerationReport, genStart time.Time) error {
	now := time.Now()
	genTime := now.Sub(genStart)
	span := 0
	for _, r := range rep.Members {
		span += r.GenSteps
	}
	start, end := rep.TotalSteps-span, int64(rep.TotalSteps)
	at := map[int64]*scalars{end: generationScalars(rep, genTime)}
	for i, r := range rep.Members {
		p := "slot_" + strconv.Itoa(i) + "/"
		t.cfg.slotScalars(at[end], p, r)
		for _, u := range r.Updates {
			step := updateStep(start, span, u.GenSteps, r.GenSteps)
			if at[step] == nil {
				at[step] = &scalars{}
			}
			at[step].addUpdate(p, u.Stats)
		}
	}
	steps := make([]int64, 0, len(at))
	for s := range at {
		steps = append(steps, s)
	}
	slices.Sort(steps)
	evs := make([]tbevent.Event, len(steps))
	for k, s := range steps {
		wall := now
		if s < end {
			wall = genStart.Add(time.Duration(float64(genTime) * float64(s-int64(start)) / float64(span)))
		}
		evs[k] = tbevent.Event{Step: s, Wall: wall, Scalars: *at[s]}
	}
	if err := t.events.WriteEvents(evs); err != nil {
		return fmt.Errorf("tensorboard: %w", err)
	}
	return nil
}

// updateStep is the step of an update that a slot's agent made after s of
// its S env steps in a generation whose population took span steps from
// start: start + ⌊span·s/S⌋, where the population would be if its agents
// trained side by side, each at the pace that ends with the generation.
// When every agent trains the same steps (learn_step not mutated apart)
// that is start + s × population size, the population's steps at the
// update. It is above start, at most start + span (the generation's step,
// reached by each slot's last update unless its agent diverged), and
// grows with s (span ≥ S), so each slot's series is monotone in step.
func updateStep(start, span, s, S int) int64 {
	return int64(start) + int64(span)*int64(s)/int64(S)
}

// scalars are the values of one event. Values that are not finite (a
// diverged agent's fitness, the train return of a generation without a
// finished episode) are left out: TensorBoard cannot plot them.
type scalars []tbevent.Scalar

func (sc *scalars) add(tag string, v float64) {
	if !math.IsNaN(v) && !math.IsInf(v, 0) {
		*sc = append(*sc, tbevent.Scalar{Tag: tag, Value: float32(v)})
	}
}

// generationScalars are the population's scalars of generation rep, which
// took genTime.
func generationScalars(rep GenerationReport, genTime time.Duration) *scalars {
	sum, finite, diverged, genSteps := 0.0, 0, 0, 0
	for _, r := range rep.Members {
		genSteps += r.GenSteps
		if r.Diverged {
			diverged++
		} else if !math.IsInf(r.Fitness, 0) {
			sum += r.Fitness
			finite++
		}
	}
	sc := &scalars{}
	sc.add("generation", float64(rep.Generation))
	sc.add("fitness/best", rep.Members[rep.Best].Fitness)
	if finite > 0 {
		sc.add("fitness/mean", sum/float64(finite))
	}
	sc.add("fitness/elite", rep.EliteFitness)
	if !math.IsNaN(rep.Confirmed) {
		sc.add("fitness/confirmed", rep.Confirmed)
	}
	sc.add("population/diverged", float64(diverged))
	sc.add("population/global_steps", float64(rep.GlobalSteps))
	if s := genTime.Seconds(); s > 0 {
		sc.add("steps_per_s", float64(genSteps)/s)
	}
	return sc
}

// slotScalars adds the generation's scalars of the member r, in the slot
// whose tags begin with p: the agent's index, fitness, train return, own
// env steps (inherited ones included) and its hyperparameters as in
// metrics.csv (under "hp/").
func (c Config) slotScalars(sc *scalars, p string, r MemberReport) {
	sc.add(p+"agent", float64(r.Index))
	sc.add(p+"fitness", r.Fitness)
	sc.add(p+"train_return", r.TrainReturn)
	sc.add(p+"steps", float64(r.Steps))
	for _, n := range c.metricsHPs() {
		sc.add(p+"hp/"+n, hpValue(r.Config, n))
	}
}

// addUpdate adds the statistics of one PPO update, in the slot whose tags
// begin with p; update_lr is the learning rate it used.
func (sc *scalars) addUpdate(p string, st agent.Stats) {
	sc.add(p+"loss", st.Loss)
	sc.add(p+"policy_loss", st.PolicyLoss)
	sc.add(p+"value_loss", st.ValueLoss)
	sc.add(p+"entropy", st.Entropy)
	sc.add(p+"approx_kl", st.ApproxKL)
	sc.add(p+"clip_frac", st.ClipFrac)
	sc.add(p+"explained_variance", st.ExplainedVariance)
	sc.add(p+"grad_norm", st.GradNorm)
	sc.add(p+"update_lr", st.LR)
}

// Point is one value of a scalar series at a step (the population's env
// steps).
type Point struct {
	Step  int64
	Value float64
}

// ReadScalars reads the TensorBoard scalars the run in dir wrote (its tb/
// directory, every session), by tag, each series in step order: for tools
// that chart what metrics.csv holds only per generation, such as each
// slot's statistics of every PPO update ("slot_<i>/loss", …). A run
// without events has none; a dir that does not exist is an error.
func ReadScalars(dir string) (map[string][]Point, error) {
	if fi, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("tensorboard: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("tensorboard: %s is not a directory", dir)
	}
	events, err := tbevent.Read(filepath.Join(dir, tbDir))
	if err != nil {
		return nil, fmt.Errorf("tensorboard: %w", err)
	}
	series := map[string][]Point{}
	for _, ev := range events {
		for _, sc := range ev.Scalars {
			series[sc.Tag] = append(series[sc.Tag], Point{ev.Step, float64(sc.Value)})
		}
	}
	for _, s := range series {
		slices.SortStableFunc(s, func(a, b Point) int { return cmp.Compare(a.Step, b.Step) })
	}
	return series, nil
}

package evo

import (
	"context"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/internal/runtest"
)

// The event files are read with runtest.Events, a reader written from the
// record and protobuf formats rather than from internal/tbevent, so that
// the two check each other.

type tbPoint = runtest.Point

// generationTags are the population's tags of a run without
// elite_episodes.
var generationTags = []string{"generation", "fitness/best", "fitness/mean", "fitness/elite", "population/diverged",
	"population/global_steps", "steps_per_s"}

// slotTags are a slot's tags written once per generation, with the
// metrics.csv column each holds; updateTags those written at every update.
var (
	slotTags = map[string]string{"agent": "agent", "fitness": "fitness", "train_return": "train_return", "steps": "steps",
		"hp/lr": "lr", "hp/batch_size": "batch_size", "hp/learn_step": "learn_step"}
	updateTags = map[string]string{"loss": "loss", "policy_loss": "policy_loss", "value_loss": "value_loss",
		"entropy": "entropy", "approx_kl": "approx_kl", "clip_frac": "clip_frac",
		"explained_variance": "explained_variance", "grad_norm": "grad_norm", "update_lr": "update_lr"}
)

// updateValues are the values of updateTags of one update.
func updateValues(st agent.Stats) map[string]float64 {
	return map[string]float64{"loss": st.Loss, "policy_loss": st.PolicyLoss, "value_loss": st.ValueLoss,
		"entropy": st.Entropy, "approx_kl": st.ApproxKL, "clip_frac": st.ClipFrac,
		"explained_variance": st.ExplainedVariance, "grad_norm": st.GradNorm, "update_lr": st.LR}
}

// reportsOf trains cfg to its end and returns its generation reports.
func reportsOf(t *testing.T, cfg Config) []GenerationReport {
	t.Helper()
	var reps []GenerationReport
	if _, err := run(t, cfg, Options{}, func(r GenerationReport) bool { reps = append(reps, r); return false }); err != nil {
		t.Fatal(err)
	}
	return reps
}

func TestUpdateStep(t *testing.T) {
	// Three agents of 256 steps each in rollouts of 128, from step 768:
	// the population's steps at each update.
	for s, want := range map[int]int64{128: 768 + 3*128, 256: 768 + 3*256} {
		if got := updateStep(768, 3*256, s, 256); got != want {
			t.Errorf("updateStep(768, 768, %d, 256) = %d, want %d", s, got, want)
		}
	}
	// Agents of 300, 256 and 100 steps (a diverged one, whose last
	// recorded update is at 50): every slot's steps lie in the generation
	// and grow; a slot's last update is at its end.
	span := 300 + 256 + 100
	for _, c := range []struct{ rollout, S int }{{100, 300}, {128, 256}, {50, 100}, {1, 300}} {
		last := int64(1000)
		for s := c.rollout; s <= c.S; s += c.rollout {
			got := updateStep(1000, span, s, c.S)
			if got <= last || got > int64(1000+span) {
				t.Fatalf("rollout %d of %d: step %d after %d, want in (%d, %d]", c.rollout, c.S, got, last, last, 1000+span)
			}
			last = got
		}
		if c.S%c.rollout == 0 && last != int64(1000+span) {
			t.Errorf("rollout %d of %d: last update at %d, want the generation's step %d", c.rollout, c.S, last, 1000+span)
		}
	}
}

// TestTensorBoardEventsOfATinyRun checks every scalar of a two-generation
// run against its reports and metrics.csv: the population's and each
// slot's at the generation's step, each update's at its own, and nothing
// else.
func TestTensorBoardEventsOfATinyRun(t *testing.T) {
	cfg := tiny(t)
	cfg.Population.MaxSteps = 2 * 3 * 256
	reps := reportsOf(t, cfg)
	values, count := runtest.Events(t, cfg.OutDir)
	rows := readMetrics(t, cfg.OutDir)
	col := func(name string) int { return slices.Index(rows[0], name) }
	want := map[tbPoint]bool{}
	check := func(p tbPoint, v float64) {
		t.Helper()
		want[p] = true
		if got := values[p]; got != float32(v) {
			t.Errorf("%s at step %d = %v, want %v", p.Tag, p.Step, got, v)
		}
	}
	start := int64(0)
	for g, rep := range reps {
		end := int64(rep.TotalSteps)
		for _, tag := range generationTags {
			want[tbPoint{Tag: tag, Step: end}] = true
		}
		check(tbPoint{Tag: "generation", Step: end}, float64(g+1))
		check(tbPoint{Tag: "population/global_steps", Step: end}, float64(rep.GlobalSteps))
		for i, r := range rep.Members {
			p := fmt.Sprintf("slot_%d/", i)
			row := rows[1+g*len(rep.Members)+i]
			csvValue := func(name string) float64 {
				v, err := strconv.ParseFloat(row[col(name)], 64)
				if err != nil {
					t.Fatalf("metrics %s = %q", name, row[col(name)])
				}
				return v
			}
			for tag, name := range slotTags {
				check(tbPoint{Tag: p + tag, Step: end}, csvValue(name))
			}
			if len(r.Updates) != r.GenSteps/128 || r.Updates[len(r.Updates)-1].Stats != r.Stats {
				t.Fatalf("generation %d slot %d: %d updates (last %+v) for %d steps in rollouts of 128 (last %+v)",
					g+1, i, len(r.Updates), r.Updates[len(r.Updates)-1].Stats, r.GenSteps, r.Stats)
			}
			for k, u := range r.Updates {
				// Every agent trains 256 steps in two rollouts of 128: its
				// updates are at the population's steps after them.
				step := start + int64(3*128*(k+1))
				for tag, v := range updateValues(u.Stats) {
					check(tbPoint{Tag: p + tag, Step: step}, v)
				}
			}
			for tag, name := range updateTags {
				// The last update's statistics are metrics.csv's.
				check(tbPoint{Tag: p + tag, Step: end}, csvValue(name))
			}
		}
		start = end
	}
	for p := range want {
		if count[p] != 1 {
			t.Errorf("%s at step %d: %d times, want once", p.Tag, p.Step, count[p])
		}
	}
	for p := range count {
		if !want[p] {
			t.Errorf("unexpected scalar %s at step %d", p.Tag, p.Step)
		}
	}
}

// TestTensorBoardTagsDoNotGrowWithClones: a population of 4 under
// tournament selection clones agents (new indices) every generation, yet
// its tags after 5 generations are those after 2: the population's, and
// 16 per slot.
func TestTensorBoardTagsDoNotGrowWithClones(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 5 generations")
	}
	cfg := tiny(t)
	cfg.Population.Size = 4
	cfg.Population.MaxSteps = 5 * 4 * 256
	reps := reportsOf(t, cfg)
	if len(reps) != 5 {
		t.Fatalf("%d generations, want 5", len(reps))
	}
	maxIndex := 0
	for _, r := range reps[len(reps)-1].Members {
		maxIndex = max(maxIndex, r.Index)
	}
	if maxIndex < 4+3*3 {
		t.Fatalf("the last generation's highest agent index is %d: too few clones to test", maxIndex)
	}
	values, _ := runtest.Events(t, cfg.OutDir)
	all := runtest.Tags(values)
	early := maps.Clone(values)
	maps.DeleteFunc(early, func(p tbPoint, _ float32) bool { return p.Step > int64(reps[1].TotalSteps) })
	if got := runtest.Tags(early); !maps.Equal(got, all) {
		t.Errorf("%d tags after 2 generations, %d after 5", len(got), len(all))
	}
	if want := len(generationTags) + 4*(len(slotTags)+len(updateTags)); len(all) != want {
		t.Errorf("%d tags, want %d: %v", len(all), want, slices.Sorted(maps.Keys(all)))
	}
	for tag := range all {
		if strings.HasPrefix(tag, "agent_") {
			t.Errorf("tag %s names an agent index", tag)
		}
	}
	// The agent in each slot is recorded, and so its replacements.
	for _, rep := range reps {
		for i, r := range rep.Members {
			p := tbPoint{Tag: fmt.Sprintf("slot_%d/agent", i), Step: int64(rep.TotalSteps)}
			if values[p] != float32(r.Index) {
				t.Errorf("%s at step %d = %v, want agent %d", p.Tag, p.Step, values[p], r.Index)
			}
		}
	}
}

// TestTensorBoardEventsAfterResume: a run stopped after generation 3 with
// a checkpoint every second generation resumes from generation 2 and trains
// generation 3 again; its event files then hold every (tag, step) of the
// straight run exactly once, with the same values (but steps_per_s, which
// is measured), per-update scalars of the generation trained twice
// included.
func TestTensorBoardEventsAfterResume(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("trains two populations")
	}
	straight, split := straightAndStopped(t, 4*3*256, 3, func(c *Config) { c.Checkpoint.Every = 2 })
	before, _ := runtest.Events(t, split.OutDir)
	tr, err := Resume(split.OutDir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Join(split.OutDir, "tb"))
	if len(entries) != 2 {
		t.Errorf("tb/ holds %d files, want one per session", len(entries))
	}
	runtest.SameEvents(t, straight.OutDir, split.OutDir)
	// Generation 3 (steps 1536 to 2304) was in the first session's file
	// before the resume, per update; it is now once, from the second.
	updates := 0
	for p := range before {
		if p.Tag == "slot_0/loss" && p.Step > 2*3*256 && p.Step <= 3*3*256 {
			updates++
		}
	}
	if updates != 2 {
		t.Errorf("the stopped run had %d updates of slot 0 in generation 3, want 2", updates)
	}
	wantV, _ := runtest.Events(t, straight.OutDir)
	if want := 4 * (len(generationTags) + 3*(len(slotTags)+2*len(updateTags))); len(wantV) < want*9/10 {
		t.Errorf("the straight run has only %d scalars, want about %d", len(wantV), want)
	}
	if v, ok := wantV[tbPoint{Tag: "slot_2/update_lr", Step: 2*3*256 + 3*128}]; !ok || math.IsNaN(float64(v)) {
		t.Errorf("no update_lr of slot 2 at the first update of generation 3")
	}
}

// TestReadScalarsOfARun: the scalars a run wrote read back by tag, each
// slot's loss once per update, in step order, the last at the run's end.
func TestReadScalarsOfARun(t *testing.T) {
	cfg := tiny(t)
	tr, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := tr.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	series, err := ReadScalars(cfg.OutDir)
	if err != nil {
		t.Fatal(err)
	}
	loss := series["slot_0/loss"]
	if len(loss) <= sum.Generations || loss[len(loss)-1].Step != int64(sum.TotalSteps) {
		t.Fatalf("slot_0/loss: %d points, last %v; want more than %d generations, the last at %d", len(loss), loss[len(loss)-1:], sum.Generations, sum.TotalSteps)
	}
	for i := 1; i < len(loss); i++ {
		if loss[i].Step <= loss[i-1].Step {
			t.Fatalf("slot_0/loss steps not increasing at %d: %v", i, loss[i-1:i+1])
		}
	}
	if fit := series["fitness/best"]; len(fit) != sum.Generations {
		t.Errorf("fitness/best: %d points, want one per generation (%d)", len(fit), sum.Generations)
	}
	// A misspelt run directory is an error, not a run without events.
	if _, err := ReadScalars(cfg.OutDir + "-typo"); err == nil {
		t.Error("ReadScalars of a directory that does not exist: no error")
	}
}

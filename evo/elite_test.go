package evo

import (
	"encoding/json"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/internal/runtest"
)

// confirmedTiny is the tiny run with elite confirmation on 5 episodes over
// 8 generations of 1024 steps per agent. With seed 1 it has every case:
// candidates confirmed and saved, confirmed and refused, and not confirmed.
// (The tiny run's seed 7 had them until the envs took Gymnasium's seeding;
// now it refuses none.)
func confirmedTiny(t *testing.T) Config {
	cfg := tiny(t)
	cfg.Seed = 1
	cfg.Population.EliteEpisodes = 5
	cfg.Population.MaxSteps = 8 * 3 * 1024
	cfg.Population.EvoSteps = 1024
	return cfg
}

// TestEliteIsConfirmed checks elite_episodes generation by generation: the
// generation's best plays the confirmation episodes exactly when its
// fitness reaches the elite's score, it becomes the elite exactly when its
// confirmed score is higher, and the saved elite scores summary.json's
// elite_fitness when played on those episodes again.
func TestEliteIsConfirmed(t *testing.T) {
	cfg := confirmedTiny(t)
	var reps []GenerationReport
	sum, err := run(t, cfg, Options{OnGeneration: func(r GenerationReport) { reps = append(reps, r) }}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) < 4 {
		t.Fatalf("%d generations, want at least 4", len(reps))
	}
	elite, confirmed, refused, skipped := math.Inf(-1), 0, 0, 0
	for _, r := range reps {
		best := r.Members[r.Best]
		if best.Fitness >= elite && !best.Diverged {
			confirmed++
			if math.IsNaN(r.Confirmed) {
				t.Fatalf("generation %d: best fitness %g reaches the elite's %g but was not confirmed", r.Generation, best.Fitness, elite)
			}
		} else {
			skipped++
			if !math.IsNaN(r.Confirmed) {
				t.Fatalf("generation %d: best fitness %g is below the elite's %g but was confirmed (%g)", r.Generation, best.Fitness, elite, r.Confirmed)
			}
		}
		if want := r.Confirmed > elite; r.NewElite != want {
			t.Fatalf("generation %d: confirmed %g, elite %g: NewElite = %v", r.Generation, r.Confirmed, elite, r.NewElite)
		}
		if r.NewElite {
			elite = r.Confirmed
		} else if !math.IsNaN(r.Confirmed) {
			refused++
		}
		if r.EliteFitness != elite {
			t.Fatalf("generation %d: EliteFitness %g, want %g", r.Generation, r.EliteFitness, elite)
		}
	}
	if refused == 0 || skipped == 0 {
		t.Fatalf("%d candidates confirmed (%d refused), %d not: the run no longer covers every case; choose another seed", confirmed, refused, skipped)
	}
	if sum.EliteFitness != elite {
		t.Fatalf("summary's elite fitness %g, want %g", sum.EliteFitness, elite)
	}
	a, err := agent.Load(filepath.Join(cfg.OutDir, "elite.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	if a.Env.ID != cfg.Env.ID {
		t.Fatalf("the elite's file records env %q, want the run's %q", a.Env.ID, cfg.Env.ID)
	}
	// summary.json records the elite as it was saved: the file's network
	// and hyperparameters, its index and the generation.
	var rec struct {
		EliteIndex int         `json:"elite_index"`
		Elite      EliteRecord `json:"elite"`
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(cfg.OutDir, "summary.json")), &rec); err != nil {
		t.Fatal(err)
	}
	e := rec.Elite
	if e.Generation < 1 || e.Index != rec.EliteIndex || e.Net != a.Config().Net.String() || e.HP["lr"] != a.Config().LR ||
		e.HP["batch_size"] != float64(a.Config().BatchSize) {
		t.Errorf("summary.json elite %+v (elite_index %d); the file: net %s, lr %g, batch %d", e, rec.EliteIndex,
			a.Config().Net.String(), a.Config().LR, a.Config().BatchSize)
	}
	env, err := a.Env.Make()
	if err != nil {
		t.Fatal(err)
	}
	again, err := a.Evaluate(env, cfg.Population.EliteEpisodes, cfg.Env.EvalMaxSteps, int64(deriveSeed(cfg.Seed, -1, 0, purposeConfirm)>>1))
	if err != nil || again != elite {
		t.Fatalf("the saved elite scores %g, %v on the confirmation episodes; want %g", again, err, elite)
	}
}

// TestConfirmedTargetAndResume: with elite_episodes the target is tested
// against the elite's confirmed score, and a run stopped and resumed with
// confirmation is the straight run.
func TestConfirmedTargetAndResume(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("trains four populations")
	}
	straight := confirmedTiny(t)
	var elites, bests []float64
	record := func(r GenerationReport) {
		elites = append(elites, r.EliteFitness)
		bests = append(bests, r.Members[r.Best].Fitness)
	}
	if _, err := run(t, straight, Options{OnGeneration: record}, nil); err != nil {
		t.Fatal(err)
	}

	split := confirmedTiny(t)
	stopAndResume(t, split, Options{}, 2)
	runtest.SameRun(t, straight.OutDir, split.OutDir)

	// A target that some generation's best fitness reaches before the
	// elite's confirmed score does stops the run only when the elite's
	// score reaches it.
	first := func(xs []float64, v float64) int { return slices.IndexFunc(xs, func(x float64) bool { return x >= v }) }
	goal, k := math.NaN(), 0
	for _, v := range bests {
		// e < 0: the elite never reaches v, and the budget ends the run.
		if e, b := first(elites, v), first(bests, v); e < 0 || e > b {
			goal, k = v, e
			break
		}
	}
	if math.IsNaN(goal) {
		t.Fatalf("no generation's best fitness %v runs ahead of the elite's score %v: choose another seed", bests, elites)
	}
	target := confirmedTiny(t)
	target.Population.Target = goal
	sum, err := run(t, target, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, why := k+1, StopTarget
	if k < 0 {
		want, why = len(elites), StopBudget
	}
	if sum.Generations != want || sum.StopReason != why {
		t.Fatalf("target %g: stopped after generation %d (%s) with elite %g; want generation %d (%s)", goal, sum.Generations, sum.StopReason, sum.EliteFitness, want, why)
	}
}

// TestConfirmMarginWidensTheGate trains with fitness from training episodes
// and confirm_margin = 1: the generation's best is confirmed exactly when
// its fitness plus one standard error of its episodes' mean reaches the
// elite's fitness when saved, and some generation is confirmed that the
// gate without a margin would have passed over.
func TestConfirmMarginWidensTheGate(t *testing.T) {
	cfg := confirmedTiny(t)
	cfg.Population.Fitness = FitnessTrain
	cfg.Population.ConfirmMargin = 1
	var reps []GenerationReport
	if _, err := run(t, cfg, Options{OnGeneration: func(r GenerationReport) { reps = append(reps, r) }}, nil); err != nil {
		t.Fatal(err)
	}
	bar, widened := math.Inf(-1), 0
	for _, r := range reps {
		best := r.Members[r.Best]
		open := best.Fitness+stdErr(best.Returns) >= bar
		if confirmed := !math.IsNaN(r.Confirmed); confirmed != open {
			t.Fatalf("generation %d: fitness %g ± %g against the elite's %g: confirmed = %v", r.Generation, best.Fitness,
				stdErr(best.Returns), bar, confirmed)
		}
		if open && !(best.Fitness >= bar) {
			widened++
		}
		if r.NewElite {
			bar = best.Fitness
		}
	}
	if widened == 0 {
		t.Fatal("no generation was confirmed thanks to the margin: the run no longer covers the case; choose another seed")
	}
	cfg.Population.ConfirmMargin = -1
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "population.confirm_margin") {
		t.Errorf("confirm_margin = -1: err = %v", err)
	}
}

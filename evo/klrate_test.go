package evo

import (
	"slices"
	"strconv"
	"testing"

	"github.com/evolverl/evolve/internal/runtest"
)

// TestKLAdaptiveRunIsReproducibleAndResumes trains a PB2 population with
// the KL-adaptive learning rate and kl_threshold evolving: 1 and 2 workers
// give the same files, and so does a run stopped after generation 3 and
// resumed — the adapted rates travel in the agents' files. The rates do
// adapt (update_lr leaves lr) and the threshold is a metrics column that
// exploration moves.
func TestKLAdaptiveRunIsReproducibleAndResumes(t *testing.T) {
	tiny := func() Config {
		cfg := pb2Tiny(t)
		cfg.PPO.KLThreshold = 0.01
		cfg.HP["kl_threshold"] = HPRange{Min: 0.002, Max: 0.05, Grow: DefaultGrow, Shrink: DefaultShrink}
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	var dirs []string
	for _, w := range []int{1, 2} {
		cfg := tiny()
		if _, err := run(t, cfg, Options{Workers: w}, nil); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, cfg.OutDir)
	}
	runtest.SameRun(t, dirs[0], dirs[1])
	cfg := tiny()
	stopAndResume(t, cfg, Options{}, 3)
	runtest.SameRun(t, dirs[0], cfg.OutDir)

	rows := readMetrics(t, dirs[0])
	col := func(name string) int {
		i := slices.Index(rows[0], name)
		if i < 0 {
			t.Fatalf("metrics.csv has no %s column: %v", name, rows[0])
		}
		return i
	}
	lr, updateLR, klt := col("lr"), col("update_lr"), col("kl_threshold")
	adapted, thresholds := 0, map[string]bool{}
	for _, r := range rows[1:] {
		a, _ := strconv.ParseFloat(r[lr], 64)
		b, _ := strconv.ParseFloat(r[updateLR], 64)
		if a != b {
			adapted++
		}
		thresholds[r[klt]] = true
	}
	if adapted == 0 {
		t.Error("no agent's update ran at a rate other than its lr")
	}
	if len(thresholds) < 2 {
		t.Errorf("kl_threshold never moved: %v", thresholds)
	}
}

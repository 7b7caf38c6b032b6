package evo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/internal/runtest"
)

// TestResumePutsBackTheCheckpointsElite: the elite file is saved when a
// generation finds one, before that generation's checkpoint. A run stopped
// between the two and resumed with a budget that ends before that
// generation kept an elite no generation of the resumed run had found (a
// review's SIGKILL: the file was generation 20's, the summary generation
// 4's). Each checkpoint now holds a copy, which the resume puts back: the
// elite file is then the one a run with that budget from the start saves.
func TestResumePutsBackTheCheckpointsElite(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("trains populations to compare them")
	}
	cfg := tiny(t)
	cfg.Checkpoint.Keep = 0
	perGen := cfg.Population.Size * cfg.Population.EvoSteps
	cfg.Population.MaxSteps = 8 * perGen
	if _, err := run(t, cfg, Options{}, nil); err != nil {
		t.Fatal(err)
	}
	// A generation k+1 that found no elite, after which a later one did:
	// resumed from k's checkpoint with k+1 generations' budget, the run
	// trains k+1 and ends with the elite file as the stop left it.
	eliteGen := func(k int) int {
		var pop population
		b := runtest.ReadFile(t, filepath.Join(cfg.OutDir, "checkpoints", fmt.Sprintf("gen-%06d", k), populationFile))
		if err := json.Unmarshal(b, &pop); err != nil || pop.Elite == nil {
			t.Fatalf("gen-%06d: %v, elite %v", k, err, pop.Elite)
		}
		return pop.Elite.Generation
	}
	k := 1
	for ; k < 7 && !(eliteGen(k+1) <= k && eliteGen(8) > k+1); k++ {
	}
	if k == 7 {
		t.Fatal("no generation of this run leaves an elite file a shorter resume would keep: this run cannot tell")
	}
	short := tiny(t)
	short.Population.MaxSteps = (k + 1) * perGen
	if _, err := run(t, short, Options{}, nil); err != nil {
		t.Fatal(err)
	}
	want := runtest.ReadFile(t, filepath.Join(short.OutDir, eliteFile))
	dir := copyRunDir(t, cfg.OutDir)
	if err := os.WriteFile(filepath.Join(dir, "checkpoints", latestFile), fmt.Appendf(nil, "gen-%06d\n", k), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := resumeTo(t, dir, short.Population.MaxSteps).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(runtest.ReadFile(t, filepath.Join(dir, eliteFile)), want) {
		t.Errorf("resumed from gen-%06d with %d generations' budget, the elite file is not the one a run of that budget saves", k, k+1)
	}
}

// TestResumeRepairsTheEliteFile: a damaged or removed elite file is put
// back from the checkpoint (it was refused, or forgotten); a finished run
// resumed as it is changes nothing else.
func TestResumeRepairsTheEliteFile(t *testing.T) {
	done := uninterrupted(t, 0)
	elite := runtest.ReadFile(t, filepath.Join(done.OutDir, eliteFile))
	// Extended, the run's elite is its own under the new budget: nothing to
	// put back, nothing said.
	log := extendLogged(t, copyRunDir(t, done.OutDir), 2*done.Population.MaxSteps)
	if strings.Contains(log, "put back") {
		t.Errorf("an extended run put back its elite:\n%s", log)
	}
	for _, damage := range []string{"truncated", "removed"} {
		dir := copyRunDir(t, done.OutDir)
		path := filepath.Join(dir, eliteFile)
		var err error
		if damage == "removed" {
			err = os.Remove(path)
		} else {
			err = os.WriteFile(path, elite[:len(elite)/2], 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
		metrics := runtest.ReadFile(t, filepath.Join(dir, "metrics.csv"))
		summary := runtest.ReadFile(t, filepath.Join(dir, "summary.json"))
		tr, err := Resume(dir, Options{})
		if err != nil {
			t.Fatalf("%s: %v", damage, err)
		}
		if _, err := tr.Run(context.Background()); err != nil {
			t.Fatalf("%s: %v", damage, err)
		}
		if !bytes.Equal(runtest.ReadFile(t, path), elite) {
			t.Errorf("%s: the elite file was not put back", damage)
		}
		if !bytes.Equal(runtest.ReadFile(t, filepath.Join(dir, "metrics.csv")), metrics) ||
			!bytes.Equal(runtest.ReadFile(t, filepath.Join(dir, "summary.json")), summary) {
			t.Errorf("%s: the finished run resumed as it is changed metrics.csv or summary.json", damage)
		}
	}
}

// TestResumeChecksAnOlderCheckpointsEliteFile: a checkpoint of an earlier
// build holds no copy of the elite. Then a damaged elite file is refused
// before anything trains (it failed the first checkpoint after a
// generation of training, and each retry trained that generation again); a
// removed one is forgotten by a run that trains on, which ends with the
// next generation's best saved, and kept in the record of a finished run
// resumed as it is.
func TestResumeChecksAnOlderCheckpointsEliteFile(t *testing.T) {
	done := uninterrupted(t, 0)
	copyRun := func() string {
		dir := copyRunDir(t, done.OutDir)
		dropEliteCopy(t, dir)
		return dir
	}
	damaged := copyRun()
	elite := filepath.Join(damaged, eliteFile)
	b := runtest.ReadFile(t, elite)
	if err := os.WriteFile(elite, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	metrics := runtest.ReadFile(t, filepath.Join(damaged, "metrics.csv"))
	_, err := Resume(damaged, Options{})
	if !errors.Is(err, ErrBadInput) || !bytes.Contains([]byte(err.Error()), []byte(eliteFile)) {
		t.Errorf("resume with a truncated elite: %v, want ErrBadInput naming %s", err, eliteFile)
	}
	if !bytes.Equal(runtest.ReadFile(t, filepath.Join(damaged, "metrics.csv")), metrics) {
		t.Error("the refused resume changed metrics.csv")
	}

	before, err := ReadSummary(done.OutDir)
	if err != nil {
		t.Fatal(err)
	}
	kept := copyRun()
	if err := os.Remove(filepath.Join(kept, eliteFile)); err != nil {
		t.Fatal(err)
	}
	summaryBefore := runtest.ReadFile(t, filepath.Join(kept, "summary.json"))
	plain, err := Resume(kept, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s, err := plain.Run(context.Background()); err != nil || s.EliteIndex != before.EliteIndex || s.Elite == nil {
		t.Errorf("a finished run resumed as it is: %v, elite index %d (want %d), record %+v", err, s.EliteIndex, before.EliteIndex, s.Elite)
	}
	if !bytes.Equal(runtest.ReadFile(t, filepath.Join(kept, "summary.json")), summaryBefore) {
		t.Error("a finished run resumed as it is rewrote summary.json")
	}

	removed := copyRun()
	if err := os.Remove(filepath.Join(removed, eliteFile)); err != nil {
		t.Fatal(err)
	}
	sum, err := resumeTo(t, removed, 2*done.Population.MaxSteps).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if sum.EliteFile == "" || sum.Elite == nil || sum.Elite.Generation <= before.Generations {
		t.Fatalf("summary after the resume: elite file %q, elite %+v: want one of a generation after the resume", sum.EliteFile, sum.Elite)
	}
	if _, err := agent.Load(sum.EliteFile); err != nil {
		t.Errorf("the summary's elite file: %v", err)
	}
}

// dropEliteCopy makes the latest checkpoint of the run in dir one of a
// build that kept no copy of the elite: without the file and without its
// record in population.json (and population.sha256 to match).
func dropEliteCopy(t *testing.T, dir string) {
	t.Helper()
	name := string(bytes.TrimSpace(runtest.ReadFile(t, filepath.Join(dir, "checkpoints", latestFile))))
	ckpt := filepath.Join(dir, "checkpoints", name)
	editPopulation(t, ckpt, func(pop map[string]json.RawMessage) {
		if _, ok := pop["elite_file"]; !ok {
			t.Fatalf("%s records no elite_file", ckpt)
		}
		delete(pop, "elite_file")
	})
	if err := os.Remove(filepath.Join(ckpt, eliteFile)); err != nil {
		t.Fatal(err)
	}
}

package evo

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadCheckpointVerifiesOnlyItsOwn: ReadCheckpoint reads the
// generation it is asked for even where another kept checkpoint is
// damaged (which ReadCheckpoints refuses), and a generation the run keeps
// no checkpoint of is bad input naming those it keeps.
func TestReadCheckpointVerifiesOnlyItsOwn(t *testing.T) {
	cfg := tiny(t)
	cfg.Checkpoint.Keep = 0
	cfg.Population.MaxSteps = 2 * cfg.Population.Size * cfg.Population.EvoSteps
	if _, err := run(t, cfg, Options{}, nil); err != nil {
		t.Fatal(err)
	}
	gens, err := CheckpointGenerations(cfg.OutDir)
	if err != nil || len(gens) < 2 {
		t.Fatalf("generations %v, %v; want two or more", gens, err)
	}
	first, err := ReadCheckpoint(cfg.OutDir, gens[0])
	if err != nil {
		t.Fatal(err)
	}
	victim := first.Members[0].File
	if err := os.WriteFile(victim, []byte("not an agent"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadCheckpoints(cfg.OutDir); err == nil || !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), victim) {
		t.Errorf("ReadCheckpoints with %s damaged: %v; want bad input naming it", victim, err)
	}
	last, err := ReadCheckpoint(cfg.OutDir, gens[len(gens)-1])
	if err != nil || len(last.Members) != cfg.Population.Size || filepath.Dir(last.Members[0].File) != last.Dir {
		t.Errorf("ReadCheckpoint of the last generation beside a damaged first: %+v, %v", last, err)
	}
	if _, err := ReadCheckpoint(cfg.OutDir, 99); err == nil || !errors.Is(err, ErrBadInput) ||
		!strings.Contains(err.Error(), "no checkpoint of generation 99 (it keeps 0, 1") {
		t.Errorf("ReadCheckpoint of a generation not kept: %v", err)
	}
}

package evo

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Checkpoint is one checkpoint of a run as ReadCheckpoints returns it.
type Checkpoint struct {
	// Generation is the generation after whose selection the checkpoint
	// was written (0: the initial population).
	Generation int
	// Dir is the checkpoint's directory.
	Dir string
	// Members are its agents, in population order.
	Members []CheckpointMember
}

// CheckpointMember is one agent of a checkpoint.
type CheckpointMember struct {
	// Index and Parent are as in Member.
	Index, Parent int
	// File is the agent file's path.
	File string
	// Steps are the env steps the agent has trained.
	Steps int
	// Fitness is the last fitness of its history: the agent's own in the
	// checkpoint's generation, or for a clone made there its parent's;
	// NaN in the initial population's checkpoint.
	Fitness float64
}

// ReadCheckpoints returns the checkpoints kept in the run directory dir,
// oldest first, each verified as Resume verifies the one it resumes (the
// checksums of population.json and of every agent file, the run's
// config.toml and digest); it loads no agent and writes nothing. A run
// whose checkpoints directory holds none, and any checkpoint that does not
// verify, is an error naming the file that matches ErrBadInput. Reading a
// run that is still training can fail when the run removes an old
// checkpoint meanwhile ([checkpoint] keep); read it again.
func ReadCheckpoints(dir string) ([]Checkpoint, error) {
	gens, err := CheckpointGenerations(dir)
	if err != nil {
		return nil, err
	}
	r, err := newCheckpointReader(dir)
	if err != nil {
		return nil, err
	}
	var out []Checkpoint
	for _, gen := range gens {
		c, err := r.read(gen)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// ReadCheckpoint returns the checkpoint of generation gen kept in the run
// directory dir, verified as ReadCheckpoints verifies each (and no other
// checkpoint of the run: one damaged does not hide the others). A
// generation the run keeps no checkpoint of is an error that matches
// ErrBadInput and names those it keeps.
func ReadCheckpoint(dir string, gen int) (Checkpoint, error) {
	gens, err := CheckpointGenerations(dir)
	if err != nil {
		return Checkpoint{}, err
	}
	if !slices.Contains(gens, gen) {
		kept := make([]string, len(gens))
		for i, g := range gens {
			kept[i] = strconv.Itoa(g)
		}
		return Checkpoint{}, badInput(fmt.Errorf("%s keeps no checkpoint of generation %d (it keeps %s)",
			filepath.Join(dir, "checkpoints"), gen, strings.Join(kept, ", ")))
	}
	r, err := newCheckpointReader(dir)
	if err != nil {
		return Checkpoint{}, err
	}
	return r.read(gen)
}

// CheckpointGenerations returns the generations whose checkpoints the run
// directory dir keeps, oldest first, by their directories' names alone:
// nothing is read or verified (ReadCheckpoint does that). A run whose
// checkpoints directory holds none is an error that matches ErrBadInput.
func CheckpointGenerations(dir string) ([]int, error) {
	root := filepath.Join(dir, "checkpoints")
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		return nil, badInput(fmt.Errorf("%s: no checkpoints directory: %s is not a run directory, or its run wrote no checkpoint", root, dir))
	}
	names := checkpointNames(root)
	if len(names) == 0 {
		return nil, badInput(fmt.Errorf("%s holds no checkpoint", root))
	}
	gens := make([]int, len(names))
	for i, name := range names {
		gen, err := strconv.Atoi(strings.TrimPrefix(name, "gen-"))
		if err != nil {
			return nil, badInput(fmt.Errorf("%s: %w", filepath.Join(root, name), err))
		}
		gens[i] = gen
	}
	return gens, nil
}

// checkpointReader verifies checkpoints of one run against its config.
type checkpointReader struct {
	dir    string
	cfg    Config
	digest string
}

func newCheckpointReader(dir string) (*checkpointReader, error) {
	cfg, err := LoadConfig(filepath.Join(dir, "config.toml"))
	if err != nil {
		return nil, err
	}
	digest, err := cfg.GenerationsDigest()
	if err != nil {
		return nil, err
	}
	return &checkpointReader{dir: dir, cfg: cfg, digest: digest}, nil
}

// read verifies the checkpoint of generation gen and lists its members.
func (r *checkpointReader) read(gen int) (Checkpoint, error) {
	ckpt := filepath.Join(r.dir, "checkpoints", fmt.Sprintf("gen-%06d", gen))
	pop, err := readCheckpoint(os.DirFS(ckpt), ckpt, gen, r.cfg, r.digest)
	if err != nil {
		if errors.Is(err, errConfigChanged) {
			err = fmt.Errorf("%w (against %s)", err, filepath.Join(r.dir, "config.toml"))
		}
		return Checkpoint{}, badInput(err)
	}
	c := Checkpoint{Generation: gen, Dir: ckpt}
	for _, m := range pop.Members {
		fit := math.NaN()
		if n := len(m.Fitness); n > 0 {
			fit = float64(m.Fitness[n-1])
		}
		c.Members = append(c.Members, CheckpointMember{Index: m.Index, Parent: m.Parent,
			File: filepath.Join(ckpt, m.File), Steps: m.Steps, Fitness: fit})
	}
	return c, nil
}

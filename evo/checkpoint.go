package evo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/evolverl/evolve/agent"

	"github.com/evolverl/evolve/internal/atomicfile"
)

// A checkpoint is the directory checkpoints/gen-NNNNNN/ holding
// population.json and one agent file per member, agent-NNNNNN.safetensors
// by member index. It holds the population after generation NNNNNN's
// selection and mutation (gen-000000: the initial population; the last
// generation of a finished run: its population as evaluated), ready to
// train the next generation. No RNG state of the trainer is stored: every
// stream evolution draws from is derived from (seed, agent index,
// generation, purpose), and each agent's own RNG is in its file.
const (
	populationFormat  = "evolve-population"
	populationVersion = 1
	populationFile    = "population.json"
	latestFile        = "latest"
)

var genDirName = regexp.MustCompile(`^gen-[0-9]{6,}$`)

// population is population.json.
type population struct {
	Format       string       `json:"format"`
	Version      int          `json:"version"`
	Generation   int          `json:"generation"`
	TotalSteps   int          `json:"total_steps"`
	WallSeconds  float64      `json:"wall_s"`
	NextIndex    int          `json:"next_index"`
	BestFitness  jsonFloat    `json:"best_fitness"`
	BestIndex    int          `json:"best_index"`
	Finished     bool         `json:"finished"`
	StopReason   string       `json:"stop_reason"`
	ConfigDigest string       `json:"config_digest"`
	Members      []memberJSON `json:"members"`
}

type memberJSON struct {
	Index    int         `json:"index"`
	Parent   int         `json:"parent"`
	File     string      `json:"file"`
	Steps    int         `json:"steps"`
	Mutation string      `json:"mutation"`
	Fitness  []jsonFloat `json:"fitness"`
}

// jsonFloat is a float64 whose infinities and NaN are written as the
// strings "inf", "-inf" and "nan" (a diverged agent's fitness is −Inf).
type jsonFloat float64

// MarshalJSON implements json.Marshaler.
func (f jsonFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsNaN(v):
		return []byte(`"nan"`), nil
	case math.IsInf(v, 1):
		return []byte(`"inf"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-inf"`), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (f *jsonFloat) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"nan"`:
		*f = jsonFloat(math.NaN())
	case `"inf"`:
		*f = jsonFloat(math.Inf(1))
	case `"-inf"`:
		*f = jsonFloat(math.Inf(-1))
	default:
		v, err := strconv.ParseFloat(string(b), 64)
		if err != nil {
			return fmt.Errorf("%.40q: want a number, \"inf\", \"-inf\" or \"nan\"", b)
		}
		*f = jsonFloat(v)
	}
	return nil
}

func toJSONFloats(x []float64) []jsonFloat {
	out := make([]jsonFloat, len(x))
	for i, v := range x {
		out[i] = jsonFloat(v)
	}
	return out
}

func memberFile(index int) string { return fmt.Sprintf("agent-%06d.safetensors", index) }

// prepare makes the run's directory ready before the first generation of
// this session: for a fresh run the resolved config.toml, the metrics
// header and the checkpoint of the initial population; for a resumed run
// metrics.csv without the rows of generations after the checkpoint.
func (t *Trainer) prepare(wall float64) error {
	if err := os.MkdirAll(t.dir, 0o755); err != nil {
		return err
	}
	if t.resumed {
		return t.truncateMetrics()
	}
	b, err := t.cfg.MarshalTOML()
	if err != nil {
		return err
	}
	if err := atomicfile.WriteBytes(filepath.Join(t.dir, "config.toml"), b); err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	if err := t.truncateMetrics(); err != nil {
		return err
	}
	t.resumed = true // a second Run continues from here
	return t.writeCheckpoint(wall)
}

// writeCheckpoint writes the population as checkpoints/gen-NNNNNN: into a
// temporary directory, every file fsynced, renamed into place, then
// checkpoints/latest replaced atomically; then it removes all but the
// newest checkpoint.keep checkpoints.
func (t *Trainer) writeCheckpoint(wall float64) error {
	root := filepath.Join(t.dir, "checkpoints")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	name := fmt.Sprintf("gen-%06d", t.gen)
	tmp, err := os.MkdirTemp(root, ".tmp-"+name+"-")
	if err != nil {
		return err
	}
	fail := func(err error) error {
		os.RemoveAll(tmp)
		return fmt.Errorf("checkpoint %s: %w", name, err)
	}
	pop := population{Format: populationFormat, Version: populationVersion, Generation: t.gen,
		TotalSteps: t.totalSteps, WallSeconds: wall, NextIndex: t.nextIndex,
		BestFitness: jsonFloat(t.best), BestIndex: t.bestIndex, Finished: t.finished,
		StopReason: t.stopReason, ConfigDigest: t.digest}
	for _, m := range t.members {
		f := memberFile(m.Index)
		if err := m.Agent.Save(filepath.Join(tmp, f)); err != nil {
			return fail(err)
		}
		pop.Members = append(pop.Members, memberJSON{Index: m.Index, Parent: m.Parent, File: f,
			Steps: m.Agent.Steps, Mutation: m.Mutation, Fitness: toJSONFloats(m.Fitness)})
	}
	b, err := json.MarshalIndent(pop, "", "  ")
	if err != nil {
		return fail(err)
	}
	if err := atomicfile.WriteBytes(filepath.Join(tmp, populationFile), append(b, '\n')); err != nil {
		return fail(err)
	}
	final := filepath.Join(root, name)
	// A directory of this name can only be left from a session that was
	// stopped after writing it but before updating latest: it is stale.
	if err := os.RemoveAll(final); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, final); err != nil {
		return fail(err)
	}
	if err := atomicfile.SyncDir(root); err != nil {
		return fail(err)
	}
	if err := atomicfile.WriteBytes(filepath.Join(root, latestFile), []byte(name+"\n")); err != nil {
		return fail(err)
	}
	return t.pruneCheckpoints(root, name)
}

// pruneCheckpoints removes the checkpoints older than the newest keep
// (never latest itself), and temporary directories of interrupted writes.
func (t *Trainer) pruneCheckpoints(root, latest string) error {
	entries, err := os.ReadDir(root)
	if err != nil {
		return err
	}
	var gens []string
	for _, e := range entries {
		switch n := e.Name(); {
		case strings.HasPrefix(n, ".tmp-gen-"):
			os.RemoveAll(filepath.Join(root, n))
		case genDirName.MatchString(n) && n <= latest:
			gens = append(gens, n)
		}
	}
	sort.Strings(gens)
	if k := t.cfg.Checkpoint.Keep; k > 0 && len(gens) > k {
		for _, n := range gens[:len(gens)-k] {
			if err := os.RemoveAll(filepath.Join(root, n)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Resume opens the run in dir to continue it: the config from
// dir/config.toml (its out_dir is ignored: the run stays in dir) and the
// population from the checkpoint named by dir/checkpoints/latest. A missing
// or damaged file, or a config changed since the checkpoint, is an error
// naming the file that matches ErrBadInput. Run then continues exactly as
// the run would have without the stop.
func Resume(dir string, opts Options) (*Trainer, error) {
	cfg, err := LoadConfig(filepath.Join(dir, "config.toml"))
	if err != nil {
		return nil, err
	}
	cfg.OutDir = dir
	t, err := newTrainer(cfg, dir, opts)
	if err != nil {
		return nil, err
	}
	root := filepath.Join(dir, "checkpoints")
	lb, err := os.ReadFile(filepath.Join(root, latestFile))
	if err != nil {
		return nil, badInput(fmt.Errorf("resume %s: no checkpoint to resume from: %w", dir, err))
	}
	name := strings.TrimSpace(string(lb))
	if !genDirName.MatchString(name) {
		return nil, badInput(fmt.Errorf("resume: %s names %.40q, want gen-NNNNNN", filepath.Join(root, latestFile), name))
	}
	ckpt := filepath.Join(root, name)
	popPath := filepath.Join(ckpt, populationFile)
	pb, err := os.ReadFile(popPath)
	if err != nil {
		return nil, badInput(fmt.Errorf("resume: %w", err))
	}
	var pop population
	dec := json.NewDecoder(bytes.NewReader(pb))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&pop); err != nil {
		return nil, badInput(fmt.Errorf("resume: %s: %w", popPath, err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, badInput(fmt.Errorf("resume: %s: data after the JSON object", popPath))
	}
	if err := checkPopulation(pop, cfg, t.digest); err != nil {
		return nil, badInput(fmt.Errorf("resume: %s: %w", popPath, err))
	}
	for _, mj := range pop.Members {
		path := filepath.Join(ckpt, mj.File)
		a, err := agent.Load(path)
		if err != nil {
			return nil, badInput(fmt.Errorf("resume: %w", err))
		}
		if a.Steps != mj.Steps {
			return nil, badInput(fmt.Errorf("resume: %s holds %d steps, %s says %d", path, a.Steps, popPath, mj.Steps))
		}
		fit := make([]float64, len(mj.Fitness))
		for i, f := range mj.Fitness {
			fit[i] = float64(f)
		}
		t.members = append(t.members, &Member{Index: mj.Index, Parent: mj.Parent, Mutation: mj.Mutation, Fitness: fit, Agent: a})
	}
	t.gen, t.totalSteps, t.nextIndex = pop.Generation, pop.TotalSteps, pop.NextIndex
	t.best, t.bestIndex = float64(pop.BestFitness), pop.BestIndex
	t.finished, t.stopReason, t.wallBefore = pop.Finished, pop.StopReason, pop.WallSeconds
	t.resumed = true
	t.progSteps.Store(int64(t.totalSteps))
	t.progGen.Store(int64(t.gen))
	return t, nil
}

// checkPopulation checks population.json against itself and the config.
func checkPopulation(p population, cfg Config, digest string) error {
	switch {
	case p.Format != populationFormat || p.Version != populationVersion:
		return fmt.Errorf("format %q version %d, want %q version %d", p.Format, p.Version, populationFormat, populationVersion)
	case p.ConfigDigest != digest:
		return fmt.Errorf("config digest %s differs from config.toml's %s: the config was changed after the checkpoint (only out_dir and workers may change)", p.ConfigDigest, digest)
	case len(p.Members) != cfg.Population.Size:
		return fmt.Errorf("%d members, population.size is %d", len(p.Members), cfg.Population.Size)
	case p.Generation < 0 || p.TotalSteps < 0 || p.NextIndex < len(p.Members) || math.IsNaN(p.WallSeconds) || p.WallSeconds < 0:
		return errors.New("negative or inconsistent counters")
	}
	seen := map[int]bool{}
	for _, m := range p.Members {
		if seen[m.Index] || m.Index < 0 || m.Index >= p.NextIndex {
			return fmt.Errorf("member index %d repeated or outside [0, next_index = %d)", m.Index, p.NextIndex)
		}
		seen[m.Index] = true
		if m.File != memberFile(m.Index) {
			return fmt.Errorf("member %d: file %.60q, want %s", m.Index, m.File, memberFile(m.Index))
		}
	}
	return nil
}

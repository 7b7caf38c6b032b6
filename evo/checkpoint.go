package evo

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/internal/atomicfile"
	"github.com/evolverl/evolve/internal/jsonfloat"
	"github.com/evolverl/evolve/internal/simd"
)

// A checkpoint is the directory checkpoints/gen-NNNNNN/ holding
// population.json, population.sha256, one agent file per member,
// agent-NNNNNN.safetensors by member index, and once the run has an elite
// a copy of elite.safetensors as it was after generation NNNNNN. It holds the population after
// generation NNNNNN's selection and mutation (gen-000000: the initial
// population; the last generation of a finished run: its population as
// evaluated), ready to train the next generation. No RNG state of the
// trainer is stored: every stream evolution draws from is derived from
// (seed, agent index, generation, purpose), and each agent's own RNG is in
// its file.
//
// The files are bound together: population.json records each agent file's
// size and SHA-256, and population.sha256 holds the SHA-256 of
// population.json in the format of sha256sum ("<hex>  population.json\n",
// so `sha256sum -c population.sha256` checks it by hand). Resume verifies
// all of it, and that the directory holds no other file, before it loads
// anything. The checksums detect damage and edits, not a forger who
// rewrites them too: nothing in a checkpoint is secret.
const (
	populationFormat = "evolve-population"
	// populationVersion 2 added the checksums; version 1 checkpoints are
	// refused (see errPredatesChecksums).
	populationVersion = 2
	populationFile    = "population.json"
	populationSumFile = "population.sha256"
	// eliteFile is the run directory's elite and, in a checkpoint, its copy.
	eliteFile  = "elite.safetensors"
	latestFile = "latest"
	lockFile   = ".lock" // the run directory's lock (lockRunDir)
	// maxPopulationBytes bounds what Resume reads of population.json: far
	// above any real population (a member takes about 200 bytes plus 20
	// per generation), far below what would exhaust memory.
	maxPopulationBytes = 256 << 20
)

var (
	genDirName = regexp.MustCompile(`^gen-[0-9]{6,}$`)
	sha256Hex  = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// population is population.json.
type population struct {
	Format     string `json:"format"`
	Version    int    `json:"version"`
	Generation int    `json:"generation"`
	TotalSteps int    `json:"total_steps"`
	// MeasureSteps are the evaluation and confirmation steps so far
	// (absent in checkpoints of earlier builds, which did not count them).
	MeasureSteps int           `json:"measure_steps,omitempty"`
	WallSeconds  float64       `json:"wall_s"`
	NextIndex    int           `json:"next_index"`
	BestFitness  jsonfloat.F64 `json:"best_fitness"`
	// EliteFit is the elite's fitness when it was saved (with fitness
	// from training episodes, what candidates for confirmation must
	// reach); absent in earlier checkpoints.
	EliteFit *jsonfloat.F64 `json:"elite_fit,omitempty"`
	// Elite describes the elite when it was saved; absent in earlier
	// checkpoints.
	Elite        *EliteRecord `json:"elite,omitempty"`
	BestIndex    int          `json:"best_index"`
	Finished     bool         `json:"finished"`
	StopReason   string       `json:"stop_reason"`
	ConfigDigest string       `json:"config_digest"`
	// Config is the config's TOML that ConfigDigest hashes (absent in
	// earlier checkpoints), so that a resume refused for a changed config
	// can name the keys.
	Config  string       `json:"config,omitempty"`
	Members []memberJSON `json:"members"`
	// EliteFile is the checkpoint's copy of the elite file (absent before
	// the run has an elite and in earlier checkpoints). Resume puts it back
	// where the run directory's differs: saved by a generation after the
	// checkpoint (a stop before that generation's checkpoint; a resume
	// with a smaller budget would not train it again), damaged or removed.
	EliteFile *fileRecord `json:"elite_file,omitempty"`
	// PB2 are PB2's observations (pbt.explore = "pb2"; absent otherwise).
	PB2 []pb2Obs `json:"pb2,omitempty"`
	// Kernels names the numeric kernels of the machine that wrote the
	// checkpoint (simd.Kernels); absent in earlier checkpoints.
	Kernels string `json:"kernels,omitempty"`
}

type memberJSON struct {
	Index  int    `json:"index"`
	Parent int    `json:"parent"`
	File   string `json:"file"`
	// Size and SHA256 (lower-case hex) are those of the agent file.
	Size     int64           `json:"size"`
	SHA256   string          `json:"sha256"`
	Steps    int             `json:"steps"`
	Mutation string          `json:"mutation"`
	Fitness  []jsonfloat.F64 `json:"fitness"`
	// Returns are the episode returns of its last fitness (PBT's t-test).
	Returns []float64 `json:"returns,omitempty"`
	// GenSteps are its env steps in the generation of its last fitness and
	// Idle whether it trained none (PBT's step clock), for PB2's
	// observations when a finished run goes on; absent when they are
	// evo_steps (see genStepsRecord), before the first generation and in
	// earlier checkpoints.
	GenSteps int  `json:"gen_steps,omitempty"`
	Idle     bool `json:"idle,omitempty"`
}

// fileRecord names a file of a checkpoint with its size and SHA-256
// (lower-case hex).
type fileRecord struct {
	File   string `json:"file"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// genStepsRecord is a member's gen_steps as population.json records it:
// omitted (0) when it is evo_steps, which is what 0 means on reading (no
// scaling of PB2's observation), so that checkpoints of runs whose
// rollouts divide evo_steps stay as earlier builds wrote and read them.
func genStepsRecord(genSteps, evoSteps int) int {
	if genSteps == evoSteps {
		return 0
	}
	return genSteps
}

func memberFile(index int) string { return fmt.Sprintf("agent-%06d.safetensors", index) }

// prepare makes the run's directory ready before the first generation of
// this session: for a fresh run the resolved config.toml, the metrics
// header and the checkpoint of the initial population, after checking that
// out_dir can hold them; for a resumed run metrics.csv without the rows of
// generations after the checkpoint.
func (t *Trainer) prepare(wall float64) error {
	if !t.resumed {
		if err := CheckOutDir(t.dir); err != nil {
			return fmt.Errorf("out_dir %s: %w", t.dir, err)
		}
	}
	if err := os.MkdirAll(t.dir, 0o755); err != nil {
		return err
	}
	if err := t.lock(); err != nil {
		return err
	}
	if t.resumed {
		// metrics.csv and tb/ are checked first: a refused resume leaves
		// .lock as it was.
		if err := t.truncateMetrics(); err != nil {
			return err
		}
		if fi, err := os.Stat(filepath.Join(t.dir, tbDir)); err == nil && !fi.IsDir() {
			return badInput(fmt.Errorf("tensorboard: %s is not a directory", filepath.Join(t.dir, tbDir)))
		}
		t.runLock.claim()
		return nil
	}
	// Another process may have started a run here since New looked, or
	// written files that the run's would overwrite.
	if _, err := os.Stat(filepath.Join(t.dir, "checkpoints")); err == nil {
		return badInput(fmt.Errorf("out_dir %s already holds a run: continue it with -resume %s, or choose another out_dir", t.dir, t.dir))
	}
	if err := CheckNewOutDir(t.dir); err != nil && !t.restarting {
		return fmt.Errorf("out_dir: %w", err)
	}
	t.runLock.claim()
	if err := removeConfigTemps(t.dir); err != nil {
		return fmt.Errorf("out_dir: %w", err)
	}
	b, err := t.cfg.TOML()
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
// temporary directory, every file fsynced, population.json with the size
// and SHA-256 of every agent file and population.sha256 with its own,
// renamed into place, then checkpoints/latest replaced atomically; then it
// removes all but the newest checkpoint.keep checkpoints.
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
	// MkdirTemp makes the directory 0700; a checkpoint gets the mode of
	// checkpoints/ itself (made under the umask), so that a run can be
	// shared as its other files are.
	if st, err := os.Stat(root); err == nil {
		if err := os.Chmod(tmp, st.Mode().Perm()); err != nil {
			return fail(err)
		}
	}
	pop := population{Format: populationFormat, Version: populationVersion, Generation: t.gen,
		TotalSteps: t.totalSteps, MeasureSteps: t.measureSteps, WallSeconds: wall, NextIndex: t.nextIndex,
		BestFitness: jsonfloat.F64(t.best), BestIndex: t.bestIndex, Finished: t.finished, EliteFit: (*jsonfloat.F64)(&t.bestFit), Elite: &t.elite,
		StopReason: t.stopReason, ConfigDigest: t.digest, Config: string(t.genTOML), PB2: t.pb2, Kernels: simd.Kernels()}
	for _, m := range t.members {
		f := memberFile(m.Index)
		path := filepath.Join(tmp, f)
		if err := m.Agent.Save(path); err != nil {
			return fail(err)
		}
		// The checksum is of the bytes on disk, read back.
		size, sum, err := hashFile(os.DirFS(tmp), f)
		if err != nil {
			return fail(err)
		}
		pop.Members = append(pop.Members, memberJSON{Index: m.Index, Parent: m.Parent, File: f,
			Size: size, SHA256: sum, Steps: m.Agent.Steps, Mutation: m.Mutation, Fitness: jsonfloat.Convert[jsonfloat.F64](m.Fitness), Returns: m.Returns,
			GenSteps: genStepsRecord(m.genSteps, t.cfg.Population.EvoSteps), Idle: m.idle})
	}
	if pop.EliteFile, err = t.copyElite(tmp); err != nil {
		return fail(err)
	}
	b, err := json.MarshalIndent(pop, "", "  ")
	if err != nil {
		return fail(err)
	}
	b = append(b, '\n')
	if err := atomicfile.WriteBytes(filepath.Join(tmp, populationFile), b); err != nil {
		return fail(err)
	}
	if err := atomicfile.WriteBytes(filepath.Join(tmp, populationSumFile), sumFileLine(b)); err != nil {
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
	// New stopping rules (SetStopRules) go to config.toml with the first
	// checkpoint after them: before latest names it when the checkpoint
	// resumed from records the generations' digest, which both configs
	// match, so that a stop between the two leaves the new rules in place
	// (a plain -resume then trains on to the new budget); after it when that
	// checkpoint is from a build that recorded the config's whole digest,
	// which only the old config.toml matches.
	if t.saveConfig && !t.resumedWholeDigest {
		if err := t.saveStopRules(); err != nil {
			return fail(err)
		}
	}
	if t.beforeLatest != nil {
		t.beforeLatest()
	}
	if err := atomicfile.WriteBytes(filepath.Join(root, latestFile), []byte(name+"\n")); err != nil {
		return fail(err)
	}
	if t.saveConfig {
		if err := t.saveStopRules(); err != nil {
			return err
		}
	}
	return t.pruneCheckpoints(root, name)
}

// copyElite writes the run's elite file into the checkpoint directory
// ckpt, with the horizon of the budget the checkpoint is written under,
// and returns its record; nil when the run has no elite file.
func (t *Trainer) copyElite(ckpt string) (*fileRecord, error) {
	if t.bestIndex < 0 {
		return nil, nil
	}
	a, err := agent.Load(filepath.Join(t.dir, eliteFile))
	if errors.Is(err, fs.ErrNotExist) { // removed, and forgotten (forgetElite) only when Run starts
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("elite: %w", err)
	}
	a.TotalSteps = agentHorizon(t.cfg.Population)
	if err := a.Save(filepath.Join(ckpt, eliteFile)); err != nil {
		return nil, err
	}
	size, sum, err := hashFile(os.DirFS(ckpt), eliteFile)
	if err != nil {
		return nil, err
	}
	return &fileRecord{File: eliteFile, Size: size, SHA256: sum}, nil
}

// saveStopRules writes config.toml with the stopping rules SetStopRules
// set, and gives the elite file their horizon.
func (t *Trainer) saveStopRules() error {
	if err := t.eliteFollowsBudget(); err != nil {
		return err
	}
	b, err := t.cfg.TOML()
	if err == nil {
		err = atomicfile.WriteBytes(filepath.Join(t.dir, "config.toml"), b)
	}
	if err != nil {
		return fmt.Errorf("write config with the new stopping rules: %w", err)
	}
	t.saveConfig = false
	return nil
}

// eliteFollowsBudget gives an elite saved before SetStopRules changed the
// budget the new budget's horizon, as SetStopRules gives the members, so
// that the file is the one a run with that budget from the start saves.
func (t *Trainer) eliteFollowsBudget() error {
	path := filepath.Join(t.dir, eliteFile)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	a, err := agent.Load(path)
	if err != nil {
		return fmt.Errorf("elite with the new budget: %w", err)
	}
	if h := agentHorizon(t.cfg.Population); a.TotalSteps != h {
		a.TotalSteps = h
		if err := a.Save(path); err != nil {
			return fmt.Errorf("elite with the new budget: %w", err)
		}
	}
	return nil
}

// sumFileLine returns population.sha256 for population.json's bytes b, in
// the format of sha256sum.
func sumFileLine(b []byte) []byte {
	return fmt.Appendf(nil, "%x  %s\n", sha256.Sum256(b), populationFile)
}

// hashFile returns the size and the SHA-256 (lower-case hex) of the file
// name in fsys, read in a stream.
func hashFile(fsys fs.FS, name string) (int64, string, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return 0, "", err
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
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
		case strings.HasPrefix(n, ".tmp-gen-") || strings.HasPrefix(n, "."+latestFile+".tmp-"):
			// What a stop left half written: a checkpoint's directory, or
			// latest's temporary file (atomicfile's naming). Under the run's
			// lock no one else is writing them.
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

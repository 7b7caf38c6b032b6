package evo

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/internal/atomicfile"
	"github.com/evolverl/evolve/internal/jsonfloat"
)

// A checkpoint is the directory checkpoints/gen-NNNNNN/ holding
// population.json, population.sha256 and one agent file per member,
// agent-NNNNNN.safetensors by member index. It holds the population after
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
	latestFile        = "latest"
	lockFile          = ".lock" // the run directory's lock (lockRunDir)
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
	Members      []memberJSON `json:"members"`
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
		t.runLock.claim()
		return t.truncateMetrics()
	}
	// Another process may have started a run here since New looked.
	if _, err := os.Stat(filepath.Join(t.dir, "checkpoints")); err == nil {
		return badInput(fmt.Errorf("out_dir %s already holds a run: continue it with -resume %s, or choose another out_dir", t.dir, t.dir))
	}
	t.runLock.claim()
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

// HoldsRun reports whether dir holds a run (its checkpoints directory).
func HoldsRun(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "checkpoints"))
	return err == nil
}

// FreeOutDir returns dir if it holds no run, else the first of dir_2,
// dir_3, … that holds none, as rl-baselines3-zoo numbers its logs: a
// config's out_dir run twice gives a second run beside the first.
func FreeOutDir(dir string) string {
	if !HoldsRun(dir) {
		return dir
	}
	clean := filepath.Clean(dir)
	for i := 2; ; i++ {
		if d := fmt.Sprintf("%s_%d", clean, i); !HoldsRun(d) {
			return d
		}
	}
}

// CheckOutDir reports, without leaving anything behind, whether a run can
// be written to dir: dir, or else the nearest of its ancestors that exists,
// must be a directory in which a directory can be created. That is tried
// with a probe directory removed at once, since permission bits do not
// tell (root ignores them; read-only mounts and /proc refuse anyway). Its
// errors name the path at fault and match ErrBadInput.
func CheckOutDir(dir string) error {
	if dir == "" {
		return badInput(errors.New("empty directory name"))
	}
	p := filepath.Clean(dir)
	for {
		fi, err := os.Stat(p)
		if err == nil {
			if fi.Mode().IsRegular() {
				return badInput(fmt.Errorf("%s is a file, not a directory", p))
			}
			if !fi.IsDir() {
				return badInput(fmt.Errorf("%s is not a directory", p))
			}
			break
		}
		// ENOTDIR: an ancestor is a file, found further up.
		parent := filepath.Dir(p)
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) || parent == p {
			return badInput(fmt.Errorf("%s: %w", p, pathErr(err)))
		}
		p = parent
	}
	probe, err := os.MkdirTemp(p, ".evolve-probe-")
	if err != nil {
		return badInput(fmt.Errorf("cannot create a directory in %s (%w)", p, pathErr(err)))
	}
	return os.Remove(probe)
}

// pathErr returns the error inside a *fs.PathError, whose path the caller
// names itself (os.DirFS's paths are relative).
func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
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
	pop := population{Format: populationFormat, Version: populationVersion, Generation: t.gen,
		TotalSteps: t.totalSteps, MeasureSteps: t.measureSteps, WallSeconds: wall, NextIndex: t.nextIndex,
		BestFitness: jsonfloat.F64(t.best), BestIndex: t.bestIndex, Finished: t.finished, EliteFit: (*jsonfloat.F64)(&t.bestFit), Elite: &t.elite,
		StopReason: t.stopReason, ConfigDigest: t.digest}
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
			Size: size, SHA256: sum, Steps: m.Agent.Steps, Mutation: m.Mutation, Fitness: jsonfloat.Convert[jsonfloat.F64](m.Fitness), Returns: m.Returns})
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
	if err := atomicfile.WriteBytes(filepath.Join(root, latestFile), []byte(name+"\n")); err != nil {
		return fail(err)
	}
	if t.saveConfig {
		// New stopping rules (SetStopRules) go to config.toml only now: the
		// checkpoints before this one may record the config's whole digest,
		// which the old config.toml matches, and this one records one that
		// both match.
		if err := t.eliteFollowsBudget(); err != nil {
			return err
		}
		b, err := t.cfg.MarshalTOML()
		if err == nil {
			err = atomicfile.WriteBytes(filepath.Join(t.dir, "config.toml"), b)
		}
		if err != nil {
			return fmt.Errorf("write config with the new stopping rules: %w", err)
		}
		t.saveConfig = false
	}
	return t.pruneCheckpoints(root, name)
}

// eliteFollowsBudget gives an elite saved before SetStopRules changed the
// budget the new budget's horizon, as SetStopRules gives the members, so
// that the file is the one a run with that budget from the start saves.
func (t *Trainer) eliteFollowsBudget() error {
	path := filepath.Join(t.dir, "elite.safetensors")
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
// population from the checkpoint named by dir/checkpoints/latest. Nothing
// is trusted: the checkpoint is verified whole (see readCheckpoint) before
// any agent is loaded, and the agents are then checked against it. A
// missing, damaged or altered file, a config changed since the checkpoint,
// or a checkpoint written before checksums existed is an error naming the
// file that matches ErrBadInput; so is a dir that cannot be written. When
// latest names a checkpoint that is not there, the error lists those that
// are; when it refuses a damaged checkpoint, the error names the newest
// older one that verifies and how to resume from it. Run then continues
// exactly as the run would have without the stop. Resume leaves every
// file as it was.
func Resume(dir string, opts Options) (*Trainer, error) {
	switch st, err := os.Stat(dir); {
	case errors.Is(err, fs.ErrNotExist):
		return nil, badInput(fmt.Errorf("resume %s: no such run directory", dir))
	case err == nil && !st.IsDir():
		return nil, badInput(fmt.Errorf("resume %s: a file, not a run directory (a run directory holds config.toml and checkpoints/; a config file starts a new run)", dir))
	}
	cfg, err := LoadConfig(filepath.Join(dir, "config.toml"))
	if err != nil {
		return nil, err
	}
	cfg.OutDir = dir
	t, err := newTrainer(cfg, dir, opts)
	if err != nil {
		return nil, err
	}
	// The lock is held from before the checkpoint is read until Run ends,
	// so that what is read is not being rewritten.
	if err := t.lock(); err != nil {
		return nil, err
	}
	t, err = t.resume()
	if err != nil {
		return nil, err
	}
	return t, nil
}

// resume reads the newest checkpoint of t's run into t, releasing the run
// directory's lock on failure.
func (t *Trainer) resume() (_ *Trainer, err error) {
	defer func() {
		if err != nil {
			t.release()
		}
	}()
	dir, cfg := t.dir, t.cfg
	root := filepath.Join(dir, "checkpoints")
	latestPath := filepath.Join(root, latestFile)
	lb, err := readFileFS(os.DirFS(root), latestFile, 256)
	if err != nil {
		hint := ""
		if len(checkpointNames(root)) > 0 {
			hint = "; " + checkpointsThere(root)
		}
		return nil, badInput(fmt.Errorf("resume %s: no checkpoint to resume from: %s: %w%s", dir, latestPath, err, hint))
	}
	name := strings.TrimSpace(string(lb))
	gen, err := strconv.Atoi(strings.TrimPrefix(name, "gen-"))
	if !genDirName.MatchString(name) || err != nil {
		return nil, badInput(fmt.Errorf("resume: %s names %.40q, want gen-NNNNNN", latestPath, name))
	}
	ckpt := filepath.Join(root, name)
	if _, err := os.Stat(ckpt); errors.Is(err, fs.ErrNotExist) {
		return nil, badInput(fmt.Errorf("resume: %s names %s, which does not exist: %s", latestPath, name, checkpointsThere(root)))
	}
	pop, err := readCheckpoint(os.DirFS(ckpt), ckpt, gen, cfg, t.digest)
	switch {
	case errors.Is(err, errPredatesChecksums):
		err = fmt.Errorf("%w: start the run again (evolve -config %s -out NEW_DIR), or resume it with the build that wrote it",
			err, filepath.Join(dir, "config.toml"))
	case err != nil && !errors.Is(err, errConfigChanged):
		err = fmt.Errorf("%w%s", err, olderCheckpointHint(root, name, cfg, t.digest))
	}
	if err != nil {
		return nil, badInput(fmt.Errorf("resume: %w", err))
	}
	if err := CheckOutDir(dir); err != nil {
		return nil, fmt.Errorf("resume: run directory %s: %w", dir, err)
	}
	popPath := filepath.Join(ckpt, populationFile)
	for _, mj := range pop.Members {
		path := filepath.Join(ckpt, mj.File)
		a, err := agent.Load(path)
		if err != nil {
			return nil, badInput(fmt.Errorf("resume: %w%s", err, olderCheckpointHint(root, name, cfg, t.digest)))
		}
		if a.Steps != mj.Steps {
			return nil, badInput(fmt.Errorf("resume: %s holds %d steps, %s says %d%s", path, a.Steps, popPath, mj.Steps,
				olderCheckpointHint(root, name, cfg, t.digest)))
		}
		if !a.Env.Known() { // written before agent files recorded their env
			a.Env = cfg.envRef()
			// (and perhaps before MinAtar's "-v1" ids named the minimal set)
			a.Env.ID = envs.LegacyMinAtarID(a.Env.ID, a.Env.Options, a.ActionSpace())
		}
		fit := make([]float64, len(mj.Fitness))
		for i, f := range mj.Fitness {
			fit[i] = float64(f)
		}
		t.members = append(t.members, &Member{Index: mj.Index, Parent: mj.Parent, Mutation: mj.Mutation, Fitness: fit,
			Returns: mj.Returns, Agent: a})
	}
	if len(t.members) > 0 {
		// A run begun when MinAtar's "-v1" ids named the full action set:
		// the trainer gives its agents the "-v0" env (envs.LegacyMinAtarID).
		if id := envs.LegacyMinAtarID(cfg.Env.ID, cfg.Env.Options, t.members[0].Agent.ActionSpace()); id != cfg.Env.ID {
			t.log.Warn("the agents have MinAtar's full action set, which "+cfg.Env.ID+" named when the run began: they train and play on "+id,
				"env", cfg.Env.ID)
		}
	}
	t.gen, t.totalSteps, t.nextIndex = pop.Generation, pop.TotalSteps, pop.NextIndex
	t.measureSteps = pop.MeasureSteps
	t.best, t.bestIndex = float64(pop.BestFitness), pop.BestIndex
	t.bestFit = t.best // earlier checkpoints: their elite's fitness was its score
	t.elite = EliteRecord{Index: pop.BestIndex}
	if pop.Elite != nil {
		t.elite = *pop.Elite
	}
	if pop.EliteFit != nil {
		t.bestFit = float64(*pop.EliteFit)
	}
	t.finished, t.stopReason, t.wallBefore = pop.Finished, pop.StopReason, pop.WallSeconds
	t.resumed = true
	t.progSteps.Store(int64(t.totalSteps))
	t.progGen.Store(int64(t.gen))
	return t, nil
}

// checkpointNames returns the names of the checkpoints in root, oldest
// first.
func checkpointNames(root string) []string {
	entries, _ := os.ReadDir(root)
	var names []string
	for _, e := range entries {
		if e.IsDir() && genDirName.MatchString(e.Name()) {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names
}

// checkpointsThere describes the checkpoints in root for an error about a
// missing one: their names and how to resume from the newest.
func checkpointsThere(root string) string {
	names := checkpointNames(root)
	if len(names) == 0 {
		return fmt.Sprintf("%s holds no checkpoint", root)
	}
	newest := names[len(names)-1]
	return fmt.Sprintf("the checkpoints in %s are %s; to resume from one, write its name into %s (echo %s > %s)",
		root, strings.Join(names, ", "), filepath.Join(root, latestFile), newest, filepath.Join(root, latestFile))
}

// olderCheckpointHint returns, for the error refusing the checkpoint name
// in root, a hint naming the newest older checkpoint that verifies (see
// readCheckpoint) and how to resume from it, or "" if there is none.
func olderCheckpointHint(root, name string, cfg Config, digest string) string {
	names := checkpointNames(root)
	for i := len(names) - 1; i >= 0; i-- {
		older := names[i]
		if older >= name {
			continue
		}
		gen, err := strconv.Atoi(strings.TrimPrefix(older, "gen-"))
		if err != nil {
			continue
		}
		dir := filepath.Join(root, older)
		if _, err := readCheckpoint(os.DirFS(dir), dir, gen, cfg, digest); err != nil {
			continue
		}
		latest := filepath.Join(root, latestFile)
		return fmt.Sprintf("; the older checkpoint %s verifies: to resume from it (redoing the generations after it), write its name into %s (echo %s > %s)",
			dir, latest, older, latest)
	}
	return ""
}

// errConfigChanged marks a checkpoint refused because the run's config no
// longer matches it, which no other checkpoint of the run would either.
var errConfigChanged = errors.New("the config was changed after the checkpoint (only out_dir, workers, target and max_steps may change; max_steps not with anneal_lr)")

// errPredatesChecksums is the error for a checkpoint of population.json
// version 1, which has no checksums: it cannot be verified, so it is
// refused (accepting it would also let anyone bypass the checksums by
// deleting population.sha256 and writing version 1).
var errPredatesChecksums = errors.New("the checkpoint predates checksums (population.json version 1, no population.sha256) and cannot be verified")

// readCheckpoint reads and verifies the checkpoint of generation gen held
// in fsys (the directory dir, which errors name): population.json against
// population.sha256, then its contents against themselves, the config and
// its digest, then the directory's listing against the members (no file
// missing, none other), then each agent file's size and SHA-256 against
// population.json. It reads the agent files but decodes none, and writes
// nothing. Every error names the file at fault.
func readCheckpoint(fsys fs.FS, dir string, gen int, cfg Config, digest string) (population, error) {
	at := func(name string) string { return filepath.Join(dir, name) }
	popPath, sumPath := at(populationFile), at(populationSumFile)
	pb, err := readFileFS(fsys, populationFile, maxPopulationBytes)
	if err != nil {
		return population{}, fmt.Errorf("%s: %w", popPath, err)
	}
	sb, err := readFileFS(fsys, populationSumFile, 1024)
	if errors.Is(err, fs.ErrNotExist) && predatesChecksums(pb) {
		return population{}, fmt.Errorf("%s: %w", popPath, errPredatesChecksums)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return population{}, fmt.Errorf("%s: missing (every checkpoint has one since population.json version 2)", sumPath)
	}
	if err != nil {
		return population{}, fmt.Errorf("%s: %w", sumPath, err)
	}
	if !bytes.Equal(sb, sumFileLine(pb)) {
		if !sumFileLineRE.Match(sb) {
			return population{}, fmt.Errorf("%s: want one line \"<SHA-256 in hex>  %s\", as sha256sum writes", sumPath, populationFile)
		}
		return population{}, fmt.Errorf("%s does not match the checksum in %s: one of them was altered or damaged", popPath, sumPath)
	}
	p, err := decodePopulation(pb)
	if err == nil {
		err = checkPopulation(p, cfg, digest, gen)
	}
	if err != nil {
		return population{}, fmt.Errorf("%s: %w", popPath, err)
	}
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return population{}, fmt.Errorf("%s: %w", dir, pathErr(err))
	}
	listed := map[string]bool{populationFile: true, populationSumFile: true}
	for _, m := range p.Members {
		listed[m.File] = true
	}
	for _, e := range entries {
		if !listed[e.Name()] {
			return population{}, fmt.Errorf("%s: not part of the checkpoint (it holds %s, %s and the agent files listed there, nothing else)",
				at(e.Name()), populationFile, populationSumFile)
		}
	}
	for _, m := range p.Members {
		if err := verifyAgentFile(fsys, m); err != nil {
			return population{}, fmt.Errorf("%s: %w", at(m.File), err)
		}
	}
	return p, nil
}

var sumFileLineRE = regexp.MustCompile(`^[0-9a-f]{64}  ` + regexp.QuoteMeta(populationFile) + `\n$`)

// predatesChecksums reports whether b is a population.json of a version
// before the checksums.
func predatesChecksums(b []byte) bool {
	var head struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
	}
	return json.Unmarshal(b, &head) == nil && head.Format == populationFormat && head.Version < populationVersion
}

// readFileFS reads the regular file name of fsys, refusing anything else
// (a directory, a device, a FIFO that would block) and files of more than
// limit bytes. Its errors do not repeat the name.
func readFileFS(fsys fs.FS, name string, limit int64) ([]byte, error) {
	fi, err := fs.Stat(fsys, name)
	switch {
	case err != nil:
		return nil, pathErr(err)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("not a regular file (%v)", fi.Mode().Type())
	case fi.Size() > limit:
		return nil, fmt.Errorf("%d bytes, more than the %d it may hold", fi.Size(), limit)
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, pathErr(err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	switch {
	case err != nil:
		return nil, pathErr(err)
	case int64(len(b)) > limit:
		return nil, fmt.Errorf("more than the %d bytes it may hold", limit)
	}
	return b, nil
}

// verifyAgentFile checks that member m's agent file in fsys has the size
// and SHA-256 population.json records.
func verifyAgentFile(fsys fs.FS, m memberJSON) error {
	fi, err := fs.Stat(fsys, m.File)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("missing (%s lists it)", populationFile)
	case err != nil:
		return pathErr(err)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("not a regular file (%v)", fi.Mode().Type())
	case fi.Size() != m.Size:
		return fmt.Errorf("%d bytes, %s says %d: truncated, extended or replaced", fi.Size(), populationFile, m.Size)
	}
	size, sum, err := hashFile(fsys, m.File)
	switch {
	case err != nil:
		return pathErr(err)
	case size != m.Size:
		return fmt.Errorf("%d bytes, %s says %d: changed while being read", size, populationFile, m.Size)
	case sum != m.SHA256:
		return fmt.Errorf("SHA-256 %s…, %s says %s…: altered or replaced since the checkpoint was written", sum[:12], populationFile, m.SHA256[:12])
	}
	return nil
}

// decodePopulation parses population.json strictly (one JSON object, no
// unknown field) and checks it against itself: the format and version,
// counters that cannot be negative, member indices unique and below
// next_index, each member's file named by its index with a size and a
// SHA-256, and a fitness history of one entry per generation.
func decodePopulation(b []byte) (population, error) {
	var p population
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return population{}, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return population{}, errors.New("data after the JSON object")
	}
	switch {
	case p.Format != populationFormat || p.Version != populationVersion:
		return population{}, fmt.Errorf("format %.40q version %d, want %q version %d", p.Format, p.Version, populationFormat, populationVersion)
	case p.Generation < 0 || p.TotalSteps < 0 || p.MeasureSteps < 0 || p.NextIndex < len(p.Members) || math.IsNaN(p.WallSeconds) || p.WallSeconds < 0 ||
		p.BestIndex < -1 || p.BestIndex >= p.NextIndex:
		return population{}, errors.New("negative or inconsistent counters")
	}
	seen := map[int]bool{}
	for _, m := range p.Members {
		if seen[m.Index] || m.Index < 0 || m.Index >= p.NextIndex {
			return population{}, fmt.Errorf("member index %d repeated or outside [0, next_index = %d)", m.Index, p.NextIndex)
		}
		seen[m.Index] = true
		switch {
		case m.File != memberFile(m.Index):
			return population{}, fmt.Errorf("member %d: file %.60q, want %s", m.Index, m.File, memberFile(m.Index))
		case m.Parent < -1 || m.Parent >= p.NextIndex || m.Steps < 0:
			return population{}, fmt.Errorf("member %d: parent %d or steps %d out of range", m.Index, m.Parent, m.Steps)
		case m.Size < 0 || !sha256Hex.MatchString(m.SHA256):
			return population{}, fmt.Errorf("member %d: size %d and sha256 %.70q: want a size and 64 lower-case hex digits", m.Index, m.Size, m.SHA256)
		case len(m.Fitness) != p.Generation:
			return population{}, fmt.Errorf("member %d: %d fitness values after generation %d, want one per generation", m.Index, len(m.Fitness), p.Generation)
		}
	}
	return p, nil
}

// checkPopulation checks a decoded population.json against the run's
// config, its digest and the generation in the checkpoint's name.
func checkPopulation(p population, cfg Config, digest string, gen int) error {
	// Checkpoints written before the stopping rules left the digest
	// record the config's whole Digest.
	full, err := cfg.Digest()
	if err != nil {
		return err
	}
	switch {
	case p.ConfigDigest != digest && p.ConfigDigest != full:
		return fmt.Errorf("config digest %.80s differs from config.toml's %s: %w", p.ConfigDigest, digest, errConfigChanged)
	case len(p.Members) != cfg.Population.Size:
		return fmt.Errorf("%d members, population.size is %d: %w", len(p.Members), cfg.Population.Size, errConfigChanged)
	case p.Generation != gen:
		return fmt.Errorf("generation %d in a checkpoint of generation %d (gen-%06d)", p.Generation, gen, gen)
	}
	return nil
}

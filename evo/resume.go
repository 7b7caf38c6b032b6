package evo

import (
	"bytes"
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

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/internal/realpath"
	"github.com/evolverl/evolve/internal/simd"
)

// Resume opens the run in dir to continue it: the config from
// dir/config.toml (its out_dir is ignored: the run stays in dir) and the
// population from the checkpoint named by dir/checkpoints/latest. Nothing
// is trusted: the checkpoint is verified whole (every agent file's size and
// SHA-256 against population.json, and that file's own checksum) before
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
	if realpath.Ambiguous(dir) {
		return nil, badInput(fmt.Errorf("resume %s: a \"..\" after a symbolic link names %s, not %s: give the run directory without it",
			dir, realpath.Of(dir), realpath.Of(filepath.Clean(dir))))
	}
	if _, err := os.Stat(filepath.Join(dir, "config.toml")); errors.Is(err, fs.ErrNotExist) {
		return nil, badInput(fmt.Errorf("resume %s: not a run directory (no config.toml; a run directory holds config.toml and checkpoints/)", dir))
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
	if unstarted(dir) {
		return t.restart()
	}
	t, err = t.resume()
	if err != nil {
		return nil, err
	}
	return t, nil
}

// unstarted reports whether the run in dir was stopped before its first
// checkpoint was whole (a SIGKILL while gen-000000 was written): its
// config.toml is one a run wrote (resolvedHeader), the directory holds
// nothing but what such a run leaves (config.toml, .lock, metrics.csv's
// header, hidden temporaries), and its checkpoints directory is missing
// or holds neither latest nor a checkpoint, only the temporaries the stop
// left half written. A user's directory with a config.toml of their own
// is not one, and is left alone.
func unstarted(dir string) bool {
	if b, err := os.ReadFile(filepath.Join(dir, "config.toml")); err != nil || !bytes.HasPrefix(b, []byte(resolvedHeader)) {
		return false
	}
	top, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range top {
		switch e.Name() {
		case "config.toml", lockFile, "checkpoints":
		case "metrics.csv": // its header only: a row means a generation ended
			if b, err := os.ReadFile(filepath.Join(dir, "metrics.csv")); err != nil || bytes.Count(b, []byte("\n")) > 1 {
				return false
			}
		default: // an elite, a summary or events come after the first checkpoint
			if !strings.HasPrefix(e.Name(), ".") { // hidden files are not written over: a restart removes only checkpoints/
				return false
			}
		}
	}
	root := filepath.Join(dir, "checkpoints")
	if _, err := os.Stat(filepath.Join(root, latestFile)); !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return true // stopped between config.toml and the checkpoints directory
	}
	if err != nil {
		return false
	}
	for _, e := range entries {
		// Only the temporaries a checkpoint is written through: anything
		// else there is not the run's to remove.
		if !strings.HasPrefix(e.Name(), ".tmp-gen-") && !strings.HasPrefix(e.Name(), ".latest.tmp-") {
			return false
		}
	}
	return true
}

// restart starts an unstarted run (see unstarted) again from its
// config.toml, which a run that was never stopped would have trained from:
// nothing of it could be resumed, and New refuses the directory while the
// checkpoints directory is there. t holds the run directory's lock, which
// is let go before New takes it again.
func (t *Trainer) restart() (*Trainer, error) {
	err := os.RemoveAll(filepath.Join(t.dir, "checkpoints"))
	t.release()
	if err != nil {
		return nil, fmt.Errorf("resume %s: the run stopped before its first checkpoint; removing what it left: %w", t.dir, err)
	}
	t.log.Warn("the run stopped before its first checkpoint was whole: starting it again from config.toml", "dir", t.dir)
	return newRun(t.cfg, t.opts, true)
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
	name, gen, err := latestCheckpoint(dir, root)
	if err != nil {
		return nil, err
	}
	ckpt := filepath.Join(root, name)
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
	if err := t.loadMembers(root, name, pop); err != nil {
		return nil, err
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
	t.resumedWholeDigest = pop.ConfigDigest != t.digest
	if k := simd.Kernels(); pop.Kernels != "" && pop.Kernels != k {
		t.log.Warn("the checkpoint was written on a machine with other numeric kernels, which round differently: "+
			"the run goes on, but not bit for bit as it would have there", "checkpoint", pop.Kernels, "here", k)
	}
	t.best, t.bestIndex = float64(pop.BestFitness), pop.BestIndex
	t.bestFit = t.best // earlier checkpoints: their elite's fitness was its score
	t.elite = EliteRecord{Index: pop.BestIndex}
	if pop.Elite != nil {
		t.elite = *pop.Elite
	}
	if pop.EliteFit != nil {
		t.bestFit = float64(*pop.EliteFit)
	}
	if err := t.checkEliteFile(); err != nil {
		return nil, err
	}
	t.finished, t.stopReason, t.wallBefore = pop.Finished, pop.StopReason, pop.WallSeconds
	t.pb2 = pop.PB2
	t.resumed = true
	if err := t.initDemos(); err != nil {
		return nil, err
	}
	t.progSteps.Store(int64(t.totalSteps))
	t.progGen.Store(int64(t.gen))
	return t, nil
}

// checkEliteFile checks the elite file of a run whose checkpoint records
// an elite before the run trains on. A damaged file is refused (it failed
// the first checkpoint after a generation of training, and each retry
// trained that generation again). A missing one is noted (eliteMissing);
// Run decides what that means (forgetElite).
func (t *Trainer) checkEliteFile() error {
	if t.bestIndex < 0 {
		return nil
	}
	path := filepath.Join(t.dir, "elite.safetensors")
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		t.eliteMissing = true
		return nil
	}
	if _, err := agent.Load(path); err != nil {
		return badInput(fmt.Errorf("resume: %w: put a whole copy of it back, or remove it to resume without that elite", err))
	}
	return nil
}

// forgetElite handles an elite file removed before a resume. A run that
// trains on loses that agent: it forgets the elite and saves the next
// generation's best as its elite, so that it ends with a file to load (with
// the lost one's score kept, a run whose later agents stay below it would
// end with none). A finished run that trains nothing keeps its record, as
// summary.json has it.
func (t *Trainer) forgetElite() {
	if !t.eliteMissing {
		return
	}
	t.eliteMissing = false
	if t.finished {
		t.log.Warn("elite.safetensors is missing: its agent is lost (the run is finished, and its summary keeps the elite's record)",
			"dir", t.dir, "generation", t.elite.Generation, "agent", t.bestIndex, "score", t.best)
		return
	}
	t.log.Warn("elite.safetensors is missing: its agent is lost, and the run saves the next generation's best as its elite",
		"dir", t.dir, "generation", t.elite.Generation, "agent", t.bestIndex, "score", t.best)
	t.best, t.bestFit, t.bestIndex = math.Inf(-1), math.Inf(-1), -1
	t.elite = EliteRecord{Index: -1}
}

// latestCheckpoint returns the name and generation of the checkpoint that
// root's latest file names, checking that it exists.
func latestCheckpoint(dir, root string) (name string, gen int, err error) {
	latestPath := filepath.Join(root, latestFile)
	lb, err := readFileFS(os.DirFS(root), latestFile, 256)
	if names := checkpointNames(root); errors.Is(err, fs.ErrNotExist) && len(names) > 0 {
		// A stop between a checkpoint's rename and latest's first write:
		// the newest checkpoint is the one latest would name (it is
		// verified whole before anything is loaded).
		lb, err = []byte(names[len(names)-1]), nil
	}
	if err != nil {
		hint := ""
		if len(checkpointNames(root)) > 0 {
			hint = "; " + checkpointsThere(root)
		}
		return "", 0, badInput(fmt.Errorf("resume %s: no checkpoint to resume from: %s: %w%s", dir, latestPath, err, hint))
	}
	name = strings.TrimSpace(string(lb))
	gen, err = strconv.Atoi(strings.TrimPrefix(name, "gen-"))
	if !genDirName.MatchString(name) || err != nil {
		return "", 0, badInput(fmt.Errorf("resume: %s names %.40q, want gen-NNNNNN", latestPath, name))
	}
	if _, err := os.Stat(filepath.Join(root, name)); errors.Is(err, fs.ErrNotExist) {
		return "", 0, badInput(fmt.Errorf("resume: %s names %s, which does not exist: %s", latestPath, name, checkpointsThere(root)))
	}
	return name, gen, nil
}

// loadMembers loads the agents of checkpoint name's population into t's
// members, each held to the step count the population file gives it.
func (t *Trainer) loadMembers(root, name string, pop population) error {
	ckpt := filepath.Join(root, name)
	popPath := filepath.Join(ckpt, populationFile)
	for _, mj := range pop.Members {
		path := filepath.Join(ckpt, mj.File)
		a, err := agent.Load(path)
		if err != nil {
			return badInput(fmt.Errorf("resume: %w%s", err, olderCheckpointHint(root, name, t.cfg, t.digest)))
		}
		if a.Steps != mj.Steps {
			return badInput(fmt.Errorf("resume: %s holds %d steps, %s says %d%s", path, a.Steps, popPath, mj.Steps,
				olderCheckpointHint(root, name, t.cfg, t.digest)))
		}
		if !a.Env.Known() { // written before agent files recorded their env
			a.Env = t.cfg.envRef()
			// (and perhaps before MinAtar's "-v1" ids named the minimal set)
			a.Env.ID = envs.LegacyMinAtarID(a.Env.ID, a.Env.Options, a.ActionSpace())
		}
		fit := make([]float64, len(mj.Fitness))
		for i, f := range mj.Fitness {
			fit[i] = float64(f)
		}
		t.members = append(t.members, &Member{Index: mj.Index, Parent: mj.Parent, Mutation: mj.Mutation, Fitness: fit,
			Returns: mj.Returns, Agent: a, genSteps: mj.GenSteps, idle: mj.Idle})
	}
	return nil
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
		case m.GenSteps < 0 || m.GenSteps > m.Steps || m.Idle && m.GenSteps > 0:
			return population{}, fmt.Errorf("member %d: gen_steps %d (idle %v) out of range for %d steps", m.Index, m.GenSteps, m.Idle, m.Steps)
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
	return checkPB2Obs(p.PB2, cfg, gen)
}

// checkPB2Obs checks PB2's observations in a checkpoint of generation gen:
// one value per mutable hyperparameter, all finite, none from a later
// generation, at most pb2MaxObs of them.
func checkPB2Obs(obs []pb2Obs, cfg Config, gen int) error {
	if len(obs) > pb2MaxObs {
		return fmt.Errorf("pb2: %d observations, more than the %d kept", len(obs), pb2MaxObs)
	}
	d := len(cfg.mutableHPs())
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	for i, o := range obs {
		ok := len(o.HP) == d && finite(o.Y) && o.Gen >= 1 && o.Gen <= gen
		for _, v := range o.HP {
			ok = ok && finite(v)
		}
		if !ok {
			return fmt.Errorf("pb2 observation %d: want generation 1–%d, %d finite hyperparameters and a finite y, got %+v", i, gen, d, o)
		}
	}
	return nil
}

package evo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/internal/atomicfile"
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
	return ResumeContext(context.Background(), dir, opts)
}

// ResumeContext is Resume with a context: once ctx is done, the env it
// builds to check the run's config (a gym: env's Python child, which may
// take long to start) is stopped, and it fails with an error matching
// envs.ErrInterrupted. Run takes its own context.
func ResumeContext(ctx context.Context, dir string, opts Options) (*Trainer, error) {
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
		if entries, _ := os.ReadDir(dir); slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return isConfigTemp(e.Name()) }) {
			return nil, badInput(fmt.Errorf("resume %s: the run was stopped while it wrote its config.toml, before anything was trained: start it again (evolve -config CONFIG -out %s)", dir, dir))
		}
		if st, err := os.Stat(filepath.Join(dir, "checkpoints")); err == nil && st.IsDir() {
			return nil, badInput(fmt.Errorf("resume %s: its config.toml is gone, but its checkpoints/ are here: %s", dir, configRestoreHint))
		}
		return nil, badInput(fmt.Errorf("resume %s: not a run directory (no config.toml; a run directory holds config.toml and checkpoints/)", dir))
	}
	if b, err := os.ReadFile(filepath.Join(dir, "config.toml")); err == nil && settingless(b) {
		return nil, badInput(fmt.Errorf("resume %s: its config.toml is empty (no settings, only blanks or comments): %s", dir, configRestoreHint))
	}
	cfg, err := LoadConfigContext(ctx, filepath.Join(dir, "config.toml"))
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
		return t.restart(ctx)
	}
	t, err = t.resume()
	if err != nil {
		return nil, err
	}
	return t, nil
}

// configRestoreHint says how to get back the config.toml of a run whose
// file is gone or empty: the checkpoints keep it, without the stopping
// rules (resume takes those from its flags or the defaults).
const configRestoreHint = `put back the run's config.toml (each checkpoint keeps a copy in the "config" field of ` +
	`checkpoints/gen-NNNNNN/population.json, with population.max_steps and target zeroed: write those back), ` +
	`or start a new run`

// settingless reports whether a config file sets nothing: blank, or
// comments alone. A run never writes one; read as a config it is every
// default, and a resume would list every key of the run as changed.
func settingless(b []byte) bool {
	if len(bytes.TrimSpace(b)) == 0 {
		return true
	}
	var m map[string]any
	md, err := toml.Decode(string(b), &m)
	return err == nil && len(md.Keys()) == 0
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
func (t *Trainer) restart(ctx context.Context) (*Trainer, error) {
	err := os.RemoveAll(filepath.Join(t.dir, "checkpoints"))
	t.release()
	if err != nil {
		return nil, fmt.Errorf("resume %s: the run stopped before its first checkpoint; removing what it left: %w", t.dir, err)
	}
	t.log.Warn("the run stopped before its first checkpoint was whole: starting it again from config.toml", "dir", t.dir)
	return newRun(ctx, t.cfg, t.opts, true)
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
	if pop.EliteFile != nil {
		t.eliteCopy = filepath.Join(ckpt, pop.EliteFile.File)
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
// an elite but holds no copy of it (an earlier build's) before the run
// trains on. A damaged file is refused (it failed the first checkpoint
// after a generation of training, and each retry trained that generation
// again). A missing one is noted (eliteMissing); Run decides what that
// means (forgetElite). With a copy, Run puts it back (restoreElite).
func (t *Trainer) checkEliteFile() error {
	if t.bestIndex < 0 || t.eliteCopy != "" {
		return nil
	}
	path := filepath.Join(t.dir, eliteFile)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		t.eliteMissing = true
		return nil
	}
	if _, err := agent.Load(path); err != nil {
		return badInput(fmt.Errorf("resume: %w: put a whole copy of it back, or remove it to resume without that elite", err))
	}
	return nil
}

// restoreElite makes the run directory's elite file the checkpoint's copy
// (with the budget's horizon, see eliteFollowsBudget) where it differs: a
// generation after the checkpoint saved another before the stop, or the
// file was damaged or removed. Only then is it written.
func (t *Trainer) restoreElite() error {
	if t.eliteCopy == "" {
		return nil
	}
	a, err := agent.Load(t.eliteCopy) // verified with the checkpoint: an error is damage since
	if err != nil {
		return badInput(fmt.Errorf("resume: %w", err))
	}
	a.TotalSteps = agentHorizon(t.cfg.Population)
	want, err := a.Encode()
	if err != nil {
		return err
	}
	path := filepath.Join(t.dir, eliteFile)
	have, err := os.ReadFile(path)
	why := "missing"
	switch {
	case err == nil:
		b, derr := agent.Decode(have)
		if derr != nil {
			why = "damaged"
			break
		}
		// The same agent under another budget's horizon (new stop rules)
		// is the elite: eliteFollowsBudget gives it the horizon with the
		// next checkpoint, as before.
		b.TotalSteps = a.TotalSteps
		if same, err := b.Encode(); err == nil && bytes.Equal(same, want) {
			return nil
		}
		why = "another agent's file (saved by a generation after the checkpoint, or altered)"
	case !errors.Is(err, fs.ErrNotExist):
		why = "unreadable (" + pathErr(err).Error() + ")"
	}
	if err := atomicfile.WriteBytes(path, want); err != nil {
		return fmt.Errorf("resume: put back the checkpoint's elite: %w", err)
	}
	t.log.Warn(eliteFile+" was "+why+": put back the elite of the checkpoint resumed from",
		"checkpoint", t.eliteCopy, "generation", t.elite.Generation, "agent", t.bestIndex)
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

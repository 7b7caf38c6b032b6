package evo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// errConfigChanged marks a checkpoint refused because the run's config no
// longer matches it, which no other checkpoint of the run would either.
var errConfigChanged = errors.New("the config was changed after the checkpoint (only out_dir, workers, target and max_steps may change, max_steps not with anneal_lr, and a gym: env's python, timeout and start_timeout)")

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
	files := p.Members
	if e := p.EliteFile; e != nil {
		files = append(slices.Clip(files), memberJSON{File: e.File, Size: e.Size, SHA256: e.SHA256})
	}
	for _, m := range files {
		listed[m.File] = true
	}
	for _, e := range entries {
		if !listed[e.Name()] {
			return population{}, fmt.Errorf("%s: not part of the checkpoint (it holds %s, %s and the agent files listed there, nothing else)",
				at(e.Name()), populationFile, populationSumFile)
		}
	}
	for _, m := range files {
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
	if p.Config != "" && tomlDigest([]byte(p.Config)) != p.ConfigDigest {
		return population{}, fmt.Errorf("config: does not hash to config_digest %.80s", p.ConfigDigest)
	}
	if e := p.EliteFile; e != nil {
		switch {
		case e.File != eliteFile:
			return population{}, fmt.Errorf("elite_file: file %.60q, want %s", e.File, eliteFile)
		case e.Size < 0 || !sha256Hex.MatchString(e.SHA256):
			return population{}, fmt.Errorf("elite_file: size %d and sha256 %.70q: want a size and 64 lower-case hex digits", e.Size, e.SHA256)
		case p.BestIndex < 0:
			return population{}, errors.New("elite_file without an elite (best_index -1)")
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
	legacy, err := cfg.legacyGenerationsTOML() // before gymRuntimeOptions were left out
	if err != nil {
		return err
	}
	switch {
	case p.ConfigDigest != digest && p.ConfigDigest != full && p.ConfigDigest != tomlDigest(legacy):
		return configChangedError(p, cfg, digest)
	case len(p.Members) != cfg.Population.Size:
		return fmt.Errorf("%d members, population.size is %d: %w", len(p.Members), cfg.Population.Size, errConfigChanged)
	case p.Generation != gen:
		return fmt.Errorf("generation %d in a checkpoint of generation %d (gen-%06d)", p.Generation, gen, gen)
	}
	return checkPB2Obs(p.PB2, cfg, gen)
}

// configChangedError is the error for a checkpoint whose config digest
// is not config.toml's: it names the keys that changed where the
// checkpoint keeps its config, else both digests.
func configChangedError(p population, cfg Config, digest string) error {
	if p.Config != "" {
		now, err := cfg.generationsTOML()
		if err != nil {
			return err
		}
		ch, err := tomlChanges([]byte(p.Config), now)
		// A checkpoint from before gymRuntimeOptions were left out
		// records them; they are not what changed.
		ch = slices.DeleteFunc(ch, func(c ConfigChange) bool {
			key, ok := strings.CutPrefix(c.Key, "env.options.")
			return ok && slices.Contains(gymRuntimeOptions, key)
		})
		if err == nil && len(ch) > 0 {
			show := func(c ConfigChange) string { return fmt.Sprintf("%s = %s (the checkpoint's: %s)", c.Key, c.Now, c.Was) }
			return fmt.Errorf("config.toml sets %s: %w; to resume, write the checkpoint's values back, "+
				"or train the changed config as a new run (evolve -config FILE -out NEW_DIR)", listChanges(ch, show), errConfigChanged)
		}
	}
	return fmt.Errorf("config digest %.80s differs from config.toml's %s: %w", p.ConfigDigest, digest, errConfigChanged)
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

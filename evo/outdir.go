package evo

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/evolverl/evolve/internal/readcap"
	"github.com/evolverl/evolve/internal/realpath"
)

// HoldsRun reports whether dir holds a run: a checkpoints directory beside
// a config.toml that a run wrote (one of its own, or any with a
// [population] table, as older builds wrote them) — not just any project
// with a checkpoints folder, as PyTorch projects often have.
func HoldsRun(dir string) bool {
	if fi, err := os.Stat(filepath.Join(dir, "checkpoints")); err != nil || !fi.IsDir() {
		return false
	}
	b, err := readcap.File(filepath.Join(dir, "config.toml"), MaxConfigBytes)
	return err == nil && (bytes.HasPrefix(b, []byte(resolvedHeader)) || bytes.Contains(b, []byte("[population]")))
}

// FreeOutDir returns dir if a new run can go there (CheckNewOutDir), else
// the first of dir_2, dir_3, … that can, as rl-baselines3-zoo numbers its
// logs: a config's out_dir run twice gives a second run beside the first.
//
// Where no numbered directory can help — dir lies inside a run, or is "."
// or ".." — or none of the first 10,000 is free, it returns dir itself, for
// New to refuse with CheckNewOutDir's reason.
func FreeOutDir(dir string) string {
	if CheckNewOutDir(dir) == nil {
		return dir
	}
	clean := filepath.Clean(dir)
	if base := filepath.Base(clean); base == "." || base == ".." || insideRun(clean) != "" || realpath.Ambiguous(dir) {
		return dir
	}
	if fi, err := os.Stat(filepath.Dir(clean)); err == nil && !fi.IsDir() {
		return dir // below a file no numbered sibling helps either
	}
	for i := 2; i <= 10_000; i++ {
		if d := fmt.Sprintf("%s_%d", clean, i); CheckNewOutDir(d) == nil {
			return d
		}
	}
	return dir
}

// insideRun returns the run directory above dir, or "" when none is; links
// are followed, so that a link into a run counts as inside it.
func insideRun(dir string) string {
	for p := filepath.Dir(realpath.Of(dir)); ; p = filepath.Dir(p) {
		if HoldsRun(p) {
			return p
		}
		if filepath.Dir(p) == p {
			return ""
		}
	}
}

// CheckNewOutDir reports whether a new run may be written to dir without
// overwriting anything: dir must not exist or be an empty directory, and no
// directory above it may hold a run. A directory holding a run, or files
// of any kind (a run stopped before its first checkpoint, a user's own
// files), is refused rather than written over; so is a dangling symbolic
// link. Its errors name the path and match ErrBadInput; whether dir can be
// created and written is CheckOutDir's question.
func CheckNewOutDir(dir string) error {
	if dir == "" {
		return badInput(errors.New("empty directory name"))
	}
	if realpath.Ambiguous(dir) {
		return badInput(fmt.Errorf("%s: a \"..\" after a symbolic link names %s, where the path read as written names %s: give the directory without it",
			dir, realpath.Of(dir), realpath.Of(filepath.Clean(dir))))
	}
	if HoldsRun(dir) {
		return badInput(fmt.Errorf("%s already holds a run: continue it with -resume %s (Resume), or choose another directory", dir, dir))
	}
	switch fi, err := os.Lstat(dir); {
	case err == nil && fi.Mode()&fs.ModeSymlink != 0:
		if _, err := os.Stat(dir); err != nil {
			return badInput(fmt.Errorf("%s is a symbolic link to a path that does not exist", dir))
		}
	}
	entries, err := os.ReadDir(dir)
	// A lone run lock, with the temporary of the config.toml it was
	// writing (a run killed before it wrote anything else), and the
	// writability probe of a process starting beside this one are nothing
	// to keep: the lock itself refuses a directory a live run holds.
	entries = slices.DeleteFunc(entries, func(e fs.DirEntry) bool {
		return e.Name() == lockFile || strings.HasPrefix(e.Name(), ".evolve-probe-") || isConfigTemp(e.Name())
	})
	switch {
	case err == nil && len(entries) > 0:
		names := make([]string, 0, 4)
		for _, e := range entries[:min(3, len(entries))] {
			names = append(names, e.Name())
		}
		if len(entries) > 3 {
			names = append(names, "…")
		}
		hint := "a new run needs a new or empty directory"
		if _, err := os.Stat(filepath.Join(dir, "config.toml")); err == nil {
			hint += " (a run stopped before its first checkpoint is started again by -resume " + dir + ")"
		}
		return badInput(fmt.Errorf("%s is not empty (%s): %s", dir, strings.Join(names, ", "), hint))
	case errors.Is(err, syscall.ENOTDIR):
		// dir, or a directory it would be made in, is a file.
		for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
			if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
				return badInput(fmt.Errorf("%s is a file, not a directory", p))
			}
			if p == filepath.Dir(p) {
				break
			}
		}
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return badInput(fmt.Errorf("%s: %w", dir, pathErr(err)))
	}
	if run := insideRun(dir); run != "" {
		return badInput(fmt.Errorf("%s lies inside the run directory %s: a run there would mix with that run's files", dir, run))
	}
	return nil
}

// isConfigTemp reports whether name is a temporary file through which
// config.toml is written (atomicfile's name for it).
func isConfigTemp(name string) bool { return strings.HasPrefix(name, ".config.toml.tmp-") }

// removeConfigTemps removes from dir the temporaries of a config.toml a
// stopped run was writing, which no one reads.
func removeConfigTemps(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if isConfigTemp(e.Name()) && e.Type().IsRegular() {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
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

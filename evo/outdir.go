package evo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

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

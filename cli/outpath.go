package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/evolverl/evolve/evo"
	"github.com/evolverl/evolve/internal/realpath"
)

// checkpointHolding returns the run directory whose checkpoints directory
// path is or lies in, or "": a file written there (a chart, a GIF, a dataset)
// would make that checkpoint fail its verification on the next -resume.
func checkpointHolding(path string) string {
	// Links followed: a link into a run's checkpoints leads there too.
	for p := realpath.Of(path); filepath.Dir(p) != p; p = filepath.Dir(p) {
		if filepath.Base(p) == "checkpoints" && evo.HoldsRun(filepath.Dir(p)) {
			return filepath.Dir(p)
		}
	}
	return ""
}

// outsideCheckpoints returns "" when output path flag may be written, else
// what is wrong with it.
func outsideCheckpoints(flag, path string) string {
	if run := checkpointHolding(path); run != "" {
		return fmt.Sprintf("%s %s: inside the checkpoints of the run %s, which must hold nothing else (a resume verifies them); write it elsewhere", flag, path, run)
	}
	return ""
}

// isRunDir reports whether dir is a directory with a run's config.toml.
func isRunDir(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, "config.toml"))
	return err == nil && fi.Mode().IsRegular()
}

// dirExists reports whether dir is a directory.
func dirExists(dir string) bool {
	fi, err := os.Stat(dir)
	return err == nil && fi.IsDir()
}

// outDirError is the message for an output directory flag whose directory
// cannot be made: the flag, the directory unless the error names it already
// ("-report X is a file, not a directory"), and why
// ("-o /proc/x: cannot create a directory in /proc").
func outDirError(flag, dir string, err error) string {
	if strings.Contains(err.Error(), filepath.Clean(dir)) {
		return fmt.Sprintf("%s %v", flag, err)
	}
	return fmt.Sprintf("%s %s: %v", flag, dir, err)
}

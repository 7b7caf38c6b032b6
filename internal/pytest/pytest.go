// Package pytest finds a Python interpreter with Gymnasium for the tests
// that hold evolve against it, and skips them, saying why, where there is
// none.
package pytest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// GymnasiumSrcEnv names the environment variable that may point at a
// directory to put on PYTHONPATH for Gymnasium (a source snapshot's package
// directory), for machines where it is not installed.
const GymnasiumSrcEnv = "EVOLVE_GYMNASIUM_SRC"

// snapshotGlob is where the PyTorch peers' setup (../shared/peers) unpacks
// Gymnasium's source on the development machine.
const snapshotGlob = "/opt/peers/src/gymnasium-*"

// Gymnasium returns an interpreter that imports gymnasium and numpy, and
// sets PYTHONPATH for the test when that needs a source snapshot. It tries
// python3 and /usr/bin/python3, each with the PYTHONPATH it was given and
// then with $EVOLVE_GYMNASIUM_SRC or a snapshot under /opt/peers/src; the
// test is skipped when none works.
func Gymnasium(t testing.TB) string {
	t.Helper()
	paths := []string{os.Getenv("PYTHONPATH")}
	if src := os.Getenv(GymnasiumSrcEnv); src != "" {
		paths = append(paths, src)
	}
	snaps, _ := filepath.Glob(snapshotGlob)
	paths = append(paths, snaps...)
	var tried []string
	for _, python := range []string{"python3", "/usr/bin/python3"} {
		path, err := exec.LookPath(python)
		if err != nil {
			continue
		}
		for _, pp := range paths {
			cmd := exec.Command(path, "-c", "import gymnasium, numpy")
			cmd.Env = append(os.Environ(), "PYTHONPATH="+pp)
			if cmd.Run() == nil {
				t.Setenv("PYTHONPATH", pp)
				return path
			}
			tried = append(tried, path+" with PYTHONPATH="+pp)
		}
	}
	t.Skipf("no Python that imports gymnasium and numpy (tried %s); install gymnasium or set %s to its source directory",
		strings.Join(tried, ", "), GymnasiumSrcEnv)
	return ""
}

// StdlibEnvs skips the test when there is no python3 on PATH, and otherwise
// puts dir — envs/testdata/gymtest, relative to the test's package: the
// Gymnasium-like envs written for the tests with the standard library only
// — on PYTHONPATH, so that "module_env" can name them.
func StdlibEnvs(t testing.TB, dir string) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not on PATH: skipping the Python bridge's tests")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PYTHONPATH", abs)
}

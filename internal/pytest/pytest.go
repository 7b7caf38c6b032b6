// Package pytest finds a Python interpreter with Gymnasium (and, for the
// MinAtar and POPGym tests, the original MinAtar or POPGym) for the tests
// that hold evolve against them, and skips them, saying why, where there is
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

// MinAtarSrcEnv names the environment variable that may point at a
// directory to put on PYTHONPATH for MinAtar (kenjyoung/MinAtar's source:
// the directory that holds the package minatar), for machines where it is
// not installed.
const MinAtarSrcEnv = "EVOLVE_MINATAR_SRC"

// POPGymSrcEnv names the environment variable that may point at a
// directory to put on PYTHONPATH for POPGym (proroklab/popgym's source: the
// directory that holds the package popgym), for machines where it is not
// installed.
const POPGymSrcEnv = "EVOLVE_POPGYM_SRC"

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
	python, tried := find(t, "import gymnasium, numpy", gymnasiumPaths())
	if python == "" {
		t.Skipf("no Python that imports gymnasium and numpy (tried %s); install gymnasium or set %s to its source directory",
			strings.Join(tried, ", "), GymnasiumSrcEnv)
	}
	return python
}

// MinAtar returns an interpreter that imports gymnasium, numpy and the
// original MinAtar's Gymnasium module (minatar.gym), and sets PYTHONPATH
// for the test: Gymnasium's paths as for Gymnasium, each also with
// $EVOLVE_MINATAR_SRC in front when it is set. The test is skipped, saying
// how to run it, when none works.
func MinAtar(t testing.TB) string {
	t.Helper()
	python, tried := find(t, "import gymnasium, numpy, minatar.gym", withSource(os.Getenv(MinAtarSrcEnv)))
	if python == "" {
		t.Skipf("no Python that imports gymnasium, numpy and MinAtar (tried %s); to run this test against the original MinAtar, "+
			"set %s to the directory holding MinAtar's package minatar (kenjyoung/MinAtar) and have gymnasium and numpy (or %s)",
			strings.Join(tried, ", "), MinAtarSrcEnv, GymnasiumSrcEnv)
	}
	return python
}

// POPGym returns an interpreter that imports gymnasium, numpy and POPGym
// (whose package registers its popgym-* ids with Gymnasium), and sets
// PYTHONPATH for the test: Gymnasium's paths as for Gymnasium, each also
// with $EVOLVE_POPGYM_SRC in front when it is set. The test is skipped,
// saying how to run it, when none works.
func POPGym(t testing.TB) string {
	t.Helper()
	python, tried := find(t, "import gymnasium, numpy, popgym", withSource(os.Getenv(POPGymSrcEnv)))
	if python == "" {
		t.Skipf("no Python that imports gymnasium, numpy and POPGym (tried %s); to run this test against the original POPGym, "+
			"set %s to the directory holding POPGym's package popgym (proroklab/popgym) and have gymnasium and numpy (or %s)",
			strings.Join(tried, ", "), POPGymSrcEnv, GymnasiumSrcEnv)
	}
	return python
}

// withSource lists Gymnasium's paths, each followed by itself with src in
// front when src is set.
func withSource(src string) []string {
	var paths []string
	for _, p := range gymnasiumPaths() {
		paths = append(paths, p)
		if src != "" {
			paths = append(paths, joinPath(src, p))
		}
	}
	return paths
}

// NumPy returns an interpreter on which `import numpy` works, keeping the
// test's PYTHONPATH, or skips the test.
func NumPy(t testing.TB) string {
	t.Helper()
	python, tried := find(t, "import numpy", []string{os.Getenv("PYTHONPATH")})
	if python == "" {
		t.Skipf("no Python that imports numpy (tried %s)", strings.Join(tried, ", "))
	}
	return python
}

// gymnasiumPaths lists the PYTHONPATHs to try for Gymnasium: the one the
// test was given, $EVOLVE_GYMNASIUM_SRC, then the snapshots.
func gymnasiumPaths() []string {
	paths := []string{os.Getenv("PYTHONPATH")}
	if src := os.Getenv(GymnasiumSrcEnv); src != "" {
		paths = append(paths, src)
	}
	snaps, _ := filepath.Glob(snapshotGlob)
	return append(paths, snaps...)
}

// joinPath joins two PYTHONPATHs, either of which may be empty.
func joinPath(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + string(os.PathListSeparator) + b
}

// find returns the first of python3 and /usr/bin/python3 that runs code
// with one of the PYTHONPATHs, having set that PYTHONPATH for the test,
// or "" and what it tried.
func find(t testing.TB, code string, paths []string) (python string, tried []string) {
	for _, name := range []string{"python3", "/usr/bin/python3"} {
		path, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		for _, pp := range paths {
			cmd := exec.Command(path, "-c", code)
			cmd.Env = append(os.Environ(), "PYTHONPATH="+pp)
			if cmd.Run() == nil {
				t.Setenv("PYTHONPATH", pp)
				return path, nil
			}
			tried = append(tried, path+" with PYTHONPATH="+pp)
		}
	}
	return "", tried
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

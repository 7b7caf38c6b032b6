// Package realpath resolves a path as the operating system does: symbolic
// links, and a ".." after one, which names the link target's parent.
// filepath.Clean resolves ".." lexically, so that "link/../x" cleaned and
// "link/../x" opened can be two different directories.
package realpath

import (
	"os"
	"path/filepath"
	"strings"
)

// Of returns the absolute path p names on this machine: the longest prefix
// of its components that exists, with its links and ".." resolved by
// filepath.EvalSymlinks (which resolves a ".." after a link physically),
// and the rest of p, which does not exist yet, cleaned onto it.
func Of(p string) string {
	abs := p
	if !filepath.IsAbs(p) {
		wd, err := os.Getwd()
		if err != nil {
			return filepath.Clean(p)
		}
		abs = wd + string(filepath.Separator) + p // not Join: it would clean ".." away
	}
	sep := string(filepath.Separator)
	parts := strings.Split(abs, sep)
	for i := len(parts); i > 0; i-- {
		prefix := strings.Join(parts[:i], sep)
		if prefix == "" || prefix == filepath.VolumeName(abs) {
			prefix += sep // the root ("C:" alone is a drive's current directory)
		}
		if real, err := filepath.EvalSymlinks(prefix); err == nil {
			return filepath.Join(append([]string{real}, parts[i:]...)...)
		}
	}
	return filepath.Clean(abs)
}

// Ambiguous reports whether p names another directory than its lexically
// cleaned form does: a ".." after a symbolic link.
func Ambiguous(p string) bool { return Of(p) != Of(filepath.Clean(p)) }

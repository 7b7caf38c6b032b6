// Package atomicfile writes files so that readers see the old content or
// the new, never a part: agent files, checkpoints, metrics and summaries all
// go through it.
package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
)

// Write writes path through a temporary file in the same directory:
// write, fsync, rename over path, fsync the directory. On any error the
// temporary file is removed and path is left as it was.
func Write(path string, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	// CreateTemp makes the file 0600; the result gets the mode a file
	// replaced had, else 0644 (what os.Create gives under the usual umask),
	// so that datasets and agent files can be shared as other files are.
	mode := os.FileMode(0o644)
	if st, serr := os.Stat(path); serr == nil && st.Mode().IsRegular() {
		mode = st.Mode().Perm()
	}
	if err = tmp.Chmod(mode); err != nil {
		return err
	}
	if err = write(tmp); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return SyncDir(dir)
}

// WriteBytes is Write for data already in memory.
func WriteBytes(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// SyncDir fsyncs a directory, making renames and new entries in it
// durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

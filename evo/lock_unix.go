//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package evo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockRunDir takes the exclusive lock of the run in dir (an flock on
// dir/.lock, which the kernel drops when the process ends, however it
// ends), so that two processes never write one run. A lock held elsewhere
// is an error naming the holder's pid; a file system without flock gives
// no protection and no error.
//
// Taking the lock writes nothing: the file keeps the pid of the last
// process that trained the run until claim writes this one's, which Run
// does only once the run's checks have passed. A refused resume thus leaves
// the directory as it was; a .lock file that did not exist before is
// removed again by release when claim was never called.
func lockRunDir(dir string) (*runLock, error) {
	path := filepath.Join(dir, lockFile)
	created := false
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err == nil {
		created = true
	} else if errors.Is(err, os.ErrExist) {
		f, err = os.OpenFile(path, os.O_RDWR, 0)
	}
	if errors.Is(err, syscall.EISDIR) {
		return nil, badInput(fmt.Errorf("lock %s: a directory, where the run keeps its lock file", path))
	}
	if errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM) {
		return nil, badInput(fmt.Errorf("lock %s: the run directory cannot be written (%w)", path, pathErr(err)))
	}
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	switch err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); {
	case errors.Is(err, syscall.EWOULDBLOCK):
		b := make([]byte, 32)
		n, _ := f.ReadAt(b, 0)
		f.Close()
		holder := "another process"
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n]))); err == nil && pid > 0 {
			holder = fmt.Sprintf("process %d", pid)
		}
		return nil, badInput(fmt.Errorf("%w: %s is being trained by %s (it holds %s); wait for it to end or stop it first", ErrRunInUse, dir, holder, path))
	case err != nil:
		// No flock here: no protection, but the pid is still recorded.
		return &runLock{f: f, path: path, created: created}, nil
	}
	return &runLock{f: f, path: path, created: created}, nil
}

// runLock is a held run-directory lock.
type runLock struct {
	f       *os.File
	path    string
	created bool // the file did not exist before lockRunDir
	claimed bool // claim wrote this process's pid
}

// claim writes this process's pid into the lock file, for the error a
// second process gets and for docs/run-directory.md's "the last process that trained
// the run". Done once per lock.
func (l *runLock) claim() {
	if l.claimed {
		return
	}
	l.claimed = true
	if err := l.f.Truncate(0); err == nil {
		l.f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
}

// release lets go of the lock, removing the file if this lock made it and
// never claimed it (nothing was trained).
func (l *runLock) release() {
	if l.created && !l.claimed {
		os.Remove(l.path)
	}
	l.f.Close()
}

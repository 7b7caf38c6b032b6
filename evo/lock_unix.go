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
// no protection and no error. unlock releases the lock.
func lockRunDir(dir string) (unlock func(), err error) {
	path := filepath.Join(dir, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
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
		f.Close()
		return func() {}, nil
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() { f.Close() }, nil
}

//go:build windows

package envs

import "syscall"

// rawRead reads from the child's pipe; Windows pipes are not in
// non-blocking mode, so it waits for data and never returns EAGAIN.
func rawRead(fd uintptr, b []byte) (int, error) { return syscall.Read(syscall.Handle(fd), b) }

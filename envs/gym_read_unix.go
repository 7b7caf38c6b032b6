//go:build unix

package envs

import "syscall"

// rawRead reads from the child's pipe without blocking (the pipe is in
// non-blocking mode under the runtime's poller): syscall.EAGAIN means no
// data yet.
func rawRead(fd uintptr, b []byte) (int, error) { return syscall.Read(int(fd), b) }

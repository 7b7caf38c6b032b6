//go:build !linux

package envs

import (
	"runtime"
	"syscall"
)

// childProcAttr has nothing to add where the kernel cannot kill a child
// with its parent: a child there exits when its stdin closes.
func childProcAttr() *syscall.SysProcAttr { return nil }

// yield lets other goroutines run while a read polls for the child's
// answer.
func yield() { runtime.Gosched() }

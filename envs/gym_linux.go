package envs

import "syscall"

// childProcAttr makes the kernel kill a gym child when the thread that
// started it ends — in practice when the parent process dies, even by
// SIGKILL, so that no Python child outlives evolve.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// yield gives the CPU to another runnable thread, if any, while a read
// polls for the child's answer.
func yield() { syscall.Syscall(syscall.SYS_SCHED_YIELD, 0, 0, 0) }

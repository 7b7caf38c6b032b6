//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package evo

// lockRunDir does nothing where flock does not exist: two processes on one
// run are not prevented there.
func lockRunDir(dir string) (*runLock, error) { return &runLock{}, nil }

// runLock is a lock that holds nothing.
type runLock struct{}

func (*runLock) claim()   {}
func (*runLock) release() {}

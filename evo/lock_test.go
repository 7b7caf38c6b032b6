//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package evo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunDirIsLocked: while a run trains, neither a resume nor a new run of
// the same directory can start (the error names this process); a failed
// resume lets go of the lock without writing it, and once the run has
// ended it resumes.
func TestRunDirIsLocked(t *testing.T) {
	cfg := tiny(t)
	inGen := make(chan struct{})
	proceed := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tr, err := New(cfg, Options{OnGeneration: func(r GenerationReport) {
		if r.Generation == 1 {
			close(inGen)
			<-proceed
			cancel()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	// A second new run of the same directory, made before the first wrote
	// anything, passes New's check; its Run must still refuse.
	second, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() {
		_, err := tr.Run(ctx)
		done <- err
	}()
	<-inGen

	_, err = Resume(cfg.OutDir, Options{})
	pid := fmt.Sprintf("process %d", os.Getpid())
	if !errors.Is(err, ErrRunInUse) || !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), pid) {
		t.Errorf("Resume of a running run: %v; want ErrRunInUse naming %s", err, pid)
	}
	if _, err := second.Run(context.Background()); !errors.Is(err, ErrRunInUse) {
		t.Errorf("a second new run in the same directory: %v; want ErrRunInUse", err)
	}

	close(proceed)
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("first run: %v", err)
	}
	// A Resume that fails after taking the lock lets go of it, and leaves
	// .lock naming the last process that trained the run (another's pid
	// here), or absent if it was.
	lockPath := filepath.Join(cfg.OutDir, lockFile)
	if got, err := os.ReadFile(lockPath); err != nil || string(got) != fmt.Sprintln(os.Getpid()) {
		t.Errorf(".lock after training: %q, %v; want this process's pid", got, err)
	}
	const foreign = "999999999\n"
	if err := os.WriteFile(lockPath, []byte(foreign), 0o644); err != nil {
		t.Fatal(err)
	}
	// A latest naming no checkpoint makes Resume fail after the lock.
	latest := filepath.Join(cfg.OutDir, "checkpoints", "latest")
	if err := os.Rename(latest, latest+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(latest, []byte("gen-999999\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Resume(cfg.OutDir, Options{}); err == nil || errors.Is(err, ErrRunInUse) {
		t.Fatalf("Resume with a bad checkpoints/latest: %v", err)
	}
	if got, err := os.ReadFile(lockPath); err != nil || string(got) != foreign {
		t.Errorf(".lock after a refused Resume: %q, %v; want %q as before", got, err, foreign)
	}
	if err := os.Remove(lockPath); err != nil {
		t.Fatal(err)
	}
	if _, err := Resume(cfg.OutDir, Options{}); err == nil {
		t.Fatal("Resume with a bad checkpoints/latest succeeded")
	}
	if _, err := os.Stat(lockPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused Resume left a .lock where there was none: %v", err)
	}
	if err := os.Rename(latest+".away", latest); err != nil {
		t.Fatal(err)
	}
	resumeToTheEnd(t, cfg.OutDir, "after the run ended")
}

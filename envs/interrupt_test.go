package envs

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// TestGymInterruptEndsAHungStep: a gym env or vector whose step hangs
// (the child sleeps 60 s, the timeout is 20 s) returns within a second or
// two of its context's end, with ErrInterrupted, its child gone; later
// calls fail at once.
func TestGymInterruptEndsAHungStep(t *testing.T) {
	hung := func(t *testing.T, step func() error, watched any, pid int) {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		defer InterruptWhenDone(ctx, watched)()
		time.AfterFunc(300*time.Millisecond, cancel)
		start := time.Now()
		err := step()
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("the step returned %v after the start, %v after the cancel", d, d-300*time.Millisecond)
		}
		if !errors.Is(err, ErrInterrupted) {
			t.Errorf("error %v: want ErrInterrupted", err)
		}
		if !processGone(pid) {
			t.Errorf("child %d still exists after the interrupt", pid)
		}
	}
	t.Run("env", func(t *testing.T) {
		env, g := makeGym(t, gymTestOptions(t, "Hangs"))
		env.Reset(0)
		hung(t, func() error { env.Step([]float32{0}); return g.Err() }, env, g.pid())
		if obs, _ := env.Reset(0); obs != nil || !errors.Is(g.Err(), ErrInterrupted) {
			t.Errorf("reset after the interrupt: %v, %v", obs, g.Err())
		}
	})
	t.Run("vector", func(t *testing.T) {
		v, res := resetGymVector(t, 2, gymTestOptions(t, "Hangs"))
		actions := legalActions(res)
		hung(t, func() error { _, err := v.Step(actions); return err }, v, v.gym.cmd.Process.Pid)
	})
}

// TestGymVectorFailureIsBadOutput: an exception, a crash or a hang of a
// vector's gym env is bad env output (the CLI's exit 2), as the same of a
// single env is in evaluation.
func TestGymVectorFailureIsBadOutput(t *testing.T) {
	for _, class := range []string{"Raises", "Crashes", "Hangs"} {
		t.Run(class, func(t *testing.T) {
			opts := gymTestOptions(t, class)
			opts["timeout"] = 1
			v, res := resetGymVector(t, 2, opts)
			if _, err := v.Step(legalActions(res)); !errors.Is(err, ErrBadOutput) {
				t.Errorf("step error %v: want one matching ErrBadOutput", err)
			}
		})
	}
}

// TestInterruptWhenDoneFindsTheInterrupter: under wrappers, the first
// Interrupter is interrupted; an env without one is left alone.
func TestInterruptWhenDoneFindsTheInterrupter(t *testing.T) {
	inner := &interruptible{Env: NewProbe1()}
	wrapped := NewTimeLimit(inner, 10)
	ctx, cancel := context.WithCancel(context.Background())
	defer InterruptWhenDone(ctx, wrapped)()
	defer InterruptWhenDone(ctx, NewProbe1())()
	cancel()
	deadline := time.Now().Add(5 * time.Second)
	for inner.n.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if inner.n.Load() != 1 {
		t.Errorf("the wrapped Interrupter was interrupted %d times, want 1", inner.n.Load())
	}
}

// interruptible is an env that counts its interrupts.
type interruptible struct {
	Env
	n atomic.Int32
}

func (e *interruptible) Interrupt() { e.n.Add(1) }

// TestMakeContextStopsAStartingChild: a gym env whose Python child takes
// 30 s to build it is given up once the context ends, with ErrInterrupted,
// and its child killed; a context already done starts no child.
func TestMakeContextStopsAStartingChild(t *testing.T) {
	opts := gymTestOptions(t, "SlowInit")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	v, err := MakeVectorContext(ctx, "gym:test", 2, opts)
	if err == nil {
		v.Close()
		t.Fatal("MakeVectorContext succeeded")
	}
	if d := time.Since(start); d > 5*time.Second || !errors.Is(err, ErrInterrupted) {
		t.Errorf("after %v: %v; want ErrInterrupted within seconds", d, err)
	}
	if _, err := MakeContext(ctx, "gym:test", opts); !errors.Is(err, ErrInterrupted) {
		t.Errorf("MakeContext with a done context: %v, want ErrInterrupted", err)
	}
}

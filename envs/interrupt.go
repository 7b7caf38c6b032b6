package envs

import (
	"context"
	"errors"
)

// ErrInterrupted is what a call of an env that was interrupted fails with
// (errors.Is): the env is unusable from then on.
var ErrInterrupted = errors.New("interrupted")

// Interrupter is an env whose calls can block for long — a gym: env waits
// for its Python child, for up to its timeout — and that can be made to
// stop waiting. Interrupt makes the call in progress, if any, and every
// later one end soon, with an error or an observation CheckOutput refuses;
// it is called from another goroutine than the env's, once or more.
// Training and evaluation interrupt an env when their context ends
// (InterruptWhenDone), so that a signal stops a run at once however long
// the env's step would take.
type Interrupter interface {
	Interrupt()
}

// InterruptWhenDone interrupts env once ctx is done — env itself, a
// *Vector, or else the first Interrupter under env's wrappers — if it is or
// holds one; stop undoes the arrangement, as context.AfterFunc's does.
func InterruptWhenDone(ctx context.Context, env any) (stop func() bool) {
	in, ok := env.(Interrupter)
	if e, isEnv := env.(Env); !ok && isEnv {
		in, ok = interrupterOf(e)
	}
	if !ok {
		return func() bool { return false }
	}
	return context.AfterFunc(ctx, in.Interrupt)
}

// interrupterOf returns the first Interrupter of e and the envs it wraps.
func interrupterOf(e Env) (Interrupter, bool) {
	for {
		if in, ok := e.(Interrupter); ok {
			return in, true
		}
		w, ok := e.(Wrapper)
		if !ok {
			return nil, false
		}
		e = w.Unwrap()
	}
}

// Interrupt makes the exchange with the env's Python child in progress, if
// any, and every later one fail with ErrInterrupted; the child is killed.
// Every env the child hosts is interrupted.
func (g *GymEnv) Interrupt() { g.h.interrupt() }

// Interrupt interrupts every env of the vector that is or wraps an
// Interrupter: a step in progress then fails soon, and so does
// every later one.
func (v *Vector) Interrupt() {
	if v.gym != nil {
		v.gym.interrupt()
		return
	}
	for _, e := range v.envs {
		if in, ok := interrupterOf(e); ok {
			in.Interrupt()
		}
	}
}

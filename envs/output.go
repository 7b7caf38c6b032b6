package envs

import (
	"errors"
	"fmt"
	"math"
)

// ErrBadOutput is what CheckOutput's errors match (errors.Is): an env
// returned something it must not, which the CLI reports as bad input.
var ErrBadOutput = errors.New("bad env output")

// CheckOutput returns what is wrong with what env returned from call
// ("reset" or "step"), or nil: an observation that is not obsSpace's flat
// size or holds a NaN or an infinity, a reward that is not finite, or an
// action mask that is not the size actSpace takes or leaves some component
// no legal choice (a nil mask is always right). The error names env's own type, under its wrappers, and for a
// gym env whose call failed (a Python exception, a dead child) the cause;
// it matches ErrBadOutput. Training (Vector), evaluation and play all check
// an env's output with it.
func CheckOutput(env Env, obsSpace, actSpace Space, call string, obs []float32, reward float64, info Info) error {
	if err := checkOutput(env, obsSpace, actSpace, call, obs, reward, info); err != nil {
		return fmt.Errorf("%w%w", err, quiet{ErrBadOutput})
	}
	return nil
}

// quiet wraps an error to be matched by errors.Is without adding its text.
type quiet struct{ err error }

func (q quiet) Error() string { return "" }
func (q quiet) Unwrap() error { return q.err }

func checkOutput(env Env, obsSpace, actSpace Space, call string, obs []float32, reward float64, info Info) error {
	inner := Unwrapped(env)
	name := envName{inner} // formatted only for an error: Step allocates nothing
	if size := obsSpace.FlatSize(); len(obs) != size {
		if g, ok := inner.(*GymEnv); ok && g.Err() != nil {
			return fmt.Errorf("env %w", g.Err()) // "gym:<id>: step: …"
		}
		if f, ok := inner.(interface{ Err() error }); ok && f.Err() != nil {
			return fmt.Errorf("env %s %s: %w", name, call, f.Err())
		}
		return fmt.Errorf("env %s %s returned %d observation values, want %d for %v", name, call, len(obs), size, obsSpace)
	}
	for j, x := range obs {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("env %s %s returned observation[%d] = %v", name, call, j, x)
		}
	}
	if math.IsNaN(reward) || math.IsInf(reward, 0) {
		return fmt.Errorf("env %s %s returned reward %v", name, call, reward)
	}
	if info.ActionMask != nil {
		n, maskable := MaskSize(actSpace)
		if !maskable {
			return fmt.Errorf("env %s %s returned an action mask, but %v takes none", name, call, actSpace)
		}
		if len(info.ActionMask) != n {
			return fmt.Errorf("env %s %s returned an action mask of %d entries, want %d for %v", name, call, len(info.ActionMask), n, actSpace)
		}
		if c := maskDeadComponent(actSpace, info.ActionMask); c >= 0 {
			if _, multi := actSpace.(MultiDiscrete); multi {
				return fmt.Errorf("env %s %s returned an action mask that leaves component %d of %v no legal choice", name, call, c, actSpace)
			}
			return fmt.Errorf("env %s %s returned an action mask that leaves no legal action", name, call)
		}
	}
	return nil
}

// envName formats as an env's name in errors: a gym env's id, another
// env's Go type (which says most about an env of one's own).
type envName struct{ env Env }

func (n envName) String() string {
	if g, ok := n.env.(*GymEnv); ok {
		return g.ID()
	}
	return fmt.Sprintf("%T", n.env)
}

package envs

import (
	"fmt"
	"math"
)

// The classic-control environments below reproduce Gymnasium 0.29.1's
// dynamics in float64, in the same order of operations, and draw their
// start states as Gymnasium does, from the same generator (NumPy's PCG64, see
// the package's Seeding), so
// that an episode replayed from the same seed and actions matches the
// original to within rounding (see the golden tests). Observations are the
// float32 rounding of the state, as in Gymnasium.

// physics is implemented by the classic-control envs so that tests can put
// them into a given physics state without exporting their internals.
type physics interface {
	physicsState() []float64
	// setPhysicsState sets the state and returns its observation.
	setPhysicsState([]float64) []float32
}

// discreteAction returns a Discrete(n) action as an int, and panics, naming
// the env, on anything else: like Gymnasium's assertion, an invalid action is
// a bug in the caller.
func discreteAction(id string, action []float32, n int) int {
	if len(action) != 1 || !isIntIn(action[0], 0, n) {
		panic(fmt.Sprintf("envs: %s: action %v is not in Discrete(%d)", id, action, n))
	}
	return int(action[0])
}

// boxAction checks the length of a continuous action.
func boxAction(id string, action []float32, n int) {
	if len(action) != n {
		panic(fmt.Sprintf("envs: %s: action %v has %d values, want %d", id, action, len(action), n))
	}
}

func fill32(dst []float32, src ...float64) []float32 {
	for i, v := range src {
		dst[i] = float32(v)
	}
	return dst
}

func clip(x, lo, hi float64) float64 { return math.Min(math.Max(x, lo), hi) }

func init() {
	mustRegister(Spec{ID: "CartPole-v1", MaxEpisodeSteps: 500,
		Summary: "balance a pole on a cart (Gymnasium 0.29.1)",
		New: func(o Options) (Env, error) {
			return NewCartPole(), o.Only()
		}})
	mustRegister(Spec{ID: "Acrobot-v1", MaxEpisodeSteps: 500,
		Summary: "swing a two-link arm above a line (Gymnasium 0.29.1)",
		New: func(o Options) (Env, error) {
			return NewAcrobot(), o.Only()
		}})
	mustRegister(Spec{ID: "MountainCar-v0", MaxEpisodeSteps: 200,
		Summary: "drive an underpowered car up a hill, discrete (Gymnasium 0.29.1)",
		New: func(o Options) (Env, error) {
			return NewMountainCar(), o.Only()
		}})
	mustRegister(Spec{ID: "MountainCarContinuous-v0", MaxEpisodeSteps: 999,
		Summary: "drive an underpowered car up a hill, continuous (Gymnasium 0.29.1)",
		New: func(o Options) (Env, error) {
			return NewMountainCarContinuous(), o.Only()
		}})
	mustRegister(Spec{ID: "Pendulum-v1", MaxEpisodeSteps: 200,
		Summary: "swing up and hold an inverted pendulum (Gymnasium 0.29.1); option g",
		New: func(o Options) (Env, error) {
			return pendulumFromOptions(o)
		}})
	mustRegister(Spec{ID: "CartPoleNoVel-v1", MaxEpisodeSteps: 500,
		Summary: "CartPole-v1 observing only [x, theta]",
		New: func(o Options) (Env, error) {
			if err := o.Only(); err != nil {
				return nil, err
			}
			return NewMaskVelocity(NewCartPole(), []int{1, 3})
		}})
	mustRegister(Spec{ID: "PendulumNoVel-v1", MaxEpisodeSteps: 200,
		Summary: "Pendulum-v1 observing only [cos, sin]; option g",
		New: func(o Options) (Env, error) {
			p, err := pendulumFromOptions(o)
			if err != nil {
				return nil, err
			}
			return NewMaskVelocity(p, []int{2})
		}})
}

// pendulumFromOptions builds a Pendulum from its one option, gravity "g".
func pendulumFromOptions(o Options) (*Pendulum, error) {
	if err := o.Only("g"); err != nil {
		return nil, err
	}
	g, err := o.Float("g", 10)
	if err != nil {
		return nil, err
	}
	return NewPendulum(g), nil
}

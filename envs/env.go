package envs

import "math/rand/v2"

// NoSeed passed to Reset continues the env's random stream instead of
// re-seeding it.
const NoSeed int64 = -1

// Env is one environment. Implementations are not safe for concurrent use;
// give every goroutine its own.
type Env interface {
	// ObservationSpace describes the observations; it does not change over
	// the env's life.
	ObservationSpace() Space
	// ActionSpace describes the actions Step accepts.
	ActionSpace() Space
	// Reset starts a new episode and returns its first observation. A seed
	// >= 0 re-seeds the env's own random stream first; a negative seed
	// (NoSeed) continues it. The returned slices (obs, info.ActionMask) are
	// owned by the env and valid until its next Reset or Step.
	Reset(seed int64) (obs []float32, info Info)
	// Step applies one action (in the flat form of ActionSpace) and returns
	// the next observation, the reward, whether the episode ended in a
	// terminal state (terminated) or was cut short by a limit outside the
	// task (truncated), and extra information. After either flag is set the
	// caller must Reset before stepping again. Returned slices are owned by
	// the env as with Reset. The built-in envs panic on an action of the
	// wrong length or a discrete choice outside their action space, as
	// Gymnasium's assert, and clip a Box action to its bounds, as
	// Gymnasium's continuous envs do; Vector checks actions and returns an
	// error instead.
	Step(action []float32) (obs []float32, reward float64, terminated, truncated bool, info Info)
}

// Info carries what an env reports besides observation and reward.
type Info struct {
	// ActionMask marks the legal actions for the next step, one entry per
	// choice (MaskSize of the action space); nil means all are legal.
	ActionMask []bool
	// Extra holds free-form values for logging; nil when there are none.
	Extra map[string]any
}

// Wrapper is an Env built around another one.
type Wrapper interface {
	Env
	// Unwrap returns the wrapped env.
	Unwrap() Env
}

// Unwrapped follows Unwrap until it reaches an env that wraps nothing.
func Unwrapped(e Env) Env {
	for {
		w, ok := e.(Wrapper)
		if !ok {
			return e
		}
		e = w.Unwrap()
	}
}

// SubSeed derives the seed of stream i from one seed, so that vector env i,
// or any other numbered stream, gets a seed unrelated to those of
// neighbouring base seeds (seed+i would not be: env 1 of seed 0 would
// replay env 0 of seed 1). The pair (seed, i) is hashed with SplitMix64 and
// the top 32 bits kept, so the result lies in [0, 2³²): a seed that
// Gymnasium, NumPy's legacy RandomState and every built-in env accept, so
// that a built-in env and its "gym:" twin get the same seeds (and, for the
// classic-control envs, the same episodes). Two different pairs share a
// seed with probability 2⁻³².
func SubSeed(seed int64, i int) int64 {
	z := splitmix64(uint64(seed)) ^ splitmix64(uint64(i)+0x632be59bd9b4e019)
	return int64(splitmix64(z) >> 32)
}

// splitmix64 is the finaliser of Steele, Lea and Flood's SplitMix64, a
// bijective mixing of 64 bits.
func splitmix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// stream is an env's own random number generator: NumPy's Generator seeded
// as Gymnasium seeds it (npRandom), so that an env drawing what Gymnasium
// draws, in the same order, starts where Gymnasium's does after
// reset(seed=seed) and continues as its unseeded reset() does. Its zero value
// is ready and behaves as seeded with 0; re-seeding allocates nothing.
type stream struct {
	np npRandom
	// rng draws with math/rand/v2's methods (IntN, Float64, …) from np's
	// 64-bit outputs, for envs that have no Gymnasium original to follow.
	rng *rand.Rand
}

// reset re-seeds the stream when seed >= 0 and returns it for Go's draws.
func (s *stream) reset(seed int64) *rand.Rand {
	s.resetNumPy(seed)
	return s.rng
}

// resetNumPy re-seeds the stream when seed >= 0 and returns it for
// NumPy's draws.
func (s *stream) resetNumPy(seed int64) *npRandom {
	if s.rng == nil {
		s.rng = rand.New(&s.np)
		s.np.Seed(0)
	}
	if seed >= 0 {
		s.np.Seed(uint64(seed))
	}
	return &s.np
}

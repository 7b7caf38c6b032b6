// Package envs holds everything an agent interacts with: observation and action
// spaces, the Env interface, the Vector that steps N environments in lock step,
// wrappers, a registry of environments by id, the built-in environments and an
// env checker for users' own environments.
//
// # Data at the interface
//
// Observations and actions cross the Env interface as flat []float32 slices
// described by a Space. A Discrete choice travels as its value, Start + its
// index (one float32), a MultiDiscrete or MultiBinary action as one float32 per component, a Box as
// its values in row-major order and a Dict as the concatenation of its
// subspaces in key order. Slices returned by an Env are owned by it and stay
// valid until its next Reset or Step; callers that keep them must copy.
//
// # Seeding
//
// Every env owns its random stream. Reset(seed) with seed >= 0 re-seeds that
// stream (as Gymnasium's reset(seed=...) does); Reset(NoSeed) continues it. An
// env that was never seeded behaves as if seeded with 0: nothing here reads the
// clock or a global generator, so the same seeds always give the same episodes.
//
// The stream is the generator Gymnasium gives its envs: NumPy's Generator
// over PCG64, seeded through a SeedSequence of the seed
// (gymnasium.utils.seeding.np_random). The classic-control envs draw what
// Gymnasium's draw, in the same order, so Reset(seed) gives the start state
// of reset(seed=seed) bit for bit, and the NoSeed resets after it those of
// Gymnasium's unseeded reset() calls: an episode of Gymnasium replays here
// from its seed. LunarLander draws as Gymnasium's does too (terrain, initial
// push, wind phases, engine dispersion), though another Box2D port makes
// its physics differ. POPGym's card games shuffle with NumPy's shuffle, so
// they deal what POPGym's envs deal. The other envs, which have no
// Gymnasium original (and the noise of NoisyPositionOnlyCartPole), take
// Go's math/rand/v2 draws from the same bits. Vector seeds env i with
// SubSeed(seed, i), which lies below 2³² as NumPy's legacy RandomState
// requires, so a built-in env and its "gym:" twin get the same seeds.
//
// # Flow of a vectorised step
//
// Vector.Step hands env i its slice of the flat action batch, copies the
// observation back into one [N×obs] batch and, when an episode ends, keeps the
// final observation in FinalObs (for bootstrapping truncated episodes), resets
// the env in the same step and returns the first observation of the new
// episode in its place. Episode returns and lengths of finished episodes are
// reported for logging. A vector step allocates nothing beyond what its envs
// do (LunarLander's Box2D world allocates; the other built-in envs do not).
//
// # Built-in environments
//
// Make builds registered environments by id with their registered time limit:
// Gymnasium 0.29.1's classic control (CartPole-v1, Acrobot-v1, MountainCar-v0,
// MountainCarContinuous-v0, Pendulum-v1) reproduced to float64 precision from
// the same seeded start states, the
// partially observable CartPoleNoVel-v1 and PendulumNoVel-v1, the probe
// environments Probe1-v0 … Probe7-v0 for debugging agents, LunarLander-v3
// and LunarLanderContinuous-v3 (Box2D), bsuite's Catch-v0 (image
// observations) and DeepSea-v0 (exploration), ConnectFour-v0 (action masks) and the five MinAtar games
// MinAtar/Breakout, Asterix, Freeway, SpaceInvaders and Seaquest, each as
// -v0 (the full action set) and -v1 (the minimal set), as MinAtar names
// them ([C, 10, 10] binary images, sticky actions, difficulty ramping; see
// NewMinAtar), and five of POPGym's memory tasks under POPGym's ids, each
// at Easy, Medium and Hard: RepeatPrevious, CountRecall, Autoencode,
// PositionOnlyCartPole and NoisyPositionOnlyCartPole (popgym-<Task><Level>-v0;
// their card games deal, and the noiseless CartPole starts, as POPGym's do
// from the same seed). Register adds
// a user's own environment under a new id.
package envs

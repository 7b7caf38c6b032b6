// Package buffer stores what PPO collects in one rollout and turns it into
// training data. It is pure Go, allocates its storage once and reuses it
// across rollouts.
//
// # Data flow
//
// A Rollout has fixed capacity T steps × N envs. At every step the agent
// takes the next Slot, fills its views (observations, actions, log-probs,
// values, rewards, episode-end flags, action masks and, for recurrent
// agents, the hidden state it fed to the network) and the buffer advances.
// When T steps are in, ComputeGAE (or ComputeReturns) fills advantages and
// returns, treating the two kinds of episode end differently:
//
//   - terminated: the episode reached a terminal state; the value after it
//     is 0;
//   - truncated: a time limit cut the episode; the value after it is the
//     critic's value of the episode's final observation, which the agent
//     stores in the slot's FinalValues (envs.Vector keeps that observation
//     in FinalObs);
//   - the last step of the rollout, if its episode goes on, bootstraps from
//     the value of the next observation.
//
// Training then reads either shuffled flat minibatches (Minibatches, Gather)
// or, for recurrent agents, sequences that never cross an episode end, cut by
// one of three modes (Sequences), each carrying the hidden state of its first
// step and a padding mask (GatherSequences).
//
// Layout: every per-step array is flat and row-major over [T][N][...], so
// step t of env n starts at (t*N+n)*width.
package buffer

// Package agent is the PPO agent: acting, learning, evaluation, cloning,
// architecture mutation, and saving to one safetensors file that Load
// reads back into any Go program (with the gorgonia backend imported, for
// an agent trained on it).
//
// # Data flow
//
// A PPO holds an actor and a critic (netconf specs with their Params; the
// critic may be a second head on the actor's encoder), a Gaussian log-std
// for Box actions, its own Adam over the same slices, an optional running
// observation normaliser, an RNG and counters.
//
//  1. Train binds an envs.Vector and collects learn_step transitions into a
//     buffer.Rollout: observations are normalised (or, for images, scaled
//     by their bounds) and stored as the network saw them; one batched
//     forward pass per vector step gives the action distribution and the
//     value; actions are sampled (masked choices never), Box actions are
//     stored unclipped and sent clipped; agents with memory carry a state
//     per env (an LSTM's or GRU's, or a Transformer's window of the last
//     steps' inputs), zeroed at episode ends and stored with every step.
//     Truncated episodes are bootstrapped from the value of their final
//     observation, then GAE fills advantages and returns.
//  2. Learn runs update_epochs passes over shuffled minibatches (or, for
//     agents with memory, over sequences cut at episode ends and started
//     from their stored state): advantages normalised per minibatch, clipped
//     surrogate, clipped value loss, entropy bonus, one global gradient
//     norm clip over all parameters, Adam with ε = 1e-5 and bias correction.
//     The update replays PyTorch references number for number.
//  3. Act (deterministic or sampled) and Evaluate serve evaluation and
//     deployment; Clone and MutateArchitecture serve evolution; Save and
//     Load round-trip everything needed to act and to continue training
//     bit for bit.
//
// # One loss, two network backends
//
// The networks are computed by an nn.Model from the backend named in
// Config.Backend: the plain-Go one by default (package nn: AVX2/FMA kernels,
// no graph, no allocation per training step; Act allocates the slices it
// returns), or the gorgonia reference backend
// (package nn/gorgonia, which a program makes available by importing it).
// Everything else — the distributions (dist.go), the PPO loss and its
// gradient with respect to the networks' outputs (loss.go), gradient
// clipping and Adam — is written once, here, and the update replays the
// PyTorch references in shared/testdata/ppo on both backends.
//
// Acting and training compute log-probabilities with the same operations,
// so the first ratio of every update is exactly 1. Nothing here reads a
// global RNG or the clock; results are bit-identical for the same seed on
// the same kind of CPU (the vector kernels and the scalar fallback round
// differently, so a machine without AVX2 follows another trajectory).
package agent

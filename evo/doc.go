// Package evo evolves a population of PPO agents: hyperparameter ranges,
// mutations, tournament selection and Population Based Training, the
// parallel trainer, population checkpoints and the run's TOML config.
//
// # A run
//
// LoadConfig reads one TOML file onto DefaultConfig and validates it (all
// of its errors match ErrBadInput). New builds the initial population (agent
// i from the stream (seed, i, generation 0, init)); Resume rebuilds one from
// the newest checkpoint of a run's directory. Run then loops over
// generations until the target, the step budget or a cancelled context:
//
//  1. Train: each member becomes a Task for the run's Pool (Options.Pool;
//     LocalPool by default: its own goroutine, errgroup, at most Workers at
//     once; evo/natsrun sends tasks to other machines) and, in TrainTask,
//     trains evo_steps env steps, rounded up to whole rollouts (under PBT,
//     until its own steps reach the laggard's plus evo_steps: a member that
//     a long rollout carried past that waits, idle, and PBT ranks only
//     members within half a generation of the laggard, so that it compares
//     equal training) on a fresh envs.Vector of
//     num_envs envs, one rollout per agent.Train call, so Progress can count
//     steps as they happen. A fresh vector per generation means no env state
//     has to survive a checkpoint. A panic in the goroutine (an env's, most
//     likely) fails the run with an error naming the agent and the env.
//  2. Score: with fitness = "eval" each member plays eval_episodes
//     deterministic episodes on env 0 of its training vector, all seeded
//     alike for the generation (so the env's past does not matter), each
//     cut at eval_max_steps, and its fitness is their mean return; with
//     fitness = "train" its fitness is the mean return of its last
//     eval_episodes training episodes, and it plays only when none ended in
//     the generation. A non-finite loss, gradient or weight makes it −Inf; a
//     NaN or Inf observation or reward fails the run, as in training. A
//     member idle under PBT's clock keeps its fitness.
//  3. Record: the best member (of those that trained) is saved to
//     elite.safetensors when it is the best of the run so far; with
//     elite_episodes it must first beat the elite on the run's
//     confirmation episodes (played from one seed for the whole run).
//     metrics.csv gets one row per member.
//  4. Select, by [population] selection: the tournament keeps the elite
//     (with elitism) and fills the other places with winners of
//     tournaments drawn with replacement, cloned with new indices
//     (agent.Clone, seeded from the clone's stream); PBT ("pbt") lets each
//     member of the bottom quantile copy one of the top quantile where the
//     difference is significant (exploit) and the others go on as they are,
//     ranking only members within half a generation of the laggard's steps;
//     with independent = true every agent goes on as it is.
//  5. Mutate: under the tournament each clone, and the elite if
//     mutate_elite, gets exactly one mutation kind drawn with the
//     [mutation] weights: none, architecture (netconf operators via
//     agent.MutateArchitecture), parameters, activation or rl_hp; under
//     PBT each copy gets new hyperparameters, every mutable one at once
//     (explore: perturbed on its own scale or resampled, or chosen by
//     PB2's Gaussian-process bandit).
//  6. Checkpoint: the population goes to checkpoints/gen-NNNNNN (temporary
//     directory, fsync, rename), then checkpoints/latest is replaced.
//
// The last generation is not selected or mutated: its checkpoint holds the
// population as it was scored.
//
// # Determinism
//
// Every random draw of evolution comes from a stream derived from (seed,
// agent index, generation, purpose) by SplitMix64 hashing; each agent
// trains with its own RNG, saved in its file. Nothing depends on the order
// in which goroutines finish, so Workers changes the speed of a run, never
// its results, and a run resumed from a checkpoint continues bit for bit as
// if it had never stopped. No trainer RNG state needs to be checkpointed.
//
// # Editing agents
//
// Parameter mutations perturb the views agent.WeightMatrices returns in
// place; rl_hp mutations go through agent.SetConfig; divergence is
// agent.ErrNonFinite from training or agent.CheckFinite on the weights.
package evo

// Command evolve trains a population of PPO agents with evolutionary
// hyperparameter optimisation, as described by one TOML config, and
// resumes stopped runs.
//
//	evolve -config configs/cartpole.toml    # train
//	evolve -env LunarLander-v3 -set ppo.lr=1e-3   # train an env's shipped config, with overrides
//	evolve configs [NAME]                   # list the shipped configs, or print one
//	evolve -resume runs/cartpole            # continue a stopped run from its last checkpoint
//	evolve inspect [-json] runs/cartpole    # describe an agent file, or a run's elite and summary
//	evolve plot [-o DIR] runs/cartpole      # chart fitness, training, hyperparameters and network as PNGs
//	evolve plot bench/ runs/cartpole_2      # compare runs, or a bench's (seeds as mean and band): comparison.png
//	evolve play -agent runs/cartpole        # watch the elite play (-gif OUT.gif, -record OUT.npz)
//	evolve sample -o data.npz runs/cartpole # every kept checkpoint's agents play: one dataset (.npz)
//	evolve -config pop.toml -nats nats://server:4222   # train on workers of other machines
//	evolve worker -nats nats://server:4222 [-workers N] # a worker: trains tasks of any run there
//	evolve bench -no-target configs/*.toml  # 3 seeds of each config -> bench/BENCHMARKS.md, benchmarks.csv
//
// Flags:
//
//	-config FILE   the run's config (see configs/pop.toml for every key), or a shipped
//	               config's name (evolve configs lists them)
//	-env ID        train env ID with its shipped config, or evolve's defaults on it
//	-set KEY=VAL   override a config key (repeatable), checked as in the file
//	-resume DIR    continue the run in DIR from DIR/checkpoints/latest with DIR/config.toml
//	-out DIR       write the run to DIR instead of the config's out_dir
//	-seed N        replace the config's seed
//	-workers N     train at most N agents at once (never changes results)
//	-quiet         print only errors and the final summary
//	-max-steps N   stop after N env steps of the population (1e6 and 1_000_000 are
//	               accepted), replacing population.max_steps; with -resume, trains
//	               a finished run further
//	-target X      stop once the elite's score reaches X, replacing population.target
//	-no-target     never stop on a score: spend the whole budget
//	-nats URL      train through the NATS JetStream server at URL on `evolve worker`
//	               processes (also -nats-creds FILE, -nats-nkey FILE, -nats-tls-ca FILE,
//	               -nats-tls-cert FILE, -nats-tls-key FILE, -nats-ack-wait D,
//	               -nats-max-deliver N); results are the same as on one machine
//
// Every subcommand takes -h for its flags. A bad flag or flags that do not
// go together are one line on stderr and a pointer to -h.
//
// Exit status: 0 on success (and when resuming a run that has already
// finished), 2 on bad input (config, flags, an output directory that cannot
// be written, a damaged or altered checkpoint), 1 on any other failure,
// 130 or 143 when stopped by SIGINT or SIGTERM after the last complete
// generation was checkpointed.
//
// On a terminal, evolve draws a progress bar and prints a table after each
// generation; otherwise it prints one log line per generation.
//
// The command is package cli (github.com/evolverl/evolve/cli) with no
// environments beyond the built-in ones; a program that registers its own
// with envs.Register and calls cli.Main is the same command for them. cli
// also registers the gorgonia reference backend ([ppo] backend = "gorgonia").
package main

import (
	"os"

	"github.com/evolverl/evolve/cli"
)

func main() { os.Exit(cli.Main()) }

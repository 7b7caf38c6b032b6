// Command evolve trains a population of PPO agents with evolutionary
// hyperparameter optimisation, as described by one TOML config, and
// resumes stopped runs.
//
//	evolve -config configs/cartpole.toml    # train
//	evolve -resume runs/cartpole            # continue a stopped run from its last checkpoint
//	evolve inspect [-json] runs/cartpole    # describe an agent file, or a run's elite and summary
//	evolve plot [-o DIR] runs/cartpole      # chart fitness, hyperparameters and network size as PNGs
//	evolve play -agent runs/cartpole        # watch the elite play (-gif OUT.gif, -record OUT.npz)
//
// Flags:
//
//	-config FILE   the run's config (see configs/pop.toml for every key)
//	-resume DIR    continue the run in DIR from DIR/checkpoints/latest with DIR/config.toml
//	-out DIR       write the run to DIR instead of the config's out_dir
//	-seed N        replace the config's seed
//	-workers N     train at most N agents at once (never changes results)
//	-quiet         print only errors and the final summary
//
// Exit status: 0 on success (and when resuming a run that has already
// finished), 2 on bad input (config, flags, an output directory that cannot
// be written, a damaged or altered checkpoint), 1 on any other failure,
// 130 or 143 when stopped by SIGINT or SIGTERM after the last complete
// generation was checkpointed.
//
// On a terminal, evolve draws a progress bar and prints a table after each
// generation; otherwise it prints one log line per generation.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	// The gorgonia reference backend, selectable with [ppo] backend = "gorgonia".
	_ "github.com/evolverl/evolve/nn/gorgonia"
)

func main() {
	// The gorgonia backend allocates heavily while it runs graphs; a GC
	// target of 400 % trades memory for far fewer collections
	// (GORGONIA.md). GOGC wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sigs
		cancel(signalError{s})
		// A second signal stops at once, without a new checkpoint.
		s = <-sigs
		fmt.Fprintf(os.Stderr, "\nevolve: second %v: exiting without waiting\n", s)
		os.Exit(exitCode(s))
	}()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// signalError is the cause of the context's cancellation by a signal.
type signalError struct{ sig os.Signal }

func (e signalError) Error() string { return "stopped by " + signalName(e.sig) }

func signalName(s os.Signal) string {
	switch s {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// exitCode is 128 + the signal's number, as shells report it.
func exitCode(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 130
}

// stopSignal returns the signal that cancelled ctx, if any.
func stopSignal(ctx context.Context) (os.Signal, bool) {
	var se signalError
	if errors.As(context.Cause(ctx), &se) {
		return se.sig, true
	}
	return nil, false
}

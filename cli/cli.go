// Package cli is the evolve command as a library: everything cmd/evolve
// does, so that a program of its own — typically one that registers its
// own environments with envs.Register — is the same command in three
// lines:
//
//	func main() {
//		envs.Register(envs.Spec{ID: "MyTask-v0", New: newMyTask, MaxEpisodeSteps: 200})
//		os.Exit(cli.Main())
//	}
//
// and its configs can then say [env] id = "MyTask-v0". The program takes
// the command's arguments:
//
//	mytask -config FILE|NAME [-set KEY=VALUE ...] [-out DIR] [-seed N] [STOP] [-workers N] [-quiet]
//	mytask -env ID [-set KEY=VALUE ...] [-out DIR] [STOP] [-quiet]
//	mytask configs [NAME]
//	mytask -resume DIR [STOP] [-workers N] [-quiet]
//	(STOP: -max-steps N, -target X or -no-target, replacing the run's stopping rules)
//	mytask inspect [-json] FILE|DIR
//	mytask plot [-o DIR] [-hp NAME] RUN_DIR
//	mytask play -agent FILE|DIR [-env ID] [-episodes N] [-gif OUT.gif] [-record OUT.npz] ...
//	mytask sample -o OUT.npz [-generations LIST] [-elite] [-method M] [-episodes N] ... RUN_DIR
//	mytask -config FILE -nats URL ...   (the coordinator of workers over NATS JetStream)
//	mytask worker -nats URL [-workers N]
//	mytask bench [-seeds N] [-out DIR] [-long] [-no-target] [-variants LIST] [CONFIG ...]
//
// See cmd/evolve for the flags and the exit statuses. Importing cli also
// registers the gorgonia reference backend (package nn/gorgonia), so that
// every program built on it accepts [ppo] backend = "gorgonia" as the
// evolve command does.
//
// Main is for a program's main function: it owns the process (signals,
// the garbage collector's target, os.Args). Run is the command alone, for
// tests and for programs that embed it.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"syscall"
	"time"

	"github.com/evolverl/evolve/envs"

	// The gorgonia reference backend, selectable with [ppo] backend = "gorgonia".
	_ "github.com/evolverl/evolve/nn/gorgonia"
)

// Exit statuses.
const (
	exitOK       = 0
	exitFailure  = 1
	exitBadInput = 2
)

// subcommandNames are the names of evolve's subcommands, sorted.
func subcommandNames() []string { return slices.Sorted(maps.Keys(subcommands)) }

// subcommands are evolve's subcommands by name; without one, evolve
// trains (trainCmd).
var subcommands = map[string]func(ctx context.Context, args []string, stdout, stderr io.Writer) int{
	"inspect": inspectCmd,
	"plot":    plotCmd,
	"play":    playCmd,
	"worker":  workerCmd,
	"bench":   benchCmd,
	"configs": configsCmd,
	"sample":  sampleCmd,
}

// Run is the whole command without its process-wide setup (signals, GOGC;
// see Main): it parses args (without the program name), trains, resumes,
// inspects, plots or plays, and returns the exit status. Output for people
// goes to stderr, the final summary to stdout. Cancelling ctx stops a
// training run as a signal does: the last complete generation stays
// checkpointed and Run returns 130 (or 143 when Main's handler cancelled
// it for SIGTERM). Environments registered with envs.Register before the
// call can be named by the config.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		if cmd, ok := subcommands[args[0]]; ok {
			return cmd(ctx, args[1:], stdout, stderr)
		}
		if args[0] == "help" { // as `go help`: the usage, or a subcommand's
			return Run(ctx, append(args[1:], "-h"), stdout, stderr)
		}
	}
	return trainCmd(ctx, args, stdout, stderr)
}

// Main runs the command with os.Args[1:], os.Stdout and os.Stderr and
// returns its exit status, for os.Exit. It first sets the garbage
// collector's target to 400 % unless GOGC is set, and handles SIGINT and
// SIGTERM: the first cancels the run, which stops after checkpointing its
// last complete generation and returns 130 or 143; a second exits the
// process at once with that status, without a new checkpoint. The command
// it tells the user to continue a stopped run with names the program as
// os.Args[0] does. Call it once, from main.
func Main() int {
	if len(os.Args) > 0 {
		if name := filepath.Base(os.Args[0]); name != "." && name != string(filepath.Separator) {
			programName = name
		}
	}
	// The gorgonia backend allocates heavily while it runs graphs; a GC
	// target of 400 % trades memory for far fewer collections
	// (GORGONIA.md). GOGC wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		s := <-sigs
		first := time.Now()
		cancel(signalError{s})
		// A second signal stops at once, without a new checkpoint — one
		// typed by a user. The copies a process group gets at once (timeout
		// -s INT, a terminal's Ctrl-C to a pipeline) arrive within
		// signalEcho of the first and count as the same stop.
		for s = range sigs {
			if time.Since(first) >= signalEcho {
				break
			}
		}
		fmt.Fprintf(os.Stderr, "\nevolve: second %v: exiting without waiting\n", s)
		os.Exit(exitCode(s))
	}()
	return Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
}

// programName is the command's name in the commands it tells users to run
// (resume a run): Main sets it from os.Args[0], so that a program of its own
// built on Main (with envs that evolve does not know) names itself.
var programName = "evolve"

// signalEcho is how soon after the first a signal is taken for a copy of it
// (sent to the process group as well as to the process), not a second stop.
const signalEcho = 500 * time.Millisecond

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

// stopStatus is the exit status of a command stopped by ctx's cancellation:
// 128 + the signal's number where a signal cancelled it, else 130.
func stopStatus(ctx context.Context) int {
	if sig, ok := stopSignal(ctx); ok {
		return exitCode(sig)
	}
	return 130
}

// stopped reports whether ctx was cancelled (a signal), waiting a moment
// for it when err says an env's Python child was interrupted: a
// terminal's Ctrl-C reaches evolve and its children together, and the
// child's end can be seen before evolve's own signal is.
func stopped(ctx context.Context, err error) bool {
	if ctx.Err() == nil && errors.Is(err, envs.ErrInterrupted) {
		select {
		case <-ctx.Done():
		case <-time.After(signalGrace):
		}
	}
	return ctx.Err() != nil
}

// signalGrace is how long stopped waits for evolve's own signal.
const signalGrace = 2 * time.Second

// stopSignal returns the signal that cancelled ctx, if any.
func stopSignal(ctx context.Context) (os.Signal, bool) {
	var se signalError
	if errors.As(context.Cause(ctx), &se) {
		return se.sig, true
	}
	return nil, false
}

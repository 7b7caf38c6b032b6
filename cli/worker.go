package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime"

	"github.com/evolverl/evolve/evo/natsrun"
)

// workerCmd is `evolve worker`: it trains tasks of any run whose
// coordinator uses the same NATS server, until stopped by a signal (exit
// status 130 or 143). A run it refuses (a gym: env without -gym-python
// naming its interpreter, a run too big for its memory at -workers agents
// at once, an env it cannot make) fails on the coordinator, and the worker
// goes on; a coordinator of another evolve version or an altered
// run config stops it with status 2 (natsrun.ErrMismatch).
func workerCmd(ctx context.Context, args []string, _, stderr io.Writer) int {
	c := newCommand("evolve worker", "usage: evolve worker -nats URL [-workers N] [-name NAME] [-gym-python PATH] [-quiet] [-nats-creds FILE] ...\n\n", stderr)
	fs := c.fs
	var nf natsFlags
	nf.register(fs, false)
	slots := fs.Int("workers", runtime.GOMAXPROCS(0), "train at most `N` tasks at once")
	name := fs.String("name", "", "call this worker `NAME` in the coordinator's messages (default host:pid)")
	quiet := fs.Bool("quiet", false, "print only errors")
	gymPython := fs.String("gym-python", "", "train runs of gym: envs with the Python interpreter `PATH` (their config must name the same one); without it such runs are refused")
	if status, ok := c.parse(args); !ok {
		return status
	}
	usage := c.misuse
	switch {
	case fs.NArg() > 0:
		return usage("unexpected argument %q", fs.Arg(0))
	case nf.url == "":
		return usage("-nats URL is required")
	case *slots < 1:
		return usage("-workers %d: want >= 1", *slots)
	case nf.check() != "":
		return usage("%s", nf.check())
	}
	if *gymPython != "" {
		// Found now rather than as a run's env fails to start on it.
		if _, err := exec.LookPath(*gymPython); err != nil {
			why := errors.Unwrap(err) // exec.ErrNotFound, or what stat said
			if pe := (*os.PathError)(nil); errors.As(err, &pe) {
				why = pe.Err
			}
			return usage("-gym-python %s: %v", *gymPython, why)
		}
	}
	level := slog.LevelInfo
	if *quiet {
		level = slog.LevelError
	}
	nc, err := nf.connect("evolve worker")
	if err != nil {
		fmt.Fprintf(stderr, "evolve worker: %v\n", err)
		return exitBadInput
	}
	defer nc.Close()
	// A server without JetStream never gets a work queue: the worker would
	// wait for a coordinator for ever.
	if _, err := natsrun.CheckServer(ctx, nc); err != nil {
		fmt.Fprintf(stderr, "evolve worker: %v\n", err)
		return exitBadInput
	}
	w := natsrun.NewWorker(nc)
	w.Slots, w.Name, w.GymPython = *slots, *name, *gymPython
	w.Log = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	if w := unversionedWarning(); w != "" && !*quiet {
		fmt.Fprintf(stderr, "evolve worker: warning: %s\n", w)
	}
	if !*quiet {
		tasks := "tasks"
		if *slots == 1 {
			tasks = "task"
		}
		fmt.Fprintf(stderr, "evolve worker: training up to %d %s at once from %s (evolve %s)\n", *slots, tasks, redact(nf.url), natsrun.Version())
	}
	if err := w.Run(ctx); err != nil {
		fmt.Fprintf(stderr, "evolve worker: %v\n", err)
		if errors.Is(err, natsrun.ErrMismatch) {
			return exitBadInput
		}
		return exitFailure
	}
	if sig, ok := stopSignal(ctx); ok {
		if !*quiet {
			fmt.Fprintf(stderr, "evolve worker: stopped by %s; tasks in training went back to the queue\n", signalName(sig))
		}
		return exitCode(sig)
	}
	return exitOK
}

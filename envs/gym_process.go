package envs

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// gymBridge is the Python side of the gym envs, run with `python -c`.
//
//go:embed gymbridge.py
var gymBridge string

// gymBridgeVar is the environment variable that carries gymBridge to the
// child, and gymBridgeLoader the child's -c program that runs it (named
// as the file for tracebacks).
const (
	gymBridgeVar    = "EVOLVE_GYM_BRIDGE"
	gymBridgeLoader = `import os; exec(compile(os.environ.pop("` + gymBridgeVar + `"), "envs/gymbridge.py", "exec"))`
)

// gymHost is one child process and the envs it runs.
type gymHost struct {
	id        string // "gym:" included
	timeout   time.Duration
	timeoutOf string // the option timeout comes from
	cmd       *exec.Cmd
	in        *os.File // the child's stdin
	out       *os.File // the child's stdout
	outRaw    syscall.RawConn
	stderr    *tailWriter
	waited    chan struct{} // closed when cmd.Wait has returned
	waitErr   error
	open      int   // GymEnvs not yet closed
	exchanges int   // requests answered, for tests of the one-exchange vector
	dead      error // sticky: the child is gone
	// interrupted is set, from any goroutine, by interrupt: the call in
	// progress and every later one fail, and the child is killed.
	interrupted atomic.Bool

	obsSpace, actSpace Space
	obsSize, maskSize  int

	frame  []byte // the request being built
	head   [4]byte
	body   []byte // the last answer
	seeded []bool
	res    []gymResult // per env, the outcome of its last call
}

// startGym starts the child for n copies of env id and reads the spaces;
// once ctx is done it kills the child and fails with ErrInterrupted.
func startGym(ctx context.Context, id string, n int, opts Options) (*gymHost, error) {
	cfg, python, timeout, start, err := gymOptions(id, n, opts)
	if err != nil {
		return nil, err
	}
	conf, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("option \"kwargs\": %w", err)
	}
	path, err := exec.LookPath(python)
	if err != nil {
		return nil, fmt.Errorf("option \"python\" = %q: %w", python, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w before the python child started", ErrInterrupted)
	}
	h := &gymHost{id: GymPrefix + id, timeout: start, timeoutOf: "start_timeout", stderr: &tailWriter{max: 8 << 10}, open: n}
	if err := h.start(path); err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, h.interrupt) // imports can take long
	reply, err := h.call(append(make([]byte, 4), conf...))
	stop()
	h.timeout, h.timeoutOf = timeout, "timeout"
	if err != nil {
		h.close()
		var pe *gymEnvError
		if errors.As(err, &pe) && strings.Contains(pe.traceback, "ModuleNotFoundError") {
			// Not `option "python"`: the error is the import's, or
			// module_env's, which the message names.
			where := python
			if path != python {
				where += ", " + path
			}
			pe.hint = fmt.Sprintf(" (interpreter %s: install the module there, or set the env option python to an interpreter that has it)", where)
		}
		return nil, err
	}
	var spaces struct {
		Obs json.RawMessage `json:"observation_space"`
		Act json.RawMessage `json:"action_space"`
	}
	if err := json.Unmarshal(reply, &spaces); err != nil {
		h.close()
		return nil, fmt.Errorf("bad handshake from python: %w", err)
	}
	if h.obsSpace, err = UnmarshalSpace(spaces.Obs); err == nil {
		h.actSpace, err = UnmarshalSpace(spaces.Act)
	}
	if err != nil {
		h.close()
		return nil, fmt.Errorf("bad handshake from python: %w", err)
	}
	h.obsSize = h.obsSpace.FlatSize()
	h.maskSize, _ = MaskSize(h.actSpace)
	h.seeded = make([]bool, n)
	h.res = make([]gymResult, n)
	for i := range h.res {
		for _, o := range []*gymObs{&h.res[i].now, &h.res[i].next} {
			o.obs = make([]float32, h.obsSize)
			o.mask = make([]bool, h.maskSize)
		}
	}
	return h, nil
}

// start launches the child on pipes of its own, so that reads and writes
// can carry deadlines.
func (h *gymHost) start(python string) error {
	inR, inW, err := os.Pipe()
	if err != nil {
		return err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return err
	}
	// The script travels in the environment, which the child empties of
	// it before the env's code runs: as -c's argument it was the child's
	// whole command line in ps (15 KB).
	h.cmd = exec.Command(python, "-c", gymBridgeLoader)
	h.cmd.Env = append(os.Environ(), gymBridgeVar+"="+gymBridge)
	h.cmd.Stdin, h.cmd.Stdout, h.cmd.Stderr = inR, outW, h.stderr
	h.cmd.SysProcAttr = childProcAttr()
	h.cmd.WaitDelay = time.Second // in case a grandchild keeps stderr open
	err = h.cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return fmt.Errorf("start %s: %w", python, err)
	}
	h.in, h.out = inW, outR
	if h.outRaw, err = outR.SyscallConn(); err != nil {
		inW.Close()
		outR.Close()
		return err
	}
	h.waited = make(chan struct{})
	go func() {
		h.waitErr = h.cmd.Wait()
		close(h.waited)
	}()
	return nil
}

// fail kills the child after an I/O or protocol error and returns the
// sticky error naming what happened.
func (h *gymHost) fail(err error) error {
	pid := h.cmd.Process.Pid
	timedOut := errors.Is(err, os.ErrDeadlineExceeded)
	io := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, os.ErrClosed) || timedOut
	h.kill()
	switch {
	case h.interrupted.Load():
		err = fmt.Errorf("python child (pid %d) killed: %w", pid, ErrInterrupted)
	case timedOut:
		err = fmt.Errorf("python child (pid %d) did not answer within %v (option %q); killed it", pid, h.timeout, h.timeoutOf)
	case io && stopSignal(h.waitErr) != "":
		// A terminal's Ctrl-C, or a service manager's SIGTERM to the
		// whole process group, which the child got beside evolve.
		err = fmt.Errorf("python child (pid %d) died of %s: %w", pid, stopSignal(h.waitErr), ErrInterrupted)
	case io && h.waitErr != nil:
		err = fmt.Errorf("python child (pid %d) died (%w)", pid, h.waitErr)
	case io:
		err = fmt.Errorf("python child (pid %d) died (%w)", pid, err)
	default:
		err = fmt.Errorf("python child (pid %d): %w; killed it", pid, err)
	}
	if tail := lastLines(h.stderr.String(), 12); tail != "" {
		err = fmt.Errorf("%w; its stderr ends:\n%s", err, tail)
	}
	h.dead = err
	return err
}

// stopSignal returns "SIGINT" or "SIGTERM" when waitErr, what the child's
// Wait returned, says it was killed by that signal, else "".
func stopSignal(waitErr error) string {
	ee, ok := errors.AsType[*exec.ExitError](waitErr)
	if !ok {
		return ""
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	switch {
	case !ok || !ws.Signaled():
		return ""
	case ws.Signal() == syscall.SIGINT:
		return "SIGINT"
	case ws.Signal() == syscall.SIGTERM:
		return "SIGTERM"
	}
	return ""
}

// interrupt makes the exchange in progress, if any, fail at once, and
// every later one; the child is killed by the goroutine that was calling
// it. Safe from any goroutine: the flag is set before the deadlines, and a
// call sets its own deadlines before it reads the flag.
func (h *gymHost) interrupt() {
	h.interrupted.Store(true)
	now := time.Now()
	h.in.SetWriteDeadline(now)
	h.out.SetReadDeadline(now)
}

// kill ends the child and reaps it, giving it a moment to exit by itself
// after its stdin is closed.
func (h *gymHost) kill() {
	h.in.Close()
	select {
	case <-h.waited:
	case <-time.After(100 * time.Millisecond):
		h.cmd.Process.Kill()
		<-h.waited
	}
	h.out.Close()
}

// close asks the child to exit, kills it if it does not within a second,
// and reaps it. Closing twice is harmless.
func (h *gymHost) close() {
	if h.cmd == nil || h.dead == errGymClosed {
		return
	}
	if h.dead == nil {
		h.in.SetWriteDeadline(time.Now().Add(time.Second))
		h.in.Write([]byte{1, 0, 0, 0, 'C'})
		h.in.Close()
		select {
		case <-h.waited:
		case <-time.After(time.Second):
			h.cmd.Process.Kill()
			<-h.waited
		}
		h.out.Close()
	}
	h.dead = errGymClosed
}

var errGymClosed = errors.New("envs: gym env is closed")

// tailWriter keeps the last max bytes written to it.
type tailWriter struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if len(w.buf) > w.max {
		w.buf = append(w.buf[:0], w.buf[len(w.buf)-w.max:]...)
	}
	return len(p), nil
}

func (w *tailWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.buf)
}

// lastLines returns the last n non-empty lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

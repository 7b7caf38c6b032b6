package envs

import (
	_ "embed"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// gymBridge is the Python side of a GymEnv, run with `python -c`.
//
//go:embed gymbridge.py
var gymBridge string

// GymPrefix marks the ids that Make hands to a Python Gymnasium env:
// Make("gym:CartPole-v1", opts).
const GymPrefix = "gym:"

// GymEnv is an env run by Gymnasium in a child Python process. Make builds
// it for ids of the form "gym:ID" with these options:
//
//   - "python": the interpreter (default "python3");
//   - "import": a list of modules to import first (ones that register envs);
//   - "kwargs": a map passed to gymnasium.make(ID, **kwargs);
//   - "module_env": "package.module:ClassName" instantiates that class with
//     the kwargs instead of calling gymnasium.make, so that a Gymnasium-like
//     env runs without Gymnasium (its spaces may then be dicts such as
//     {"type": "Discrete", "n": 3, "start": 0}, see gymbridge.py);
//   - "timeout": seconds to wait for any answer of the child (default 30);
//   - "max_episode_steps", handled by Make as for every env: given, it
//     replaces Gymnasium's own time limit.
//
// Spaces Box (any shape and dtype, ±Inf bounds), Discrete (with start),
// MultiDiscrete, MultiBinary and Dict of those are supported; any other
// fails Make with an error naming it. info["action_mask"] becomes
// Info.ActionMask; other info is dropped.
//
// # Protocol
//
// Every message either way is a frame: a uint32 little-endian length, then
// that many bytes, of which the first is a tag. The parent first sends the
// JSON configuration; the child answers 'H' with the JSON descriptions of
// both spaces, or 'E' with a traceback. Then, per call, the parent sends
// 'R' + int64 seed (negative: None) or 'S' + the action's float32 values,
// and the child answers 'O' + float64 reward, uint8 flags (1 terminated,
// 2 truncated, 4 mask present), uint32 mask length, one byte per mask
// entry, and the observation's float32 values — or 'E' + a traceback. 'C'
// (or the end of its stdin) makes the child exit. All numbers are little
// endian.
//
// # Errors
//
// Reset and Step cannot return errors through the Env interface: when one
// fails they return a nil observation and Err reports why (Vector turns
// that into an error naming the env and the cause). A Python exception
// leaves the child running; a child that died or did not answer within the
// timeout is killed and every later call fails. Close kills and reaps the
// child; always Close a GymEnv (Vector.Close closes its envs).
type GymEnv struct {
	id      string
	timeout time.Duration
	cmd     *exec.Cmd
	in      *os.File // the child's stdin
	out     *os.File // the child's stdout
	stderr  *tailWriter
	waited  chan struct{} // closed when cmd.Wait has returned
	waitErr error

	obsSpace, actSpace Space
	maskSize           int

	obs    []float32
	mask   []bool
	frame  []byte
	seeded bool
	err    error // of the last Reset or Step
	dead   error // sticky: the child is gone
}

// gymConfig is the JSON configuration the child reads first.
type gymConfig struct {
	ID           string         `json:"id"`
	Import       []string       `json:"import,omitempty"`
	Kwargs       map[string]any `json:"kwargs,omitempty"`
	ModuleEnv    string         `json:"module_env,omitempty"`
	OwnTimeLimit bool           `json:"own_time_limit,omitempty"`
}

// NewGymEnv starts a child Python process running the Gymnasium env id
// (without the "gym:" prefix) with the options described at GymEnv.
// ownTimeLimit removes Gymnasium's time limit, for callers that apply
// their own. Make is the usual way in.
func NewGymEnv(id string, opts Options, ownTimeLimit bool) (*GymEnv, error) {
	if err := opts.Only("python", "import", "kwargs", "module_env", "timeout"); err != nil {
		return nil, err
	}
	cfg := gymConfig{ID: id, OwnTimeLimit: ownTimeLimit}
	python := "python3"
	if v, ok := opts["python"]; ok {
		s, ok := v.(string)
		if !ok || s == "" {
			return nil, fmt.Errorf("option \"python\" = %v (%T): want an interpreter name or path", v, v)
		}
		python = s
	}
	if v, ok := opts["module_env"]; ok {
		s, ok := v.(string)
		if !ok || !strings.Contains(s, ":") {
			return nil, fmt.Errorf("option \"module_env\" = %v (%T): want \"package.module:ClassName\"", v, v)
		}
		cfg.ModuleEnv = s
	}
	switch v := opts["import"].(type) {
	case nil:
	case []string:
		cfg.Import = v
	case []any:
		for _, m := range v {
			s, ok := m.(string)
			if !ok {
				return nil, fmt.Errorf("option \"import\": %v (%T) is not a module name", m, m)
			}
			cfg.Import = append(cfg.Import, s)
		}
	default:
		return nil, fmt.Errorf("option \"import\" = %v (%T): want a list of module names", v, v)
	}
	switch v := opts["kwargs"].(type) {
	case nil:
	case map[string]any:
		cfg.Kwargs = v
	case Options:
		cfg.Kwargs = v
	default:
		return nil, fmt.Errorf("option \"kwargs\" = %v (%T): want a table of keyword arguments", v, v)
	}
	secs, err := opts.Float("timeout", 30)
	if err != nil {
		return nil, err
	}
	if secs <= 0 {
		return nil, fmt.Errorf("option \"timeout\" = %v: want a positive number of seconds", secs)
	}
	conf, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("option \"kwargs\": %w", err)
	}
	path, err := exec.LookPath(python)
	if err != nil {
		return nil, fmt.Errorf("python interpreter: %w", err)
	}

	g := &GymEnv{id: GymPrefix + id, timeout: time.Duration(secs * float64(time.Second)), stderr: &tailWriter{max: 8 << 10}}
	if err := g.start(path); err != nil {
		return nil, err
	}
	reply, err := g.call(append([]byte{}, conf...))
	if err != nil {
		g.Close()
		return nil, err
	}
	var spaces struct {
		Obs gymSpace `json:"observation_space"`
		Act gymSpace `json:"action_space"`
	}
	if err := json.Unmarshal(reply, &spaces); err != nil {
		g.Close()
		return nil, fmt.Errorf("bad handshake from python: %w", err)
	}
	if g.obsSpace, err = spaces.Obs.space(); err == nil {
		g.actSpace, err = spaces.Act.space()
	}
	if err != nil {
		g.Close()
		return nil, err
	}
	g.maskSize, _ = MaskSize(g.actSpace)
	g.obs = make([]float32, g.obsSpace.FlatSize())
	g.mask = make([]bool, g.maskSize)
	return g, nil
}

// start launches the child on pipes of its own, so that reads and writes
// can carry deadlines.
func (g *GymEnv) start(python string) error {
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
	g.cmd = exec.Command(python, "-c", gymBridge)
	g.cmd.Stdin, g.cmd.Stdout, g.cmd.Stderr = inR, outW, g.stderr
	g.cmd.WaitDelay = time.Second // in case a grandchild keeps stderr open
	err = g.cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return fmt.Errorf("start %s: %w", python, err)
	}
	g.in, g.out = inW, outR
	g.waited = make(chan struct{})
	go func() {
		g.waitErr = g.cmd.Wait()
		close(g.waited)
	}()
	return nil
}

// ID returns the env's id, "gym:" included.
func (g *GymEnv) ID() string { return g.id }

// ObservationSpace is the Gymnasium env's observation space.
func (g *GymEnv) ObservationSpace() Space { return g.obsSpace }

// ActionSpace is the Gymnasium env's action space.
func (g *GymEnv) ActionSpace() Space { return g.actSpace }

// Err returns the error of the last Reset or Step, nil if it succeeded.
func (g *GymEnv) Err() error { return g.err }

// Reset calls reset(seed=seed) in the child (seed=None for NoSeed, except
// on the first Reset, which seeds 0 as every env here does). On failure it
// returns a nil observation and Err says why.
func (g *GymEnv) Reset(seed int64) ([]float32, Info) {
	if seed < 0 && !g.seeded {
		seed = 0
	}
	g.seeded = true
	f := append(g.frame[:0], 'R')
	f = binary.LittleEndian.AppendUint64(f, uint64(seed))
	g.frame = f
	obs, _, _, _, info := g.exchange(f, "reset")
	return obs, info
}

// Step calls step(action) in the child, the action converted to the
// space's Python form. On failure it returns a nil observation and Err says
// why.
func (g *GymEnv) Step(action []float32) ([]float32, float64, bool, bool, Info) {
	f := append(g.frame[:0], 'S')
	for _, a := range action {
		f = binary.LittleEndian.AppendUint32(f, math.Float32bits(a))
	}
	g.frame = f
	return g.exchange(f, "step")
}

// exchange sends a reset or step request and decodes the answer.
func (g *GymEnv) exchange(req []byte, call string) ([]float32, float64, bool, bool, Info) {
	g.err = nil
	body, err := g.call(req)
	if err == nil {
		err = g.decode(body)
	}
	if err != nil {
		g.err = fmt.Errorf("%s: %s: %w", g.id, call, err)
		return nil, 0, false, false, Info{}
	}
	flags := body[8]
	info := Info{}
	if flags&4 != 0 {
		info.ActionMask = g.mask
	}
	reward := math.Float64frombits(binary.LittleEndian.Uint64(body))
	return g.obs, reward, flags&1 != 0, flags&2 != 0, info
}

// decode checks an 'O' answer and copies its mask and observation.
func (g *GymEnv) decode(body []byte) error {
	if len(body) < 13 {
		return fmt.Errorf("short answer of %d bytes from python", len(body))
	}
	nmask := int(binary.LittleEndian.Uint32(body[9:]))
	rest := body[13:]
	if body[8]&4 != 0 && nmask != g.maskSize {
		return fmt.Errorf("action mask of %d entries, want %d for %v", nmask, g.maskSize, g.actSpace)
	}
	if len(rest) != nmask+4*len(g.obs) {
		return fmt.Errorf("answer of %d bytes, want %d for a mask of %d and an observation of %d values", len(rest), nmask+4*len(g.obs), nmask, len(g.obs))
	}
	for i := range nmask {
		g.mask[i] = rest[i] != 0
	}
	rest = rest[nmask:]
	for i := range g.obs {
		g.obs[i] = math.Float32frombits(binary.LittleEndian.Uint32(rest[4*i:]))
	}
	return nil
}

// gymMaxFrame bounds an answer's length, so that a corrupt length cannot
// make the parent allocate without limit.
const gymMaxFrame = 1 << 30

// call sends one frame and returns the body of the answer ('H' or 'O'),
// or an error: the child's traceback for 'E', otherwise the child is
// killed and the error is sticky.
func (g *GymEnv) call(req []byte) ([]byte, error) {
	if g.dead != nil {
		return nil, g.dead
	}
	deadline := time.Now().Add(g.timeout)
	g.in.SetWriteDeadline(deadline)
	g.out.SetReadDeadline(deadline)
	var head [4]byte
	binary.LittleEndian.PutUint32(head[:], uint32(len(req)))
	_, err := g.in.Write(head[:])
	if err == nil {
		_, err = g.in.Write(req)
	}
	var body []byte
	if err == nil {
		_, err = io.ReadFull(g.out, head[:])
	}
	if err == nil {
		n := binary.LittleEndian.Uint32(head[:])
		if n == 0 || n > gymMaxFrame {
			err = fmt.Errorf("frame of %d bytes", n)
		} else {
			body = make([]byte, n)
			_, err = io.ReadFull(g.out, body)
		}
	}
	if err != nil {
		return nil, g.fail(err)
	}
	switch body[0] {
	case 'H', 'O':
		return body[1:], nil
	case 'E':
		return nil, fmt.Errorf("python exception:\n%s", lastLines(string(body[1:]), 12))
	}
	return nil, g.fail(fmt.Errorf("unknown answer tag %q", body[0]))
}

// fail kills the child after an I/O error and returns the sticky error
// naming what happened.
func (g *GymEnv) fail(err error) error {
	pid := g.cmd.Process.Pid
	timedOut := errors.Is(err, os.ErrDeadlineExceeded)
	g.kill()
	switch {
	case timedOut:
		err = fmt.Errorf("python child (pid %d) did not answer within %v; killed it", pid, g.timeout)
	default:
		err = fmt.Errorf("python child (pid %d) died (%v)", pid, g.waitErr)
	}
	if tail := lastLines(g.stderr.String(), 12); tail != "" {
		err = fmt.Errorf("%w; its stderr ends:\n%s", err, tail)
	}
	g.dead = err
	return err
}

// kill ends the child and reaps it, giving it a moment to exit by itself
// after its stdin is closed.
func (g *GymEnv) kill() {
	g.in.Close()
	select {
	case <-g.waited:
	case <-time.After(100 * time.Millisecond):
		g.cmd.Process.Kill()
		<-g.waited
	}
	g.out.Close()
}

// Close asks the child to exit, kills it if it does not within a second,
// and reaps it. Closing twice is harmless.
func (g *GymEnv) Close() error {
	if g.cmd == nil || g.dead == errGymClosed {
		return nil
	}
	if g.dead == nil {
		g.in.SetWriteDeadline(time.Now().Add(time.Second))
		g.in.Write([]byte{1, 0, 0, 0, 'C'})
		g.in.Close()
		select {
		case <-g.waited:
		case <-time.After(time.Second):
			g.cmd.Process.Kill()
			<-g.waited
		}
		g.out.Close()
	}
	g.dead = errGymClosed
	return nil
}

var errGymClosed = errors.New("envs: gym env is closed")

// gymSpace is a space as the bridge describes it.
type gymSpace struct {
	Type  string     `json:"type"`
	Shape []int      `json:"shape"`
	Low   []any      `json:"low"`
	High  []any      `json:"high"`
	N     int        `json:"n"`
	Start int        `json:"start"`
	Nvec  []int      `json:"nvec"`
	Keys  []string   `json:"keys"`
	Sub   []gymSpace `json:"spaces"`
}

func (d gymSpace) space() (Space, error) {
	var s Space
	switch d.Type {
	case "Box":
		b := Box{Dims: d.Shape, Low: make([]float32, len(d.Low)), High: make([]float32, len(d.High))}
		for i := range d.Low {
			var err error
			if b.Low[i], err = gymBound(d.Low[i]); err != nil {
				return nil, err
			}
		}
		for i := range d.High {
			var err error
			if b.High[i], err = gymBound(d.High[i]); err != nil {
				return nil, err
			}
		}
		s = b
	case "Discrete":
		s = Discrete{N: d.N, Start: d.Start}
	case "MultiDiscrete":
		s = MultiDiscrete{Nvec: d.Nvec}
	case "MultiBinary":
		s = MultiBinary{N: d.N}
	case "Dict":
		sub := make([]Space, len(d.Sub))
		for i, x := range d.Sub {
			var err error
			if sub[i], err = x.space(); err != nil {
				return nil, err
			}
		}
		s = Dict{Keys: d.Keys, Spaces: sub}
	default:
		return nil, fmt.Errorf("unsupported space %q", d.Type)
	}
	return s, s.Validate()
}

// gymBound reads a Box bound: a number, or "inf" / "-inf" (JSON has no
// infinities). Bounds beyond float32's range become ±Inf.
func gymBound(v any) (float32, error) {
	switch v := v.(type) {
	case float64:
		return float32(v), nil
	case string:
		switch v {
		case "inf":
			return float32(math.Inf(1)), nil
		case "-inf":
			return float32(math.Inf(-1)), nil
		}
	}
	return 0, fmt.Errorf("bad box bound %v", v)
}

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

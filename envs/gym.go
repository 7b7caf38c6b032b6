package envs

import (
	_ "embed"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"io"
	"math"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// gymBridge is the Python side of the gym envs, run with `python -c`.
//
//go:embed gymbridge.py
var gymBridge string

// GymPrefix marks the ids that Make hands to a Python Gymnasium env:
// Make("gym:CartPole-v1", opts).
const GymPrefix = "gym:"

// GymEnv is an env run by Gymnasium in a child Python process. Make builds
// one for ids of the form "gym:ID", MakeVector a Vector of n whose envs all
// live in one child and step together, one exchange per vector step (see
// NewGymVector). The options:
//
//   - "python": the interpreter (default "python3");
//   - "import": a list of modules to import first (ones that register envs
//     when imported); an entry "package.module:function" also calls
//     function() after the import, for packages that register their envs
//     in a function (MinAtar: "minatar.gym:register_envs");
//   - "kwargs": a map passed to gymnasium.make(ID, **kwargs);
//   - "wrappers": a list of wrappers applied in order after make, each
//     "package.module.Class" (or "package.module:Class") or a table
//     {name = "...", kwargs = {...}};
//   - "module_env": "package.module:ClassName" instantiates that class with
//     the kwargs instead of calling gymnasium.make, so that a Gymnasium-like
//     env runs without Gymnasium (its spaces may then be dicts such as
//     {"type": "Discrete", "n": 3, "start": 0}, see gymbridge.py);
//   - "timeout": seconds to wait for any answer of the child (default 30);
//     a vector step of n envs is one answer;
//   - "start_timeout": seconds the child has to start, import and make its
//     envs (default 120);
//   - "max_episode_steps": given, it replaces Gymnasium's own time limit
//     (0: none), counted in the child exactly as TimeLimit counts.
//
// Spaces Box (any shape and dtype, ±Inf bounds), Discrete (with start),
// MultiDiscrete, MultiBinary and Dict of those are supported; any other
// fails Make with an error naming it. Observations are read as numbers
// whatever their dtype, so an env whose observations' dtype differs from
// its space's (MinAtar's bool images in a uint8 Box) runs, as Gymnasium's
// checker lets it with a warning.
//
// Seeds reach reset(seed=...) as given when below 2^32. A larger seed is
// folded into 32 bits, its high half XORed into its low half (GymSeed),
// because NumPy's legacy RandomState, which MinAtar and other envs seed
// with it, refuses seeds of 2^32 and more. info["action_mask"] becomes
// Info.ActionMask; other info is not carried (it would cost a decoding per
// step for values the trainer never reads).
//
// # Protocol
//
// Every message either way is a frame: a uint32 length, then that many
// bytes, of which the first is a tag. The parent first sends the JSON
// configuration; the child answers 'H' with the JSON descriptions of both
// spaces, or 'E' with a traceback. Then the parent sends
//
//	'R' u32 env, i64 seed (negative: None)    reset one env
//	'S' u32 env, the action's float32 values  step one env
//	'A' n × i64 seed                          reset every env
//	'V' n actions' float32 values             step every env, auto-reset
//	'P' u32 env                               render one env (an 'I' answer)
//	'C'                                       exit (as does the end of stdin)
//
// and the child answers 'O' with the outcome of every env addressed, by
// column (see decode): rewards, flags, observations, masks, and for the
// envs a 'V' step reset, the next episode's first observations and masks.
// 'I' carries a rendered frame: uint32 height, width and channels (3 or 4),
// then the pixels as bytes, row by row (0×0 when the env returns none).
// A Python exception answers 'E' with the uint32 index of the env that
// raised and the traceback. All numbers are little endian.
//
// # Errors
//
// Reset and Step cannot return errors through the Env interface: when one
// fails they return a nil observation and Err reports why (Vector turns
// that into an error naming the env and the cause). A Python exception
// leaves the child running; a child that died or did not answer within the
// timeout is killed and every later call fails. Close kills and reaps the
// child once every env it hosts is closed; always Close a GymEnv
// (Vector.Close closes its envs). On Linux the child is also killed when
// the parent dies.
type GymEnv struct {
	h      *gymHost
	i      int   // index of this env in the child
	err    error // of the last Reset or Step
	closed bool
}

// gymHost is one child process and the envs it runs.
type gymHost struct {
	id        string // "gym:" included
	timeout   time.Duration
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

	obsSpace, actSpace Space
	obsSize, maskSize  int

	frame  []byte // the request being built
	head   [4]byte
	body   []byte // the last answer
	seeded []bool
	res    []gymResult // per env, the outcome of its last call
}

// gymResult is what one env returned; next holds the first observation
// of the following episode when a vector step reset the env.
type gymResult struct {
	reward      float64
	term, trunc bool
	reset       bool // next is set
	now, next   gymObs
}

// gymObs is an observation and the mask that came with it.
type gymObs struct {
	obs     []float32
	mask    []bool
	hasMask bool
}

func (o *gymObs) info() Info {
	if o.hasMask {
		return Info{ActionMask: o.mask}
	}
	return Info{}
}

// gymConfig is the JSON configuration the child reads first.
type gymConfig struct {
	ID              string         `json:"id"`
	NumEnvs         int            `json:"num_envs"`
	Import          []string       `json:"import,omitempty"`
	Kwargs          map[string]any `json:"kwargs,omitempty"`
	Wrappers        []gymWrapper   `json:"wrappers,omitempty"`
	ModuleEnv       string         `json:"module_env,omitempty"`
	MaxEpisodeSteps *int           `json:"max_episode_steps,omitempty"`
}

// gymWrapper names a Python wrapper class and its keyword arguments.
type gymWrapper struct {
	Name   string         `json:"name"`
	Kwargs map[string]any `json:"kwargs,omitempty"`
}

// NewGymEnv starts a child Python process running the Gymnasium env id
// (without the "gym:" prefix) with the options described at GymEnv. Make
// is the usual way in.
func NewGymEnv(id string, opts Options) (*GymEnv, error) {
	h, err := startGym(id, 1, opts)
	if err != nil {
		return nil, err
	}
	return &GymEnv{h: h}, nil
}

// NewGymVector starts one child Python process running n copies of the
// Gymnasium env id and returns them as a Vector that steps all n in one
// exchange with the child (the auto-reset of finished episodes included).
// MakeVector is the usual way in.
func NewGymVector(id string, n int, opts Options) (*Vector, error) {
	if n <= 0 {
		return nil, fmt.Errorf("%d envs, want at least 1", n)
	}
	h, err := startGym(id, n, opts)
	if err != nil {
		return nil, err
	}
	list := make([]Env, n)
	for i := range list {
		list[i] = &GymEnv{h: h, i: i}
	}
	v, err := NewVector(list)
	if err != nil {
		h.close()
		return nil, err
	}
	return v, nil
}

// gymOptions reads the options of a gym env into the child's
// configuration, the interpreter and the timeout.
func gymOptions(id string, n int, opts Options) (cfg gymConfig, python string, timeout, start time.Duration, err error) {
	if err := opts.Only("python", "import", "kwargs", "wrappers", "module_env", "timeout", "start_timeout", "max_episode_steps"); err != nil {
		return cfg, "", 0, 0, err
	}
	cfg = gymConfig{ID: id, NumEnvs: n}
	python = "python3"
	if v, ok := opts["python"]; ok {
		s, ok := v.(string)
		if !ok || s == "" {
			return cfg, "", 0, 0, fmt.Errorf("option \"python\" = %v (%T): want an interpreter name or path", v, v)
		}
		python = s
	}
	if v, ok := opts["module_env"]; ok {
		s, ok := v.(string)
		if !ok || !strings.Contains(s, ":") {
			return cfg, "", 0, 0, fmt.Errorf("option \"module_env\" = %v (%T): want \"package.module:ClassName\"", v, v)
		}
		cfg.ModuleEnv = s
	}
	if cfg.Import, err = gymImports(opts); err != nil {
		return cfg, "", 0, 0, err
	}
	if cfg.Kwargs, err = table(opts["kwargs"], "option \"kwargs\""); err != nil {
		return cfg, "", 0, 0, err
	}
	if cfg.Wrappers, err = gymWrappers(opts["wrappers"]); err != nil {
		return cfg, "", 0, 0, err
	}
	if _, ok := opts["max_episode_steps"]; ok {
		limit, err := opts.Int("max_episode_steps", 0)
		if err == nil && limit < 0 {
			err = fmt.Errorf("option \"max_episode_steps\" = %d: want >= 0 (0 removes the limit)", limit)
		}
		if err != nil {
			return cfg, "", 0, 0, err
		}
		cfg.MaxEpisodeSteps = &limit
	}
	if timeout, err = seconds(opts, "timeout", 30); err == nil {
		start, err = seconds(opts, "start_timeout", 120)
	}
	return cfg, python, timeout, start, err
}

// pyName matches a dotted Python name.
var pyName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)

// gymImports reads the option "import": module names, each optionally
// followed by ":function", a function of the module to call after the
// import.
func gymImports(opts Options) ([]string, error) {
	list, err := stringList(opts, "import", "module name")
	if err != nil {
		return nil, err
	}
	for i, m := range list {
		mod, fn, call := strings.Cut(m, ":")
		if !pyName.MatchString(mod) || call && !pyName.MatchString(fn) {
			return nil, fmt.Errorf("option \"import\"[%d] = %q: want \"package.module\", or \"package.module:function\" to call function() after importing it", i, m)
		}
	}
	return list, nil
}

// seconds reads a positive number of seconds under key.
func seconds(opts Options, key string, def float64) (time.Duration, error) {
	secs, err := opts.Float(key, def)
	if err != nil {
		return 0, err
	}
	if secs <= 0 {
		return 0, fmt.Errorf("option %q = %v: want a positive number of seconds", key, secs)
	}
	return time.Duration(secs * float64(time.Second)), nil
}

// stringList reads the list of strings under key (absent: nil).
func stringList(opts Options, key, what string) ([]string, error) {
	switch v := opts[key].(type) {
	case nil:
		return nil, nil
	case []string:
		return v, nil
	case []any:
		out := make([]string, len(v))
		for i, m := range v {
			s, ok := m.(string)
			if !ok {
				return nil, fmt.Errorf("option %q: %v (%T) is not a %s", key, m, m, what)
			}
			out[i] = s
		}
		return out, nil
	default:
		return nil, fmt.Errorf("option %q = %v (%T): want a list of %ss", key, v, v, what)
	}
}

// table reads a table of keyword arguments (absent: nil).
func table(v any, what string) (map[string]any, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return v, nil
	case Options:
		return v, nil
	}
	return nil, fmt.Errorf("%s = %v (%T): want a table of keyword arguments", what, v, v)
}

// gymWrappers reads the "wrappers" option: names, or tables with a name
// and keyword arguments.
func gymWrappers(v any) ([]gymWrapper, error) {
	if v == nil {
		return nil, nil
	}
	var list []any
	switch v := v.(type) {
	case []any:
		list = v
	case []string:
		for _, s := range v {
			list = append(list, s)
		}
	case []map[string]any: // TOML's array of tables
		for _, m := range v {
			list = append(list, m)
		}
	default:
		return nil, fmt.Errorf("option \"wrappers\" = %v (%T): want a list of wrapper names or {name, kwargs} tables", v, v)
	}
	out := make([]gymWrapper, len(list))
	for i, w := range list {
		at := fmt.Sprintf("option \"wrappers\"[%d]", i)
		switch w := w.(type) {
		case string:
			out[i].Name = w
		case map[string]any:
			for k := range w {
				if k != "name" && k != "kwargs" {
					return nil, fmt.Errorf("%s: unknown key %q (want name, kwargs)", at, k)
				}
			}
			out[i].Name, _ = w["name"].(string)
			var err error
			if out[i].Kwargs, err = table(w["kwargs"], at+".kwargs"); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("%s = %v (%T): want a wrapper name or a {name, kwargs} table", at, w, w)
		}
		if n := out[i].Name; n == "" || strings.ContainsAny(n, " /\\") || !strings.ContainsAny(n, ".:") {
			return nil, fmt.Errorf("%s: name %q: want \"package.module.Class\"", at, n)
		}
	}
	return out, nil
}

// startGym starts the child for n copies of env id and reads the spaces.
func startGym(id string, n int, opts Options) (*gymHost, error) {
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
		return nil, fmt.Errorf("python interpreter: %w", err)
	}
	h := &gymHost{id: GymPrefix + id, timeout: start, stderr: &tailWriter{max: 8 << 10}, open: n}
	if err := h.start(path); err != nil {
		return nil, err
	}
	reply, err := h.call(append(make([]byte, 4), conf...))
	h.timeout = timeout
	if err != nil {
		h.close()
		var pe *gymEnvError
		if errors.As(err, &pe) && strings.Contains(pe.traceback, "ModuleNotFoundError") {
			pe.hint = fmt.Sprintf(" (interpreter %s, %s: give the env option \"python\" one that has the module, or install it there)", python, path)
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
	h.cmd = exec.Command(python, "-c", gymBridge)
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

// ID returns the env's id, "gym:" included.
func (g *GymEnv) ID() string { return g.h.id }

// ObservationSpace is the Gymnasium env's observation space.
func (g *GymEnv) ObservationSpace() Space { return g.h.obsSpace }

// ActionSpace is the Gymnasium env's action space.
func (g *GymEnv) ActionSpace() Space { return g.h.actSpace }

// Err returns the error of the last Reset or Step, nil if it succeeded.
func (g *GymEnv) Err() error { return g.err }

// Reset calls reset(seed=seed) in the child (seed=None for NoSeed, except
// on the first Reset, which seeds 0 as every env here does). On failure it
// returns a nil observation and Err says why.
func (g *GymEnv) Reset(seed int64) ([]float32, Info) {
	h := g.h
	f := binary.LittleEndian.AppendUint32(h.begin('R'), uint32(g.i))
	f = binary.LittleEndian.AppendUint64(f, uint64(h.seedFor(g.i, seed)))
	h.frame = f
	if g.err = h.exchange(f, g.i, 1, false); g.err != nil {
		g.err = fmt.Errorf("%s: reset: %w", h.id, g.err)
		return nil, Info{}
	}
	r := &h.res[g.i]
	return r.now.obs, r.now.info()
}

// Step calls step(action) in the child, the action converted to the
// space's Python form. On failure it returns a nil observation and Err says
// why.
func (g *GymEnv) Step(action []float32) ([]float32, float64, bool, bool, Info) {
	h := g.h
	f := binary.LittleEndian.AppendUint32(h.begin('S'), uint32(g.i))
	h.frame = appendFloats(f, action)
	if g.err = h.exchange(h.frame, g.i, 1, false); g.err != nil {
		g.err = fmt.Errorf("%s: step: %w", h.id, g.err)
		return nil, 0, false, false, Info{}
	}
	r := &h.res[g.i]
	return r.now.obs, r.reward, r.term, r.trunc, r.now.info()
}

// Render returns the env's frame from its render() — an env made with
// kwargs render_mode = "rgb_array" — or nil when it returns none or fails
// (Err says why).
func (g *GymEnv) Render() image.Image {
	h := g.h
	h.frame = binary.LittleEndian.AppendUint32(h.begin('P'), uint32(g.i))
	body, err := h.call(h.frame)
	if err == nil {
		var img image.Image
		if img, err = decodeFrame(body); err == nil {
			return img
		}
	}
	g.err = fmt.Errorf("%s: render: %w", h.id, err)
	return nil
}

// decodeFrame reads an 'I' answer into an image; a 0×0 frame is an error.
func decodeFrame(b []byte) (image.Image, error) {
	if len(b) < 12 {
		return nil, fmt.Errorf("short frame of %d bytes", len(b))
	}
	rows, cols := int(binary.LittleEndian.Uint32(b)), int(binary.LittleEndian.Uint32(b[4:]))
	ch := int(binary.LittleEndian.Uint32(b[8:]))
	px := b[12:]
	switch {
	case rows == 0 || cols == 0:
		return nil, errors.New(`the env rendered nothing (make it with kwargs = { render_mode = "rgb_array" })`)
	case ch != 3 && ch != 4:
		return nil, fmt.Errorf("a frame of %d channels, want 3 (RGB) or 4 (RGBA)", ch)
	case len(px) != rows*cols*ch:
		return nil, fmt.Errorf("a %d×%d×%d frame in %d bytes", rows, cols, ch, len(px))
	}
	img := image.NewRGBA(image.Rect(0, 0, cols, rows))
	for i := range rows * cols {
		p := px[i*ch:]
		img.Pix[4*i], img.Pix[4*i+1], img.Pix[4*i+2], img.Pix[4*i+3] = p[0], p[1], p[2], 255
	}
	return img, nil
}

// Close closes this env; the child exits once every env it hosts is
// closed. Closing twice is harmless.
func (g *GymEnv) Close() error {
	if g.closed {
		return nil
	}
	g.closed = true
	g.h.open--
	if g.h.open == 0 {
		g.h.close()
	}
	return nil
}

// pid returns the child's process id.
func (g *GymEnv) pid() int { return g.h.cmd.Process.Pid }

// seedFor returns the seed to send for env i: NoSeed on a never-seeded
// env becomes 0, as for every env here, and other seeds go through
// GymSeed.
func (h *gymHost) seedFor(i int, seed int64) int64 {
	if seed < 0 && !h.seeded[i] {
		seed = 0
	}
	h.seeded[i] = true
	if seed < 0 {
		return -1
	}
	return GymSeed(seed)
}

// GymSeed returns the seed a Python env receives for seed >= 0: seed
// itself below 2^32, otherwise (seed XOR seed>>32) mod 2^32 — the high 31
// bits folded into the low 32 — so that envs seeding NumPy's legacy
// RandomState, which takes only seeds below 2^32, accept every seed, and
// the same seed always gives the same episode.
func GymSeed(seed int64) int64 {
	if seed < 1<<32 {
		return seed
	}
	return (seed ^ seed>>32) & (1<<32 - 1)
}

// resetAll resets every env, env i with seeds[i], in one exchange.
func (h *gymHost) resetAll(seeds []int64) error {
	f := h.begin('A')
	for i, s := range seeds {
		f = binary.LittleEndian.AppendUint64(f, uint64(h.seedFor(i, s)))
	}
	h.frame = f
	return h.exchange(f, 0, len(seeds), false)
}

// stepAll steps every env in one exchange; the child resets the envs whose
// episode ended and returns their next first observation too.
func (h *gymHost) stepAll(actions []float32) error {
	h.frame = appendFloats(h.begin('V'), actions)
	return h.exchange(h.frame, 0, len(h.res), true)
}

func appendFloats(f []byte, x []float32) []byte {
	for _, a := range x {
		f = binary.LittleEndian.AppendUint32(f, math.Float32bits(a))
	}
	return f
}

// gymEnvError is a Python exception raised by one env of a child.
type gymEnvError struct {
	env       int
	traceback string
	hint      string // added to the first line
}

// Error puts the exception's own line (type and message) first, then the
// end of the traceback.
func (e *gymEnvError) Error() string {
	lines := strings.Split(strings.TrimRight(e.traceback, "\n"), "\n")
	cause := strings.TrimSpace(lines[len(lines)-1])
	lines = lines[max(0, len(lines)-12) : len(lines)-1]
	msg := "python exception: " + cause + e.hint
	if len(lines) > 0 {
		if !strings.HasPrefix(lines[0], "Traceback") {
			msg += "\n  ..."
		}
		msg += "\n" + strings.Join(lines, "\n")
	}
	return msg
}

// exchange sends a request about n envs, starting at env first, and
// decodes the answer into h.res.
func (h *gymHost) exchange(req []byte, first, n int, vector bool) error {
	body, err := h.call(req)
	if err != nil {
		return err
	}
	if err := h.decode(body, h.res[first:first+n], vector); err != nil {
		return h.fail(fmt.Errorf("bad answer: %w", err))
	}
	return nil
}

// Flags of an env in an answer.
const (
	gymTerminated = 1 << iota
	gymTruncated
	gymMask     // the observation came with an action mask
	gymReset    // a vector step ended the episode and the env was reset
	gymNextMask // the next episode's first observation came with a mask
)

// decode reads an answer about len(res) envs. Its layout is by column:
// the rewards (float64), the flags (uint8), the observations (float32),
// the masks of the envs with gymMask (one byte per entry), then for the
// envs with gymReset the next episode's first observations and the masks
// of those with gymNextMask.
func (h *gymHost) decode(b []byte, res []gymResult, vector bool) error {
	n, obsBytes := len(res), 4*h.obsSize
	if len(b) < n*(9+obsBytes) {
		return fmt.Errorf("%d bytes for %d envs, want at least %d", len(b), n, n*(9+obsBytes))
	}
	flags := b[8*n : 9*n]
	var masks, resets int
	for i, f := range flags {
		r := &res[i]
		r.reward = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		r.term, r.trunc, r.reset = f&gymTerminated != 0, f&gymTruncated != 0, f&gymReset != 0
		r.now.hasMask, r.next.hasMask = f&gymMask != 0, f&gymNextMask != 0
		if r.reset && (!vector || !(r.term || r.trunc)) || r.next.hasMask && !r.reset {
			return fmt.Errorf("env %d: flags %#x: a reset where no episode ended", i, f)
		}
		if (r.now.hasMask || r.next.hasMask) && h.maskSize == 0 {
			return fmt.Errorf("env %d: an action mask for %v", i, h.actSpace)
		}
		masks += int(f>>2&1) + int(f>>4&1)
		resets += int(f >> 3 & 1)
	}
	if want := n*(9+obsBytes) + masks*h.maskSize + resets*obsBytes; len(b) != want {
		return fmt.Errorf("%d bytes for %d envs with %d masks and %d resets, want %d", len(b), n, masks, resets, want)
	}
	rest := b[9*n:]
	for i := range res {
		readFloats(res[i].now.obs, rest[i*obsBytes:])
	}
	rest = rest[n*obsBytes:]
	for i := range res {
		if o := &res[i].now; o.hasMask {
			rest = readMask(o.mask, rest)
		}
	}
	for i := range res {
		if res[i].reset {
			readFloats(res[i].next.obs, rest)
			rest = rest[obsBytes:]
		}
	}
	for i := range res {
		if o := &res[i].next; o.hasMask {
			rest = readMask(o.mask, rest)
		}
	}
	return nil
}

func readFloats(dst []float32, b []byte) {
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
}

func readMask(dst []bool, b []byte) []byte {
	for i := range dst {
		dst[i] = b[i] != 0
	}
	return b[len(dst):]
}

// gymMaxFrame bounds an answer's length, so that a corrupt length cannot
// make the parent allocate without limit.
const gymMaxFrame = 1 << 30

// begin starts a request in h.frame: room for its length, then the tag.
func (h *gymHost) begin(tag byte) []byte {
	return append(h.frame[:0], 0, 0, 0, 0, tag)
}

// call sends one frame (req: 4 bytes for its length, then the message) and
// returns the body of the answer ('H' or 'O'), or an error: a *gymEnvError
// for 'E', otherwise the child is killed and the error is sticky.
func (h *gymHost) call(req []byte) ([]byte, error) {
	if h.dead != nil {
		return nil, h.dead
	}
	deadline := time.Now().Add(h.timeout)
	h.in.SetWriteDeadline(deadline)
	h.out.SetReadDeadline(deadline)
	binary.LittleEndian.PutUint32(req, uint32(len(req)-4))
	_, err := h.in.Write(req)
	if err == nil {
		err = h.read(h.head[:])
	}
	if err == nil {
		n := binary.LittleEndian.Uint32(h.head[:])
		if n == 0 || n > gymMaxFrame {
			err = fmt.Errorf("frame of %d bytes", n)
		} else {
			if cap(h.body) < int(n) {
				h.body = make([]byte, n)
			}
			h.body = h.body[:n]
			err = h.read(h.body)
		}
	}
	if err != nil {
		return nil, h.fail(err)
	}
	h.exchanges++
	body := h.body
	switch body[0] {
	case 'H', 'O', 'I':
		return body[1:], nil
	case 'E':
		if len(body) < 5 {
			return nil, h.fail(errors.New("short exception answer"))
		}
		return nil, &gymEnvError{env: int(binary.LittleEndian.Uint32(body[1:])), traceback: string(body[5:])}
	}
	return nil, h.fail(fmt.Errorf("unknown answer tag %q", body[0]))
}

// gymSpin is how long a read polls for the child's answer before it
// sleeps in the poller. A parent and child that both sleep between
// messages pay two wake-ups per exchange, which on an idle (virtual)
// machine cost tens of µs each; polling, with the CPU yielded to whoever
// needs it, keeps the answer of a fast env within a few µs.
const gymSpin = 200 * time.Microsecond

// read fills b from the child's stdout, polling for up to gymSpin before
// it waits in the poller (which honours the read deadline).
func (h *gymHost) read(b []byte) error {
	start := time.Now()
	for len(b) > 0 {
		var n int
		var rerr error
		err := h.outRaw.Read(func(fd uintptr) bool {
			for {
				n, rerr = rawRead(fd, b)
				if rerr != syscall.EAGAIN {
					return true
				}
				if time.Since(start) > gymSpin {
					return false
				}
				yield()
			}
		})
		switch {
		case err != nil:
			return err
		case rerr != nil:
			return rerr
		case n == 0:
			return io.ErrUnexpectedEOF
		}
		b = b[n:]
	}
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
	case timedOut:
		err = fmt.Errorf("python child (pid %d) did not answer within %v; killed it", pid, h.timeout)
	case io:
		err = fmt.Errorf("python child (pid %d) died (%v)", pid, h.waitErr)
	default:
		err = fmt.Errorf("python child (pid %d): %w; killed it", pid, err)
	}
	if tail := lastLines(h.stderr.String(), 12); tail != "" {
		err = fmt.Errorf("%w; its stderr ends:\n%s", err, tail)
	}
	h.dead = err
	return err
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

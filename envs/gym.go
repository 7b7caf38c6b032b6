package envs

import (
	"context"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
)

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
//     (0: none), counted in the child exactly as TimeLimit counts;
//   - "channels_first": true moves the channels of an [H, W, C] Box
//     observation first, as [C, H, W] (what the CNN encoder reads); a Box
//     whose first dimension is smaller than both others is [C, H, W]
//     already, and refused.
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
// The wire protocol with the child is in gym_protocol.go.
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

// NewGymEnv starts a child Python process running the Gymnasium env id
// (without the "gym:" prefix) with the options described at GymEnv. Make
// is the usual way in.
func NewGymEnv(id string, opts Options) (*GymEnv, error) {
	h, err := startGym(context.Background(), id, 1, opts)
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
	return newGymVector(context.Background(), id, n, opts)
}

// newGymVector is NewGymVector, giving up once ctx is done.
func newGymVector(ctx context.Context, id string, n int, opts Options) (*Vector, error) {
	if n <= 0 {
		return nil, fmt.Errorf("%d envs, want at least 1", n)
	}
	h, err := startGym(ctx, id, n, opts)
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

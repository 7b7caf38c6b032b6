package envs

import (
	"fmt"
	"image"
	"io"
	"slices"
)

// TimeLimit truncates episodes after a fixed number of steps, as Gymnasium's
// TimeLimit wrapper does: the step that reaches the limit reports
// truncated = true (together with terminated if the task also ended there).
type TimeLimit struct {
	env     Env
	limit   int
	elapsed int
}

// NewTimeLimit wraps env so that its episodes last at most limit steps;
// limit must be positive.
func NewTimeLimit(env Env, limit int) *TimeLimit {
	if limit <= 0 {
		panic(fmt.Sprintf("envs: time limit %d must be positive", limit))
	}
	return &TimeLimit{env: env, limit: limit}
}

// Limit returns the maximum episode length.
func (t *TimeLimit) Limit() int { return t.limit }

// Unwrap returns the wrapped env.
func (t *TimeLimit) Unwrap() Env { return t.env }

// ObservationSpace is the wrapped env's.
func (t *TimeLimit) ObservationSpace() Space { return t.env.ObservationSpace() }

// ActionSpace is the wrapped env's.
func (t *TimeLimit) ActionSpace() Space { return t.env.ActionSpace() }

// Reset resets the step count and the wrapped env.
func (t *TimeLimit) Reset(seed int64) ([]float32, Info) {
	t.elapsed = 0
	return t.env.Reset(seed)
}

// Step steps the wrapped env and truncates at the limit.
func (t *TimeLimit) Step(action []float32) ([]float32, float64, bool, bool, Info) {
	obs, r, term, trunc, info := t.env.Step(action)
	t.elapsed++
	if t.elapsed >= t.limit {
		trunc = true
	}
	return obs, r, term, trunc, info
}

// Close closes the wrapped env if it is an io.Closer (a gym env's child
// process), so that Vector.Close reaches it through the limit.
func (t *TimeLimit) Close() error {
	if c, ok := t.env.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Render draws the wrapped env, or returns nil if it cannot draw itself.
func (t *TimeLimit) Render() image.Image { return renderWrapped(t.env) }

// renderWrapped is the Render of a wrapper: the wrapped env's picture, or
// nil.
func renderWrapped(env Env) image.Image {
	img, _ := Render(env)
	return img
}

// MaskVelocity makes a fully observed env partially observable by dropping
// the observation entries that carry velocities, so that an agent must infer
// them from memory (rl-baselines3-zoo's "NoVel" tasks). It works on any env
// with a one-dimensional Box observation.
type MaskVelocity struct {
	env    Env
	keep   []int
	inSize int // the wrapped env's observation size
	space  Box
	obs    []float32
}

// NewMaskVelocity wraps env and removes the observation entries at the
// indices in drop.
func NewMaskVelocity(env Env, drop []int) (*MaskVelocity, error) {
	box, ok := env.ObservationSpace().(Box)
	if !ok || len(box.Dims) != 1 {
		return nil, fmt.Errorf("mask velocity: observation space %v is not a one-dimensional Box", env.ObservationSpace())
	}
	n := box.Dims[0]
	var keep []int
	for i := range n {
		if !slices.Contains(drop, i) {
			keep = append(keep, i)
		}
	}
	for _, d := range drop {
		if d < 0 || d >= n {
			return nil, fmt.Errorf("mask velocity: index %d outside observation of size %d", d, n)
		}
	}
	if len(keep) == 0 {
		return nil, fmt.Errorf("mask velocity: dropping %v leaves no observation", drop)
	}
	m := &MaskVelocity{env: env, keep: keep, inSize: n, obs: make([]float32, len(keep))}
	m.space = Box{Dims: []int{len(keep)}, Low: make([]float32, len(keep)), High: make([]float32, len(keep))}
	for j, i := range keep {
		m.space.Low[j], m.space.High[j] = box.Low[i], box.High[i]
	}
	return m, nil
}

// Unwrap returns the wrapped env.
func (m *MaskVelocity) Unwrap() Env { return m.env }

// ObservationSpace is the wrapped env's Box restricted to the kept entries.
func (m *MaskVelocity) ObservationSpace() Space { return m.space }

// ActionSpace is the wrapped env's.
func (m *MaskVelocity) ActionSpace() Space { return m.env.ActionSpace() }

// Reset resets the wrapped env and masks its observation.
func (m *MaskVelocity) Reset(seed int64) ([]float32, Info) {
	obs, info := m.env.Reset(seed)
	return m.mask(obs), info
}

// Step steps the wrapped env and masks its observation.
func (m *MaskVelocity) Step(action []float32) ([]float32, float64, bool, bool, Info) {
	obs, r, term, trunc, info := m.env.Step(action)
	return m.mask(obs), r, term, trunc, info
}

// Render draws the wrapped env, or returns nil if it cannot draw itself.
func (m *MaskVelocity) Render() image.Image { return renderWrapped(m.env) }

// Close closes the wrapped env if it is an io.Closer, as TimeLimit's does.
func (m *MaskVelocity) Close() error {
	if c, ok := m.env.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// mask returns the kept entries of obs; an observation of another size than
// the wrapped env's (nil from a gym env whose call failed) is returned as it
// is, for the output check to name.
func (m *MaskVelocity) mask(obs []float32) []float32 {
	if len(obs) != m.inSize {
		return obs
	}
	for j, i := range m.keep {
		m.obs[j] = obs[i]
	}
	return m.obs
}

package envs

import (
	"errors"
	"fmt"
	"image"
	"math"
)

// PositionOnlyCartPole is POPGym's Position Only CartPole (the paper's
// Stateless CartPole) and, with noise, its Noisy Position Only CartPole
// (Noisy Stateless CartPole): CartPole-v1's dynamics, start states and
// termination (the CartPole type steps it), observing only the cart's
// position x and the pole's angle θ, so that the velocities must be
// inferred from memory.
//
// POPGym rescales the reward and ends episodes itself: every step earns
// 1/L, the step on which the pole falls included, and the episode is
// truncated after L steps (POPGym's max_episode_length), so a return is
// the fraction of the L steps survived, 1 for balancing to the end.
// (POPGym gives −1 for a step whose CartPole reward is 0, which happens
// only when stepping on past the end without a reset.) With NoiseStd > 0,
// every observation, the first included, has N(0, NoiseStd²) noise added
// to both values (in float32) and is then clipped to the observation
// space.
//
// Observation Box([−4.8, −0.419], [4.8, 0.419]) ([x, θ], bounds twice the
// termination thresholds); action Discrete(2), 0 pushing left. POPGym's
// levels: PositionOnlyCartPole Easy, Medium and Hard are L = 200, 400 and
// 600 without noise; NoisyPositionOnlyCartPole Easy, Medium and Hard are
// L = 200 with NoiseStd 0.1, 0.2 and 0.3.
//
// The start state is drawn as CartPole's, so Reset(seed) starts where
// POPGym's reset(seed=seed) starts, and without noise every episode
// replays POPGym's from its seed. The noise is drawn from the same stream
// by Go's normal generator, not NumPy's: the noisy observations follow
// POPGym's distribution but not its draws.
type PositionOnlyCartPole struct {
	cart     *CartPole
	limit    int     // L, POPGym's max_episode_length
	noiseStd float64 // 0: no noise
	steps    int
	obs      [2]float32
	obsSpace Box
}

// PositionOnlyCartPoleConfig holds PositionOnlyCartPole's parameters,
// POPGym's max_episode_length and noise_sigma.
type PositionOnlyCartPoleConfig struct {
	MaxEpisodeLength int     // L: the episode is truncated after L steps, each worth 1/L
	NoiseStd         float64 // the standard deviation of the observation noise; 0 for none
}

// maxCartPoleLength bounds L, far beyond anything POPGym uses.
const maxCartPoleLength = 1 << 24

// NewPositionOnlyCartPole returns a PositionOnlyCartPole; call Reset
// before Step.
func NewPositionOnlyCartPole(c PositionOnlyCartPoleConfig) (*PositionOnlyCartPole, error) {
	if c.MaxEpisodeLength < 1 || c.MaxEpisodeLength > maxCartPoleLength {
		return nil, fmt.Errorf("PositionOnlyCartPole: max_episode_length = %d: want 1 to %d", c.MaxEpisodeLength, maxCartPoleLength)
	}
	if !(c.NoiseStd >= 0) || math.IsInf(c.NoiseStd, 1) {
		return nil, fmt.Errorf("PositionOnlyCartPole: noise_sigma = %v: want a finite number >= 0", c.NoiseStd)
	}
	cart := NewCartPole()
	full := cart.obsSpace
	space, err := NewBoxBounds([]float32{full.Low[0], full.Low[2]}, []float32{full.High[0], full.High[2]})
	if err != nil {
		return nil, fmt.Errorf("PositionOnlyCartPole: %w", err)
	}
	return &PositionOnlyCartPole{cart: cart, limit: c.MaxEpisodeLength, noiseStd: c.NoiseStd, obsSpace: space}, nil
}

// ObservationSpace returns the Box of [x, θ].
func (p *PositionOnlyCartPole) ObservationSpace() Space { return p.obsSpace }

// ActionSpace returns Discrete(2).
func (p *PositionOnlyCartPole) ActionSpace() Space { return Discrete{N: 2} }

// Reset starts CartPole's episode and observes its positions.
func (p *PositionOnlyCartPole) Reset(seed int64) ([]float32, Info) {
	p.steps = 0
	full, info := p.cart.Reset(seed)
	return p.observe(full), info
}

// Step steps CartPole, rescales its reward and truncates after L steps.
func (p *PositionOnlyCartPole) Step(action []float32) ([]float32, float64, bool, bool, Info) {
	full, r, terminated, _, info := p.cart.Step(action)
	p.steps++
	reward := 1 / float64(p.limit)
	if r == 0 {
		reward = -1
	}
	return p.observe(full), reward, terminated, p.steps >= p.limit, info
}

// Render draws the cart and pole, velocities and all.
func (p *PositionOnlyCartPole) Render() image.Image { return renderWrapped(p.cart) }

// observe keeps x and θ of CartPole's observation and adds the noise.
func (p *PositionOnlyCartPole) observe(full []float32) []float32 {
	p.obs[0], p.obs[1] = full[0], full[2]
	if p.noiseStd == 0 {
		return p.obs[:]
	}
	rng := p.cart.stream.rng // the stream CartPole drew its start from
	for i := range p.obs {
		noise := float32(p.noiseStd * rng.NormFloat64())
		p.obs[i] = min(max(p.obs[i]+noise, p.obsSpace.Low[i]), p.obsSpace.High[i])
	}
	return p.obs[:]
}

func init() {
	level := func(name string, c PositionOnlyCartPoleConfig) popgymLevel {
		summary := fmt.Sprintf("observe [x, θ] only; %d steps", c.MaxEpisodeLength)
		if c.NoiseStd > 0 {
			summary += fmt.Sprintf(", N(0, %g²) noise", c.NoiseStd)
		}
		return popgymLevel{name: name, summary: summary,
			make: func() (Env, error) { return NewPositionOnlyCartPole(c) }}
	}
	registerPOPGym("PositionOnlyCartPole", "CartPole observing [x, θ] only, reward 1/L a step, L steps at most", []string{"max_episode_length"},
		func(o Options) (Env, error) {
			limit, err := o.Int("max_episode_length", 200)
			if err != nil {
				return nil, err
			}
			return NewPositionOnlyCartPole(PositionOnlyCartPoleConfig{MaxEpisodeLength: limit})
		},
		level("Easy", PositionOnlyCartPoleConfig{MaxEpisodeLength: 200}),
		level("Medium", PositionOnlyCartPoleConfig{MaxEpisodeLength: 400}),
		level("Hard", PositionOnlyCartPoleConfig{MaxEpisodeLength: 600}))
	registerPOPGym("NoisyPositionOnlyCartPole", "PositionOnlyCartPole with Gaussian noise on the observations", []string{"max_episode_length", "noise_sigma"},
		func(o Options) (Env, error) {
			limit, errLimit := o.Int("max_episode_length", 200)
			std, errStd := o.Float("noise_sigma", 0.1)
			if err := errors.Join(errLimit, errStd); err != nil {
				return nil, err
			}
			return NewPositionOnlyCartPole(PositionOnlyCartPoleConfig{MaxEpisodeLength: limit, NoiseStd: std})
		},
		level("Easy", PositionOnlyCartPoleConfig{MaxEpisodeLength: 200, NoiseStd: 0.1}),
		level("Medium", PositionOnlyCartPoleConfig{MaxEpisodeLength: 200, NoiseStd: 0.2}),
		level("Hard", PositionOnlyCartPoleConfig{MaxEpisodeLength: 200, NoiseStd: 0.3}))
}

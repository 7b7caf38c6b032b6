package envs

import "math"

// Pendulum constants of Gymnasium 0.29.1.
const (
	pdMaxSpeed  = 8.0
	pdMaxTorque = 2.0
	pdDt        = 0.05
)

// Pendulum is Gymnasium's Pendulum-v1 without its time limit (Make adds 200
// steps). State [theta, theta_dot] with theta = 0 upright; observation
// [cos θ, sin θ, θ̇]; the action is a torque, clipped to [−2, 2]; the reward is
// −(θ² + 0.1·θ̇² + 0.001·u²) with θ normalised to [−π, π). It never terminates.
type Pendulum struct {
	g        float64
	state    [2]float64
	stream   stream
	obs      [3]float32
	obsSpace Box
}

// NewPendulum returns a Pendulum under gravity g (Gymnasium's default is 10).
func NewPendulum(g float64) *Pendulum {
	space, _ := NewBoxBounds([]float32{-1, -1, -pdMaxSpeed}, []float32{1, 1, pdMaxSpeed})
	return &Pendulum{g: g, obsSpace: space}
}

// ObservationSpace returns the Box of Gymnasium's Pendulum.
func (p *Pendulum) ObservationSpace() Space { return p.obsSpace }

// ActionSpace returns Box(-2, 2, [1]).
func (p *Pendulum) ActionSpace() Space { return NewBox(-pdMaxTorque, pdMaxTorque, 1) }

// Reset draws θ uniformly from [−π, π] and then θ̇ from [−1, 1]
// (Gymnasium's one uniform call with high = [π, 1]).
func (p *Pendulum) Reset(seed int64) ([]float32, Info) {
	rng := p.stream.resetNumPy(seed)
	p.state = [2]float64{rng.Uniform(-math.Pi, math.Pi), rng.Uniform(-1, 1)}
	return p.observe(), Info{}
}

// Step applies the clipped torque for 0.05 s (semi-implicit Euler).
func (p *Pendulum) Step(action []float32) ([]float32, float64, bool, bool, Info) {
	boxAction("Pendulum", action, 1)
	th, thdot := p.state[0], p.state[1]
	g, m, l, dt := p.g, 1.0, 1.0, pdDt
	u := clip(float64(action[0]), -pdMaxTorque, pdMaxTorque)
	an := angleNormalize(th)
	costs := an*an + 0.1*(thdot*thdot) + 0.001*(u*u)
	newThdot := thdot + (3*g/(2*l)*accurateSin(th)+3.0/(m*(l*l))*u)*dt
	newThdot = clip(newThdot, -pdMaxSpeed, pdMaxSpeed)
	newTh := th + newThdot*dt
	p.state = [2]float64{newTh, newThdot}
	return p.observe(), -costs, false, false, Info{}
}

func (p *Pendulum) observe() []float32 {
	sin, cos := sinCos(p.state[0])
	return fill32(p.obs[:], cos, sin, p.state[1])
}

func (p *Pendulum) physicsState() []float64 { return p.state[:] }
func (p *Pendulum) setPhysicsState(s []float64) []float32 {
	copy(p.state[:], s)
	return p.observe()
}

// angleNormalize maps x to [−π, π) as ((x + π) mod 2π) − π with Python's
// floored modulo (Go's math.Mod keeps the dividend's sign).
func angleNormalize(x float64) float64 {
	twoPi := 2 * math.Pi
	return pyMod(x+math.Pi, twoPi) - math.Pi
}

// pyMod is Python's float modulo: the result takes the divisor's sign.
func pyMod(x, y float64) float64 {
	r := math.Mod(x, y)
	if r != 0 && (r < 0) != (y < 0) {
		r += y
	}
	return r
}

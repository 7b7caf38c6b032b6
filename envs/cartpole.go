package envs

import "math"

// CartPole constants of Gymnasium 0.29.1 (Barto, Sutton & Anderson, 1983).
const (
	cpGravity        = 9.8
	cpMassCart       = 1.0
	cpMassPole       = 0.1
	cpTotalMass      = cpMassPole + cpMassCart
	cpLength         = 0.5 // half the pole's length
	cpPoleMassLength = cpMassPole * cpLength
	cpForceMag       = 10.0
	cpTau            = 0.02
	cpXThreshold     = 2.4
)

// cpThetaThreshold is 12 degrees, computed in float64 steps as Python does
// (a Go constant expression would round once and could differ in the last bit).
var cpThetaThreshold = func() float64 { pi := math.Pi; return 12 * 2 * pi / 360 }()

// CartPole is Gymnasium's CartPole-v1 without its time limit (Make adds the
// registered 500 steps). Observation [x, x_dot, theta, theta_dot]; action 0
// pushes the cart left, 1 right; reward +1 per step, including the step on
// which the pole falls or the cart leaves the track (terminated).
type CartPole struct {
	state           [4]float64
	stepsBeyondDone int // -1 while the episode runs
	stream          stream
	obs             [4]float32
	obsSpace        Box
}

// NewCartPole returns a CartPole; call Reset before Step.
func NewCartPole() *CartPole {
	high := []float32{cpXThreshold * 2, math.MaxFloat32, float32(cpThetaThreshold * 2), math.MaxFloat32}
	low := []float32{-high[0], -high[1], -high[2], -high[3]}
	space, _ := NewBoxBounds(low, high)
	return &CartPole{obsSpace: space, stepsBeyondDone: -1}
}

// ObservationSpace returns the Box of Gymnasium's CartPole.
func (c *CartPole) ObservationSpace() Space { return c.obsSpace }

// ActionSpace returns Discrete(2).
func (c *CartPole) ActionSpace() Space { return Discrete{N: 2} }

// Reset draws every state variable uniformly from [-0.05, 0.05], in
// order, as Gymnasium's uniform(low, high, size=(4,)).
func (c *CartPole) Reset(seed int64) ([]float32, Info) {
	rng := c.stream.resetNumPy(seed)
	for i := range c.state {
		c.state[i] = rng.Uniform(-0.05, 0.05)
	}
	c.stepsBeyondDone = -1
	return c.observe(), Info{}
}

// Step pushes the cart with a force of ±10 N and integrates one 0.02 s step
// with explicit Euler, Gymnasium's default integrator.
func (c *CartPole) Step(action []float32) ([]float32, float64, bool, bool, Info) {
	a := discreteAction("CartPole", action, 2)
	x, xDot, theta, thetaDot := c.state[0], c.state[1], c.state[2], c.state[3]
	force := -cpForceMag
	if a == 1 {
		force = cpForceMag
	}
	sin, cos := sinCos(theta)
	temp := (force + cpPoleMassLength*(thetaDot*thetaDot)*sin) / cpTotalMass
	thetaAcc := (cpGravity*sin - cos*temp) / (cpLength * (4.0/3.0 - cpMassPole*(cos*cos)/cpTotalMass))
	xAcc := temp - cpPoleMassLength*thetaAcc*cos/cpTotalMass
	x += cpTau * xDot
	xDot += cpTau * xAcc
	theta += cpTau * thetaDot
	thetaDot += cpTau * thetaAcc
	c.state = [4]float64{x, xDot, theta, thetaDot}

	terminated := x < -cpXThreshold || x > cpXThreshold || theta < -cpThetaThreshold || theta > cpThetaThreshold
	reward := 1.0
	if terminated {
		// Gymnasium rewards the step on which the pole falls and gives 0
		// for any step taken after that without a reset.
		c.stepsBeyondDone++
		if c.stepsBeyondDone > 0 {
			reward = 0
		}
	}
	return c.observe(), reward, terminated, false, Info{}
}

func (c *CartPole) observe() []float32 { return fill32(c.obs[:], c.state[:]...) }

func (c *CartPole) physicsState() []float64 { return c.state[:] }

func (c *CartPole) setPhysicsState(s []float64) []float32 {
	copy(c.state[:], s)
	c.stepsBeyondDone = -1
	return c.observe()
}

package envs

import "math"

// Acrobot constants of Gymnasium 0.29.1 (Sutton & Barto's "book" dynamics).
const (
	acLinkLength1 = 1.0
	acLinkMass1   = 1.0
	acLinkMass2   = 1.0
	acLinkCOM1    = 0.5
	acLinkCOM2    = 0.5
	acLinkMOI     = 1.0
	acGravity     = 9.8
	acMaxVel1     = 4 * math.Pi
	acMaxVel2     = 9 * math.Pi
)

// Acrobot is Gymnasium's Acrobot-v1 without its time limit (Make adds 500
// steps). State [theta1, theta2, dtheta1, dtheta2]; observation
// [cos θ1, sin θ1, cos θ2, sin θ2, dθ1, dθ2]; actions apply torque −1, 0, +1
// to the joint between the links; reward −1 per step until the free end
// swings above the bar (−cos θ1 − cos(θ1+θ2) > 1), which terminates with 0.
type Acrobot struct {
	state    [4]float64
	stream   stream
	obs      [6]float32
	obsSpace Box
}

// NewAcrobot returns an Acrobot; call Reset before Step.
func NewAcrobot() *Acrobot {
	high := []float32{1, 1, 1, 1, acMaxVel1, acMaxVel2}
	low := make([]float32, len(high))
	for i, h := range high {
		low[i] = -h
	}
	space, _ := NewBoxBounds(low, high)
	return &Acrobot{obsSpace: space}
}

// ObservationSpace returns the Box of Gymnasium's Acrobot.
func (a *Acrobot) ObservationSpace() Space { return a.obsSpace }

// ActionSpace returns Discrete(3).
func (a *Acrobot) ActionSpace() Space { return Discrete{N: 3} }

// Reset draws every state variable uniformly from [-0.1, 0.1], in order,
// and rounds it to float32: Gymnasium casts the start state with
// astype(np.float32) (its steps then compute in float64).
func (a *Acrobot) Reset(seed int64) ([]float32, Info) {
	rng := a.stream.resetNumPy(seed)
	for i := range a.state {
		a.state[i] = float64(float32(rng.Uniform(-0.1, 0.1)))
	}
	return a.observe(), Info{}
}

// Step integrates 0.2 s with one fourth-order Runge–Kutta step, wraps the
// angles to [−π, π] and clips the velocities.
func (a *Acrobot) Step(action []float32) ([]float32, float64, bool, bool, Info) {
	torque := float64(discreteAction("Acrobot", action, 3) - 1)
	s := acrobotRK4(a.state, torque)
	s[0] = wrapAngle(s[0], -math.Pi, math.Pi)
	s[1] = wrapAngle(s[1], -math.Pi, math.Pi)
	s[2] = clip(s[2], -acMaxVel1, acMaxVel1)
	s[3] = clip(s[3], -acMaxVel2, acMaxVel2)
	a.state = s
	terminated := -accurateCos(s[0])-accurateCos(s[1]+s[0]) > 1.0
	reward := -1.0
	if terminated {
		reward = 0
	}
	return a.observe(), reward, terminated, false, Info{}
}

func (a *Acrobot) observe() []float32 {
	s := a.state
	sin0, cos0 := sinCos(s[0])
	sin1, cos1 := sinCos(s[1])
	return fill32(a.obs[:], cos0, sin0, cos1, sin1, s[2], s[3])
}

func (a *Acrobot) physicsState() []float64 { return a.state[:] }
func (a *Acrobot) setPhysicsState(s []float64) []float32 {
	copy(a.state[:], s)
	return a.observe()
}

// acrobotRK4 integrates the state over one step of dt = 0.2 s with the
// classical Runge–Kutta scheme, summing terms in Gymnasium's order.
func acrobotRK4(y [4]float64, torque float64) [4]float64 {
	dt := 0.2 // a variable, so dt/2 and dt/6 round as in Python
	dt2 := dt / 2.0
	axpy := func(a float64, x [4]float64) (out [4]float64) {
		for i := range out {
			out[i] = y[i] + a*x[i]
		}
		return out
	}
	k1 := acrobotDeriv(y, torque)
	k2 := acrobotDeriv(axpy(dt2, k1), torque)
	k3 := acrobotDeriv(axpy(dt2, k2), torque)
	k4 := acrobotDeriv(axpy(dt, k3), torque)
	h := dt / 6.0
	var out [4]float64
	for i := range out {
		out[i] = y[i] + h*(k1[i]+2*k2[i]+2*k3[i]+k4[i])
	}
	return out
}

// acrobotDeriv returns the time derivative of the state under the given
// torque ("book" dynamics, Sutton & Barto 1998).
func acrobotDeriv(s [4]float64, a float64) [4]float64 {
	// Variables, not constants: Go folds constant expressions exactly, Python
	// rounds after every operation, and the golden tests see the difference.
	m1, m2 := float64(acLinkMass1), float64(acLinkMass2)
	l1 := float64(acLinkLength1)
	lc1, lc2 := float64(acLinkCOM1), float64(acLinkCOM2)
	i1, i2 := float64(acLinkMOI), float64(acLinkMOI)
	g, pi := float64(acGravity), math.Pi
	theta1, theta2, dtheta1, dtheta2 := s[0], s[1], s[2], s[3]
	sin2, cos2 := sinCos(theta2)
	d1 := m1*(lc1*lc1) + m2*(l1*l1+lc2*lc2+2*l1*lc2*cos2) + i1 + i2
	d2 := m2*(lc2*lc2+l1*lc2*cos2) + i2
	phi2 := m2 * lc2 * g * accurateCos(theta1+theta2-pi/2.0)
	phi1 := -m2*l1*lc2*(dtheta2*dtheta2)*sin2 -
		2*m2*l1*lc2*dtheta2*dtheta1*sin2 +
		(m1*lc1+m2*l1)*g*accurateCos(theta1-pi/2) + phi2
	ddtheta2 := (a + d2/d1*phi1 - m2*l1*lc2*(dtheta1*dtheta1)*sin2 - phi2) /
		(m2*(lc2*lc2) + i2 - (d2*d2)/d1)
	ddtheta1 := -(d2*ddtheta2 + phi1) / d1
	return [4]float64{dtheta1, dtheta2, ddtheta1, ddtheta2}
}

// wrapAngle shifts x by multiples of (hi − lo) into [lo, hi], by repeated
// subtraction as Gymnasium does (the result differs from a modulo in the last
// bits, and the golden tests compare those).
func wrapAngle(x, lo, hi float64) float64 {
	diff := hi - lo
	for x > hi {
		x -= diff
	}
	for x < lo {
		x += diff
	}
	return x
}

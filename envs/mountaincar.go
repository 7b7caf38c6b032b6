package envs

// Mountain car constants of Gymnasium 0.29.1 (Moore, 1990).
const (
	mcMinPosition = -1.2
	mcMaxPosition = 0.6
	mcMaxSpeed    = 0.07
)

// hill is the car-on-a-hill state and start distribution that both mountain
// car envs share.
type hill struct {
	state    [2]float64 // position, velocity
	stream   stream
	obs      [2]float32
	obsSpace Box
}

func newHill() hill {
	space, _ := NewBoxBounds([]float32{mcMinPosition, -mcMaxSpeed}, []float32{mcMaxPosition, mcMaxSpeed})
	return hill{obsSpace: space}
}

// ObservationSpace returns the Box of [position, velocity].
func (h *hill) ObservationSpace() Space { return h.obsSpace }

// Reset places the car at rest at a position drawn from [-0.6, -0.4].
func (h *hill) Reset(seed int64) ([]float32, Info) {
	rng := h.stream.resetNumPy(seed)
	h.state = [2]float64{rng.Uniform(-0.6, -0.4), 0}
	return h.observe(), Info{}
}

// move updates the velocity by accel and the position by the velocity,
// with Gymnasium's clipping, and reports whether the car reached goal.
func (h *hill) move(accel, goal float64) (terminated bool) {
	pos, vel := h.state[0], h.state[1]
	vel += accel
	vel = clip(vel, -mcMaxSpeed, mcMaxSpeed)
	pos += vel
	pos = clip(pos, mcMinPosition, mcMaxPosition)
	if pos == mcMinPosition && vel < 0 {
		vel = 0 // the car stops at the left wall
	}
	h.state = [2]float64{pos, vel}
	return pos >= goal && vel >= 0
}

func (h *hill) observe() []float32      { return fill32(h.obs[:], h.state[:]...) }
func (h *hill) physicsState() []float64 { return h.state[:] }
func (h *hill) setPhysicsState(s []float64) []float32 {
	copy(h.state[:], s)
	return h.observe()
}

// MountainCar is Gymnasium's MountainCar-v0 without its time limit (Make
// adds 200 steps). State and observation [position, velocity]; actions
// accelerate left, not at all, or right; reward −1 per step until the car
// reaches position 0.5 (terminated).
type MountainCar struct{ hill }

// NewMountainCar returns a MountainCar; call Reset before Step.
func NewMountainCar() *MountainCar { return &MountainCar{newHill()} }

// ActionSpace returns Discrete(3).
func (m *MountainCar) ActionSpace() Space { return Discrete{N: 3} }

// Step applies force (action−1)·0.001 against gravity 0.0025·cos(3·position).
func (m *MountainCar) Step(action []float32) ([]float32, float64, bool, bool, Info) {
	a := discreteAction("MountainCar", action, 3)
	force, gravity := 0.001, 0.0025
	terminated := m.move(float64(a-1)*force+accurateCos(3*m.state[0])*(-gravity), 0.5)
	return m.observe(), -1, terminated, false, Info{}
}

// MountainCarContinuous is Gymnasium's MountainCarContinuous-v0 without its
// time limit (Make adds 999 steps). The action, a force in [−1, 1] (clipped),
// accelerates the car by force·0.0015; reaching position 0.45 terminates
// with +100, and every step costs 0.1·action² of the unclipped action.
//
// Gymnasium stores this env's state in float32 (unlike MountainCar's) and,
// with NumPy 1.x promotion rules, computes each step in float64 from it; the
// port keeps both, rounding the state after every step.
type MountainCarContinuous struct{ hill }

// NewMountainCarContinuous returns a MountainCarContinuous; call Reset before
// Step.
func NewMountainCarContinuous() *MountainCarContinuous {
	return &MountainCarContinuous{newHill()}
}

// ActionSpace returns Box(-1, 1, [1]).
func (m *MountainCarContinuous) ActionSpace() Space { return NewBox(-1, 1, 1) }

// Step applies the clipped force; see the type's comment.
func (m *MountainCarContinuous) Step(action []float32) ([]float32, float64, bool, bool, Info) {
	boxAction("MountainCarContinuous", action, 1)
	a := float64(action[0])
	force := clip(a, -1, 1)
	terminated := m.move(force*0.0015-0.0025*accurateCos(3*m.state[0]), 0.45)
	reward := 0.0
	if terminated {
		reward = 100
	}
	reward -= a * a * 0.1
	m.state = [2]float64{float64(float32(m.state[0])), float64(float32(m.state[1]))}
	return m.observe(), reward, terminated, false, Info{}
}

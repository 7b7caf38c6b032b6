package envs

// Catch board size, as in bsuite's catch.
const (
	catchRows    = 10
	catchColumns = 5
)

// Catch is bsuite's Catch: a ball falls one row per step from a random
// column of the top row of a 10×5 board; a paddle on the bottom row,
// starting in the middle column, moves left (action 0), stays (1) or moves
// right (2). When the ball reaches the bottom row, after 9 steps, the
// episode terminates with +1 if the paddle is under it and −1 otherwise;
// every other reward is 0. The observation is the board as a 1×10×5 image
// (Box 0..1) with a 1 at the ball and at the paddle, so agents use a CNN
// encoder. A correct agent catches every ball (mean return 1).
type Catch struct {
	stream       stream
	ballX, ballY int
	paddleX      int
	obs          [catchRows * catchColumns]float32
	obsSpace     Box
}

// NewCatch returns a Catch; call Reset before Step.
func NewCatch() *Catch { return &Catch{obsSpace: NewBox(0, 1, 1, catchRows, catchColumns)} }

// ObservationSpace returns Box(0, 1, [1, 10, 5]).
func (c *Catch) ObservationSpace() Space { return c.obsSpace }

// ActionSpace returns Discrete(3): left, stay, right.
func (c *Catch) ActionSpace() Space { return Discrete{N: 3} }

// Reset drops a new ball from a random column and centres the paddle.
func (c *Catch) Reset(seed int64) ([]float32, Info) {
	rng := c.stream.reset(seed)
	c.ballX, c.ballY = rng.IntN(catchColumns), 0
	c.paddleX = catchColumns / 2
	return c.observe(), Info{}
}

// Step moves the paddle, then the ball.
func (c *Catch) Step(action []float32) ([]float32, float64, bool, bool, Info) {
	a := discreteAction("Catch", action, 3)
	c.paddleX = min(max(c.paddleX+a-1, 0), catchColumns-1)
	if c.ballY < catchRows-1 {
		c.ballY++
	}
	if c.ballY < catchRows-1 {
		return c.observe(), 0, false, false, Info{}
	}
	reward := -1.0
	if c.paddleX == c.ballX {
		reward = 1
	}
	return c.observe(), reward, true, false, Info{}
}

func (c *Catch) observe() []float32 {
	clear(c.obs[:])
	c.obs[c.ballY*catchColumns+c.ballX] = 1
	c.obs[(catchRows-1)*catchColumns+c.paddleX] = 1
	return c.obs[:]
}

func init() {
	mustRegister(Spec{ID: "Catch-v0", Summary: "bsuite's Catch: move a paddle under a falling ball (1×10×5 image)",
		New: func(o Options) (Env, error) { return NewCatch(), o.Only() }})
}

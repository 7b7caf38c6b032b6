package envs

import "math/rand/v2"

// breakout is MinAtar/Breakout-v0 (channels paddle, ball, trail, brick): the
// paddle on the bottom row moves left or right one cell a step; a ball
// travels diagonally one cell a step and bounces off the side walls, the
// ceiling, bricks and the paddle. Three full rows of bricks (rows 1–3)
// start the game and each brick the ball breaks gives +1. The episode
// terminates when the ball reaches the bottom row without the paddle there.
// The trail channel marks the ball's previous cell, which gives its
// direction. There is no difficulty ramping.
//
// Rules the documentation leaves open, as the original has them: the ball
// starts on row 3 in the left or right column (even odds) heading down
// towards the middle, the paddle in column 4. The paddle moves before the
// ball. A ball that would leave the grid sideways stays in the edge column
// and turns; one that would leave the top stays on row 0 and turns down. A
// ball entering a brick's cell breaks it and turns back vertically, staying
// on its row — unless the ball entered a brick's cell on the step before
// too: then it passes into this brick's cell, leaving the brick whole
// (MinAtar's strike rule, which keeps a ball from breaking bricks on two
// steps in a row). A ball entering the bottom row bounces, staying on its
// row, when the paddle is under it (vertical turn only) or in the cell it
// was entering (it hits the paddle's corner and goes back the way it came).
// When no brick is left, the three rows are rebuilt the next time the ball
// reaches the bottom row.
type breakout struct {
	ballX, ballY int
	dx, dy       int // ball direction, each ±1
	lastX, lastY int // the ball's previous cell (trail)
	paddle       int
	bricks       [minatarSize]uint16 // bit x of row y: a brick at (y, x)
	struck       bool                // the ball entered a brick's cell on the last step
}

const breakoutRows uint16 = 1<<minatarSize - 1

func (b *breakout) channels() int         { return 4 }
func (b *breakout) minimalActions() []int { return []int{maNoop, maLeft, maRight} }

func (b *breakout) reset(rng *rand.Rand) {
	b.ballY, b.dy = 3, 1
	if rng.IntN(2) == 0 {
		b.ballX, b.dx = 0, 1
	} else {
		b.ballX, b.dx = minatarSize-1, -1
	}
	b.lastX, b.lastY = b.ballX, b.ballY
	b.paddle = 4
	b.bricks = [minatarSize]uint16{1: breakoutRows, 2: breakoutRows, 3: breakoutRows}
	b.struck = false
}

func (b *breakout) step(a int, _ *rand.Rand) (float64, bool, bool) {
	b.paddle = minatarMoveX(b.paddle, a)
	b.lastX, b.lastY = b.ballX, b.ballY
	x, y := b.ballX+b.dx, b.ballY+b.dy
	if x < 0 || x >= minatarSize {
		x = min(max(x, 0), minatarSize-1)
		b.dx = -b.dx
	}
	reward, terminated, struck := 0.0, false, false
	switch {
	case y < 0:
		y, b.dy = 0, -b.dy
	case b.bricks[y]&(1<<x) != 0:
		struck = true
		if !b.struck {
			b.bricks[y] &^= 1 << x
			reward = 1
			y, b.dy = b.ballY, -b.dy
		}
	case y == minatarSize-1:
		if b.bricks == [minatarSize]uint16{} {
			b.bricks = [minatarSize]uint16{1: breakoutRows, 2: breakoutRows, 3: breakoutRows}
		}
		switch b.paddle {
		case b.ballX:
			y, b.dy = b.ballY, -b.dy
		case x:
			y, b.dx, b.dy = b.ballY, -b.dx, -b.dy
		default:
			terminated = true
		}
	}
	b.ballX, b.ballY, b.struck = x, y, struck
	return reward, terminated, false
}

func (b *breakout) observe(obs []float32) {
	minatarSet(obs, 0, minatarSize-1, b.paddle)
	minatarSet(obs, 1, b.ballY, b.ballX)
	minatarSet(obs, 2, b.lastY, b.lastX)
	for y, row := range b.bricks {
		for x := range minatarSize {
			if row&(1<<x) != 0 {
				minatarSet(obs, 3, y, x)
			}
		}
	}
}

func init() {
	registerMinAtar("Breakout", "MinAtar Breakout: bounce a ball off a paddle to break bricks (4×10×10 image)")
}

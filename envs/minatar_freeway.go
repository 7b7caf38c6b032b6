package envs

import "math/rand/v2"

// Freeway constants, from MinAtar's documentation: the chicken moves at most
// once every 3 steps and the game lasts 2,500 time steps.
const (
	freewayMoveInterval = 3
	freewayTimeLimit    = 2500
)

// freeway is MinAtar/Freeway-v0 (channels chicken, car, speed1 … speed5):
// the chicken starts on the bottom row in column 4 and moves only up or
// down, at most once every 3 steps. Each of rows 1–8 holds one car of
// speed k in 1–5 that moves one cell sideways after every k steps of
// waiting (on every (k+1)-th step, as the original's per-car timer counts
// MinAtar's "once every k frames") and wraps around at the edges; the trail
// behind a car is drawn in the channel speedk, so the trail's side gives
// the direction. A car that hits the chicken sends it back to the bottom
// row. Reaching the top row gives +1, puts the chicken back at the bottom
// and draws new car speeds and directions. There is no difficulty ramping.
//
// The game ends after 2,500 time steps: the step after the 2,500th (the
// 2,501st, as MinAtar counts) reports truncated, not terminated. The end
// comes from a clock the observation does not show, so it is a time limit
// outside what the agent can see: bootstrapping from the last state's value
// (truncated) estimates the return of the game an agent observes, whereas
// terminated would teach it that some clock-less states are worth nothing
// — the case Pardo et al. (2018, "Time limits in reinforcement learning")
// make for time limits the state does not include.
//
// Rules the documentation leaves open, as the original has them: cars start
// in column 0, each with a speed uniform in 1–5 and a direction with even
// odds; a new draw after a crossing changes speeds and directions, not
// positions. Within a step the chicken moves first (reaching row 0 scores at
// once), then each car, on its move steps, moves; the chicken is hit when it
// shares a cell with a car before or after the car's move.
type freeway struct {
	y, moveTimer, timeLeft int
	cars                   [8]freewayCar // car of row i+1
}

type freewayCar struct {
	x, timer int
	speed    int // steps between moves, 1–5
	dx       int // ±1
}

func (g *freeway) channels() int         { return 7 }
func (g *freeway) minimalActions() []int { return []int{maNoop, maUp, maDown} }

func (g *freeway) reset(rng *rand.Rand) {
	g.y, g.moveTimer, g.timeLeft = minatarSize-1, freewayMoveInterval, freewayTimeLimit
	for i := range g.cars {
		g.cars[i].x = 0
	}
	g.newSpeeds(rng)
}

// newSpeeds draws every car's speed and direction.
func (g *freeway) newSpeeds(rng *rand.Rand) {
	for i := range g.cars {
		c := &g.cars[i]
		c.speed = 1 + rng.IntN(5)
		c.dx = 1
		if rng.IntN(2) == 0 {
			c.dx = -1
		}
		c.timer = c.speed
	}
}

func (g *freeway) step(a int, rng *rand.Rand) (float64, bool, bool) {
	reward := 0.0
	if g.moveTimer == 0 {
		switch a {
		case maUp:
			g.y = max(g.y-1, 0)
			g.moveTimer = freewayMoveInterval
		case maDown:
			g.y = min(g.y+1, minatarSize-1)
			g.moveTimer = freewayMoveInterval
		}
	}
	if g.y == 0 {
		reward = 1
		g.y = minatarSize - 1
		g.newSpeeds(rng)
	}
	for i := range g.cars {
		c := &g.cars[i]
		if g.y == i+1 && c.x == 4 {
			g.y = minatarSize - 1
		}
		if c.timer > 0 {
			c.timer--
			continue
		}
		c.timer = c.speed
		c.x = (c.x + c.dx + minatarSize) % minatarSize
		if g.y == i+1 && c.x == 4 {
			g.y = minatarSize - 1
		}
	}
	if g.moveTimer > 0 {
		g.moveTimer--
	}
	g.timeLeft--
	return reward, false, g.timeLeft < 0
}

func (g *freeway) observe(obs []float32) {
	minatarSet(obs, 0, g.y, 4)
	for i, c := range g.cars {
		minatarSet(obs, 1, i+1, c.x)
		minatarSet(obs, 1+c.speed, i+1, (c.x-c.dx+minatarSize)%minatarSize)
	}
}

func init() {
	registerMinAtar("Freeway", "MinAtar Freeway: get the chicken across eight lanes of cars (7×10×10 image, 2,500 steps)")
}

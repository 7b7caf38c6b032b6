package envs

import "math/rand/v2"

// Asterix constants, MinAtar's: a new object every 10 steps, objects move
// every 5, and with ramping both intervals shrink (to every step at the
// least) every 100 steps. An interval k is a timer set to k that counts down
// by one at the end of every step and fires the event at the start of the
// step that finds it at 0: the first event comes on step k+1, then one every
// k steps. The ramp's timer also spends a step at 0 and one below it before
// it fires, so ramps come on step 102 and every 102 steps after.
const (
	asterixSpawnInterval = 10
	asterixMoveInterval  = 5
	asterixMinInterval   = 1
	asterixRampInterval  = 100
)

// asterix is MinAtar/Asterix-v0 (channels player, enemy, trail, gold): the
// player moves one cell a step in the four directions, between rows 1 and 8.
// Enemies and gold appear at the left or right edge of rows 1–8 and cross
// the grid horizontally. Picking up gold gives +1; touching an enemy
// terminates the episode. The trail channel marks the cell behind each
// moving object. With difficulty ramping, every 102 steps the spawn
// interval shrinks by one step (down to every step) and, every other time,
// so does the move interval; ramping stops when both are at one step.
//
// Rules the documentation leaves open, as the original has them: the player
// starts at row 5, column 5. Every spawn interval one object appears in a
// random empty row among 1–8 (none when all are taken), heading right from
// column 0 or left from column 9 with even odds, gold with probability 1/3;
// the first appears on step 11 and objects first move on step 6. Within a
// step a due spawn comes first, then the player moves and touches what is in
// its new cell; then, on a move step, every object moves one cell (leaving
// at the edge) and touches the player if it enters the player's cell.
type asterix struct {
	ramping bool
	px, py  int
	objects [8]asterixObject // object of row i+1

	spawnInterval, spawnTimer int
	moveInterval, moveTimer   int
	sinceRamp, ramps          int // steps since the last ramp, ramps so far
}

type asterixObject struct {
	active, gold bool
	x, dx        int
}

func (g *asterix) channels() int         { return 4 }
func (g *asterix) minimalActions() []int { return []int{maNoop, maLeft, maUp, maRight, maDown} }

func (g *asterix) reset(*rand.Rand) {
	g.px, g.py = 5, 5
	g.objects = [8]asterixObject{}
	g.spawnInterval, g.spawnTimer = asterixSpawnInterval, asterixSpawnInterval
	g.moveInterval, g.moveTimer = asterixMoveInterval, asterixMoveInterval
	g.sinceRamp, g.ramps = 0, 0
}

func (g *asterix) step(a int, rng *rand.Rand) (float64, bool, bool) {
	if g.spawnTimer == 0 {
		g.spawn(rng)
		g.spawnTimer = g.spawnInterval
	}
	g.px = minatarMoveX(g.px, a)
	switch a {
	case maUp:
		g.py = max(g.py-1, 1)
	case maDown:
		g.py = min(g.py+1, 8)
	}
	reward, terminated := g.touch(0, false)
	if g.moveTimer == 0 {
		g.moveTimer = g.moveInterval
		for i := range g.objects {
			o := &g.objects[i]
			if !o.active {
				continue
			}
			o.x += o.dx
			if o.x < 0 || o.x >= minatarSize {
				o.active = false
			}
		}
		reward, terminated = g.touch(reward, terminated)
	}
	g.spawnTimer--
	g.moveTimer--
	if g.ramping && (g.spawnInterval > asterixMinInterval || g.moveInterval > asterixMinInterval) {
		g.sinceRamp++
		if g.sinceRamp > asterixRampInterval+1 {
			g.ramp()
		}
	}
	return reward, terminated, false
}

// ramp shortens the spawn interval and, every other ramp, the move
// interval, each down to asterixMinInterval.
func (g *asterix) ramp() {
	if g.spawnInterval > asterixMinInterval {
		g.spawnInterval--
	}
	if g.moveInterval > asterixMinInterval && g.ramps%2 == 1 {
		g.moveInterval--
	}
	g.ramps++
	g.sinceRamp = 0
}

// spawn puts a new object in a random empty row.
func (g *asterix) spawn(rng *rand.Rand) {
	var free [8]int
	n := 0
	for i, o := range g.objects {
		if !o.active {
			free[n] = i
			n++
		}
	}
	if n == 0 {
		return
	}
	o := &g.objects[free[rng.IntN(n)]]
	*o = asterixObject{active: true, x: 0, dx: 1}
	if rng.IntN(2) == 0 {
		o.x, o.dx = minatarSize-1, -1
	}
	o.gold = rng.Float64() < 1.0/3
}

// touch resolves the object in the player's cell: gold adds 1 to reward and
// goes, an enemy ends the episode.
func (g *asterix) touch(reward float64, terminated bool) (float64, bool) {
	o := &g.objects[g.py-1]
	if o.active && o.x == g.px {
		if o.gold {
			o.active = false
			reward++
		} else {
			terminated = true
		}
	}
	return reward, terminated
}

func (g *asterix) observe(obs []float32) {
	minatarSet(obs, 0, g.py, g.px)
	for i, o := range g.objects {
		if !o.active {
			continue
		}
		c := 1
		if o.gold {
			c = 3
		}
		minatarSet(obs, c, i+1, o.x)
		minatarSet(obs, 2, i+1, o.x-o.dx)
	}
}

func init() {
	registerMinAtar("Asterix", "MinAtar Asterix: collect gold, dodge enemies crossing the grid (4×10×10 image)")
}

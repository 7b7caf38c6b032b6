package envs

import "math/rand/v2"

// Seaquest constants, MinAtar's: 200 steps of oxygen, at most 6 divers
// aboard, a new enemy every 20 steps and a new diver every 30, enemies and
// divers move every 5 steps, enemy subs shoot every 10 and the player's sub
// every 5 at most. The spawn intervals and the player's cool-down are timers
// of the whole game, set to k and counting down at the end of every step
// (the first spawn on step k+1, then one every k steps). The move and shot
// intervals are timers of each object, set to k when it appears and counted
// down in its own update, which does the move (or shot) instead of counting
// when it finds the timer at 0: such an object acts once every k+1 steps.
const (
	sqMaxOxygen     = 200
	sqMaxDivers     = 6
	sqSpawnInterval = 20
	sqDiverInterval = 30
	sqMoveInterval  = 5
	sqDiverMove     = 5
	sqShotInterval  = 10
	sqShotCooldown  = 5
	sqMaxObjects    = 32 // of each kind at once; more are not spawned
)

// seaquest is MinAtar/Seaquest-v0 (channels sub_front, sub_back,
// friendly_bullet, trail, enemy_bullet, enemy_fish, enemy_sub,
// oxygen_guage, diver_guage, diver): the player's two-cell submarine moves
// one cell a step anywhere in rows 0–8 (row 0 is the surface), faces the
// way it last moved sideways, and fires bullets from its front that travel
// one cell a step. Enemy fish and subs cross rows 1–8 from either edge;
// enemy subs shoot bullets ahead of them. Each enemy shot gives +1. Divers
// cross the same way; touching one takes it aboard (at most 6, shown as a
// bar along row 9 of diver_guage ending in column 8). Oxygen (a bar along row 9 of
// oxygen_guage, one cell per 20 units) falls by one each step below the
// surface. Surfacing with a diver aboard refills the oxygen and lets one
// diver off — or all six when the sub is full, for a bonus of +1 per
// oxygen cell left — and, with difficulty ramping, makes enemies spawn one
// step sooner (down to every step) and, every other time, move one step
// sooner (down to every 3rd step). The episode terminates when the sub is
// hit by a fish, a sub or a bullet, runs out of oxygen, or surfaces with
// no diver aboard. The trail channel marks the cell behind each moving
// enemy and diver.
//
// The rules' order and timing follow the original (MinAtar's source, read
// for them): the sub starts on the surface in column 5 facing left, with
// full oxygen; being there at the start does not count as surfacing. New enemies appear in a random row
// among 1–8 — none when that row holds an enemy heading the other way — at
// column 0 heading right or column 9 heading left (even odds), a sub with
// probability 1/3; divers likewise, in any row. A step spawns what is due,
// moves the sub (or fires), then moves bullets (hitting enemies they
// enter), divers, enemy subs, enemy bullets and fish; every enemy and enemy
// bullet checks the sub's cell before and after it moves. An enemy sub
// shoots from its own cell after its update (so its bullet, moving in the
// same step, first shows one cell ahead), even on the step it leaves the
// grid or is shot. Then the oxygen: the episode terminates when a step
// begins with none left; below the surface it falls by one, and reaching
// the surface from below with a diver aboard surfaces.
//
// Two quirks of the original are kept on purpose, so that scores compare
// with MinAtar's: surfacing with six divers lets all six off and then one
// more, leaving the count at -1 (shown as an empty gauge) and every later
// surfacing safe until the count is back at 0; and a sub that is shot or
// leaves the grid can still fire on that step.
type seaquest struct {
	ramping bool
	x, y    int
	facing  int // ±1
	oxygen  int
	divers  int // can drop below 0 (see surfaceWithDivers)
	surface bool

	bullets, enemyBullets, fish, subs, diversIn sqList

	spawnInterval, moveInterval       int
	spawnTimer, diverTimer, shotTimer int
	ramps                             int
}

// sqObject is anything that moves across a row: a bullet, a fish, an enemy
// sub or a diver.
type sqObject struct {
	x, y, dx          int
	moveTimer, shotIn int
}

// sqList is a fixed-capacity list of objects; removal keeps the order.
type sqList struct {
	n    int
	objs [sqMaxObjects]sqObject
}

func (l *sqList) add(o sqObject) {
	if l.n < sqMaxObjects {
		l.objs[l.n] = o
		l.n++
	}
}

// keep removes every object for which keep is false, in place.
func (l *sqList) filter(keep func(*sqObject) bool) {
	n := 0
	for i := range l.n {
		if keep(&l.objs[i]) {
			l.objs[n] = l.objs[i]
			n++
		}
	}
	l.n = n
}

// hit removes the first object at (y, x) and reports whether there was one.
func (l *sqList) hit(y, x int) bool {
	for i := range l.n {
		if o := l.objs[i]; o.x == x && o.y == y {
			copy(l.objs[i:l.n], l.objs[i+1:l.n])
			l.n--
			return true
		}
	}
	return false
}

func newSeaquest(ramping bool) *seaquest { return &seaquest{ramping: ramping} }

func (g *seaquest) channels() int { return 10 }
func (g *seaquest) minimalActions() []int {
	return []int{maNoop, maLeft, maUp, maRight, maDown, maFire}
}

func (g *seaquest) reset(*rand.Rand) {
	*g = seaquest{ramping: g.ramping}
	g.x, g.y, g.facing = 5, 0, -1
	g.oxygen, g.surface = sqMaxOxygen, true
	g.spawnInterval, g.moveInterval = sqSpawnInterval, sqMoveInterval
	g.spawnTimer, g.diverTimer = sqSpawnInterval, sqDiverInterval
}

// step advances the game by one frame. It is one long function on purpose:
// its phases run in MinAtar's order, and the random draws with them, so
// reading it beside the original's act() is how the port is checked.
func (g *seaquest) step(a int, rng *rand.Rand) (float64, bool, bool) {
	if g.spawnTimer == 0 {
		g.spawnEnemy(rng)
		g.spawnTimer = g.spawnInterval
	}
	if g.diverTimer == 0 {
		g.spawnDiver(rng)
		g.diverTimer = sqDiverInterval
	}
	switch a {
	case maFire:
		if g.shotTimer == 0 {
			g.bullets.add(sqObject{x: g.x, y: g.y, dx: g.facing})
			g.shotTimer = sqShotCooldown
		}
	case maLeft, maRight:
		g.x, g.facing = minatarMoveX(g.x, a), a-maUp // left -1, right +1
	case maUp:
		g.y = max(g.y-1, 0)
	case maDown:
		g.y = min(g.y+1, 8)
	}

	reward, dead := 0.0, false
	// The player's bullets.
	g.bullets.filter(func(b *sqObject) bool {
		b.x += b.dx
		if b.x < 0 || b.x >= minatarSize {
			return false
		}
		if g.fish.hit(b.y, b.x) || g.subs.hit(b.y, b.x) {
			reward++
			return false
		}
		return true
	})
	// Divers.
	g.diversIn.filter(func(d *sqObject) bool {
		if g.pickUp(d) {
			return false
		}
		if d.moveTimer > 0 {
			d.moveTimer--
			return true
		}
		d.moveTimer = sqDiverMove
		d.x += d.dx
		if d.x < 0 || d.x >= minatarSize {
			return false
		}
		return !g.pickUp(d)
	})
	// Enemy subs, which shoot.
	g.subs.filter(func(s *sqObject) bool {
		stays := g.advanceEnemy(s, &reward, &dead)
		if s.shotIn > 0 {
			s.shotIn--
		} else {
			s.shotIn = sqShotInterval
			g.enemyBullets.add(sqObject{x: s.x, y: s.y, dx: s.dx})
		}
		return stays
	})
	// Enemy bullets.
	g.enemyBullets.filter(func(b *sqObject) bool {
		if b.x == g.x && b.y == g.y {
			dead = true
		}
		b.x += b.dx
		if b.x < 0 || b.x >= minatarSize {
			return false
		}
		if b.x == g.x && b.y == g.y {
			dead = true
		}
		return true
	})
	// Fish.
	g.fish.filter(func(f *sqObject) bool { return g.advanceEnemy(f, &reward, &dead) })

	// Oxygen and surfacing.
	if g.oxygen <= 0 {
		dead = true
	}
	if g.y > 0 {
		g.surface = false
		g.oxygen--
	} else if !g.surface {
		g.surface = true
		if g.divers == 0 {
			dead = true
		} else {
			reward += g.surfaceWithDivers()
		}
	}
	if g.shotTimer > 0 {
		g.shotTimer--
	}
	g.spawnTimer--
	g.diverTimer--
	return reward, dead, false
}

// advanceEnemy moves fish or enemy sub e on its move steps, sets dead when
// it shares the sub's cell before or after, and adds 1 to reward when it
// runs into a bullet. It reports whether e stays.
func (g *seaquest) advanceEnemy(e *sqObject, reward *float64, dead *bool) bool {
	if e.x == g.x && e.y == g.y {
		*dead = true
	}
	if e.moveTimer > 0 {
		e.moveTimer--
		return true
	}
	e.moveTimer = g.moveInterval
	e.x += e.dx
	if e.x < 0 || e.x >= minatarSize {
		return false
	}
	if e.x == g.x && e.y == g.y {
		*dead = true
	}
	if g.bullets.hit(e.y, e.x) {
		*reward++
		return false
	}
	return true
}

// pickUp takes diver d aboard if the sub is in its cell and has room.
func (g *seaquest) pickUp(d *sqObject) bool {
	if d.x == g.x && d.y == g.y && g.divers < sqMaxDivers {
		g.divers++
		return true
	}
	return false
}

// surfaceWithDivers refills the oxygen, lets divers off, ramps the
// difficulty and returns the bonus. Six divers aboard earn the bonus and
// all leave, and then, as in the original, one more: the count drops to -1.
func (g *seaquest) surfaceWithDivers() float64 {
	bonus := 0.0
	if g.divers == sqMaxDivers {
		bonus = float64(g.oxygen * minatarSize / sqMaxOxygen)
		g.divers = 0
	}
	g.divers--
	g.oxygen = sqMaxOxygen
	if g.ramping {
		if g.moveInterval > 2 && g.ramps%2 == 1 {
			g.moveInterval--
		}
		if g.spawnInterval > 1 {
			g.spawnInterval--
		}
		g.ramps++
	}
	return bonus
}

// spawnEnemy adds a fish or (1 in 3) a sub at an edge of a random row,
// unless that row holds an enemy heading the other way.
func (g *seaquest) spawnEnemy(rng *rand.Rand) {
	o := sqObject{y: 1 + rng.IntN(8), dx: 1}
	if rng.IntN(2) == 0 {
		o.x, o.dx = minatarSize-1, -1
	}
	sub := rng.Float64() < 1.0/3
	for _, l := range [2]*sqList{&g.fish, &g.subs} {
		for _, e := range l.objs[:l.n] {
			if e.y == o.y && e.dx != o.dx {
				return
			}
		}
	}
	o.moveTimer = g.moveInterval
	if sub {
		o.shotIn = sqShotInterval
		g.subs.add(o)
	} else {
		g.fish.add(o)
	}
}

// spawnDiver adds a diver at an edge of a random row.
func (g *seaquest) spawnDiver(rng *rand.Rand) {
	o := sqObject{y: 1 + rng.IntN(8), dx: 1, moveTimer: sqDiverMove}
	if rng.IntN(2) == 0 {
		o.x, o.dx = minatarSize-1, -1
	}
	g.diversIn.add(o)
}

func (g *seaquest) observe(obs []float32) {
	minatarSet(obs, 0, g.y, g.x)
	minatarSet(obs, 1, g.y, g.x-g.facing)
	for _, b := range g.bullets.objs[:g.bullets.n] {
		minatarSet(obs, 2, b.y, b.x)
	}
	for _, b := range g.enemyBullets.objs[:g.enemyBullets.n] {
		minatarSet(obs, 4, b.y, b.x)
	}
	for _, f := range g.fish.objs[:g.fish.n] {
		minatarSet(obs, 5, f.y, f.x)
		minatarSet(obs, 3, f.y, f.x-f.dx)
	}
	for _, s := range g.subs.objs[:g.subs.n] {
		minatarSet(obs, 6, s.y, s.x)
		minatarSet(obs, 3, s.y, s.x-s.dx)
	}
	for x := range g.oxygen * minatarSize / sqMaxOxygen {
		minatarSet(obs, 7, minatarSize-1, x)
	}
	for x := minatarSize - 1 - g.divers; x < minatarSize-1; x++ {
		minatarSet(obs, 8, minatarSize-1, x)
	}
	for _, d := range g.diversIn.objs[:g.diversIn.n] {
		minatarSet(obs, 9, d.y, d.x)
		minatarSet(obs, 3, d.y, d.x-d.dx)
	}
}

func init() {
	registerMinAtar("Seaquest", "MinAtar Seaquest: shoot enemies, rescue divers, surface for oxygen (10×10×10 image)")
}

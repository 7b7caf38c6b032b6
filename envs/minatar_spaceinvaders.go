package envs

import (
	"math/bits"
	"math/rand/v2"
)

// Space Invaders constants, MinAtar's: the cannon fires at most every 5
// steps, the aliens move every 12 steps (fewer when few are left) and shoot
// every 10. An interval k is a timer set to k that counts down by one at the
// end of every step and fires the event at the start of the step that finds
// it at 0: so the first event comes on step k+1 and then one every k steps.
const (
	siShotCooldown    = 5
	siMoveInterval    = 12
	siShotInterval    = 10
	siMinMoveInterval = 6
)

// spaceInvaders is MinAtar/SpaceInvaders-v0 (channels cannon, alien,
// alien_left, alien_right, friendly_bullet, enemy_bullet): the cannon on the
// bottom row moves left or right and fires bullets that travel up one row a
// step. A block of 4×6 aliens marches sideways; when one reaches the edge
// it heads towards, the block moves down a row and turns. The alien_left
// or alien_right channel is set on every alien's cell by the block's
// direction. Each alien shot gives +1. The aliens' bullets fall one row a
// step; the episode terminates when one hits the cannon or an alien reaches
// the cannon's cell or the bottom row. When the last alien is shot a new
// block appears; with difficulty ramping each new block moves one step
// faster (the interval between moves shrinks from 12 to at least 6).
//
// Rules the documentation leaves open, as the original has them: the cannon
// starts in column 5, the aliens in rows 0–3, columns 2–7, heading left. The
// aliens move every min(interval, aliens left) steps, so the last few speed
// up as in the arcade game. On step 11 and then every 10 steps the alien
// nearest the cannon (lowest in the column nearest the cannon's) fires from
// its own cell; a new block keeps the old block's direction and move timer.
// A step moves the cannon (or fires: the bullet starts on the bottom row),
// then moves every bullet, then the aliens, then lets the alien nearest the
// cannon shoot, then removes each alien that shares a cell with a friendly
// bullet, with that bullet. So with no shot fired the first alien bullet,
// from straight above a cannon that has not moved, hits it on step 17; a
// cannon that always fires shoots three aliens and is hit on step 18.
type spaceInvaders struct {
	ramping bool
	cannon  int
	// Grids as one bit per column (bit x of row y).
	aliens, bullets, enemyBullets [minatarSize]uint16
	dx                            int // the aliens' direction, ±1

	moveInterval, moveTimer, shotTimer, fireTimer int
}

func (g *spaceInvaders) channels() int         { return 6 }
func (g *spaceInvaders) minimalActions() []int { return []int{maNoop, maLeft, maRight, maFire} }

func (g *spaceInvaders) reset(*rand.Rand) {
	g.cannon, g.dx = 5, -1
	g.moveInterval, g.moveTimer = siMoveInterval, siMoveInterval
	g.newWave()
	g.bullets, g.enemyBullets = [minatarSize]uint16{}, [minatarSize]uint16{}
	g.shotTimer, g.fireTimer = siShotInterval, 0
}

// newWave puts a full block of aliens in rows 0–3, columns 2–7.
func (g *spaceInvaders) newWave() {
	const block uint16 = 0b0011111100
	g.aliens = [minatarSize]uint16{block, block, block, block}
}

func (g *spaceInvaders) step(a int, _ *rand.Rand) (float64, bool, bool) {
	g.cannon = minatarMoveX(g.cannon, a)
	if a == maFire && g.fireTimer == 0 {
		g.bullets[minatarSize-1] |= 1 << g.cannon
		g.fireTimer = siShotCooldown
	}
	copy(g.bullets[:], g.bullets[1:])
	g.bullets[minatarSize-1] = 0
	copy(g.enemyBullets[1:], g.enemyBullets[:minatarSize-1])
	g.enemyBullets[0] = 0
	cannon := uint16(1) << g.cannon
	terminated := g.enemyBullets[minatarSize-1]&cannon != 0 || g.aliens[minatarSize-1]&cannon != 0

	n := g.count()
	if g.moveTimer <= 0 {
		g.moveTimer = min(n, g.moveInterval)
		var all uint16
		for _, row := range g.aliens {
			all |= row
		}
		if (g.dx < 0 && all&1 != 0) || (g.dx > 0 && all&(1<<(minatarSize-1)) != 0) {
			g.dx = -g.dx
			if g.aliens[minatarSize-1] != 0 {
				terminated = true
			}
			copy(g.aliens[1:], g.aliens[:minatarSize-1])
			g.aliens[0] = 0
		} else {
			for y := range g.aliens {
				if g.dx < 0 {
					g.aliens[y] >>= 1
				} else {
					g.aliens[y] <<= 1
				}
			}
		}
		if g.aliens[minatarSize-1]&cannon != 0 {
			terminated = true
		}
	}
	if g.shotTimer == 0 {
		g.shotTimer = siShotInterval
		if y, x, ok := g.nearestAlien(); ok {
			g.enemyBullets[y] |= 1 << x
		}
	}
	reward := 0.0
	for y := range g.aliens {
		hit := g.aliens[y] & g.bullets[y]
		reward += float64(bits.OnesCount16(hit))
		g.aliens[y] &^= hit
		g.bullets[y] &^= hit
	}
	if g.fireTimer > 0 {
		g.fireTimer--
	}
	g.moveTimer--
	g.shotTimer--
	if g.count() == 0 {
		if g.ramping && g.moveInterval > siMinMoveInterval {
			g.moveInterval--
		}
		g.newWave()
	}
	return reward, terminated, false
}

func (g *spaceInvaders) count() int {
	n := 0
	for _, row := range g.aliens {
		n += bits.OnesCount16(row)
	}
	return n
}

// nearestAlien returns the lowest alien of the column nearest the cannon
// (the left one of two at the same distance).
func (g *spaceInvaders) nearestAlien() (y, x int, ok bool) {
	for d := 0; d < minatarSize; d++ {
		for _, x := range [2]int{g.cannon - d, g.cannon + d} {
			if x < 0 || x >= minatarSize {
				continue
			}
			for y := minatarSize - 1; y >= 0; y-- {
				if g.aliens[y]&(1<<x) != 0 {
					return y, x, true
				}
			}
		}
	}
	return 0, 0, false
}

func (g *spaceInvaders) observe(obs []float32) {
	minatarSet(obs, 0, minatarSize-1, g.cannon)
	dir := 2
	if g.dx > 0 {
		dir = 3
	}
	for y := range minatarSize {
		for x := range minatarSize {
			bit := uint16(1) << x
			if g.aliens[y]&bit != 0 {
				minatarSet(obs, 1, y, x)
				minatarSet(obs, dir, y, x)
			}
			if g.bullets[y]&bit != 0 {
				minatarSet(obs, 4, y, x)
			}
			if g.enemyBullets[y]&bit != 0 {
				minatarSet(obs, 5, y, x)
			}
		}
	}
}

func init() {
	registerMinAtar("SpaceInvaders", "MinAtar Space Invaders: shoot a marching block of aliens (6×10×10 image)")
}

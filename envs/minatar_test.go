package envs

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// minatarPolicyStats is one entry of
// ../shared/testdata/minatar/policy_stats.json: statistics of a fixed policy
// over 1,000 episodes of the original MinAtar.
type minatarPolicyStats struct {
	Episodes       int     `json:"episodes"`
	ReturnMean     float64 `json:"return_mean"`
	ReturnStd      float64 `json:"return_std"`
	LengthMean     float64 `json:"length_mean"`
	LengthStd      float64 `json:"length_std"`
	Channels       int     `json:"channels"`
	MinimalActions []int   `json:"minimal_actions"`
}

// minatarPolicy picks a full-set action from an observation.
type minatarPolicy func(obs []float32, rng *rand.Rand) int

func minatarUniform(_ []float32, rng *rand.Rand) int { return rng.IntN(maActions) }

// minatarTrackBall moves Breakout's paddle towards the ball's column.
func minatarTrackBall(obs []float32, _ *rand.Rand) int {
	paddle, ball := -1, -1
	for i := range minatarSize * minatarSize {
		if obs[i] == 1 {
			paddle = i % minatarSize
		}
		if obs[minatarSize*minatarSize+i] == 1 {
			ball = i % minatarSize
		}
	}
	switch {
	case ball < paddle:
		return maLeft
	case ball > paddle:
		return maRight
	}
	return maNoop
}

// minatarStatCases maps each policy_stats.json key to its game and policy.
var minatarStatCases = []struct {
	key, game string
	policy    minatarPolicy
}{
	{"breakout/uniform", "Breakout", minatarUniform},
	{"breakout/track_ball", "Breakout", minatarTrackBall},
	{"asterix/uniform", "Asterix", minatarUniform},
	{"freeway/uniform", "Freeway", minatarUniform},
	{"freeway/action2", "Freeway", func([]float32, *rand.Rand) int { return maUp }},
	{"space_invaders/uniform", "SpaceInvaders", minatarUniform},
	{"seaquest/uniform", "Seaquest", minatarUniform},
}

// minatarEpisodes plays n episodes of policy and returns the returns and
// lengths.
func minatarEpisodes(t testing.TB, game string, policy minatarPolicy, n int, seed uint64) (returns, lengths []float64) {
	env, err := NewMinAtar(game, DefaultMinAtarOptions())
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 99))
	action := []float32{0}
	for ep := range n {
		obs, _ := env.Reset(int64(seed)*1_000_000 + int64(ep))
		ret, length := 0.0, 0
		for {
			action[0] = float32(policy(obs, rng))
			var r float64
			var term, trunc bool
			obs, r, term, trunc, _ = env.Step(action)
			ret += r
			length++
			if term || trunc || length >= 10_000 {
				break
			}
		}
		returns = append(returns, ret)
		lengths = append(lengths, float64(length))
	}
	return returns, lengths
}

func meanStd(xs []float64) (mean, std float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		std += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(std / float64(len(xs)-1))
}

// TestMinAtarAgreesWithOriginal plays 1,000 episodes of each fixed policy of
// ../shared/testdata/minatar and requires each mean (return and length) to
// lie within 4 combined standard errors of the original's.
func TestMinAtarAgreesWithOriginal(t *testing.T) {
	var ref map[string]minatarPolicyStats
	readShared(t, "minatar/policy_stats.json", &ref)
	const n = 1000
	for _, c := range minatarStatCases {
		t.Run(c.key, func(t *testing.T) {
			want, ok := ref[c.key]
			if !ok {
				t.Fatalf("no reference entry %q", c.key)
			}
			returns, lengths := minatarEpisodes(t, c.game, c.policy, n, 1)
			for _, m := range []struct {
				name      string
				xs        []float64
				mean, std float64
			}{
				{"return", returns, want.ReturnMean, want.ReturnStd},
				{"length", lengths, want.LengthMean, want.LengthStd},
			} {
				agreesWithOriginal(t, c.key+" "+m.name, m.xs, m.mean, m.std, float64(want.Episodes))
			}
		})
	}
}

// newMinAtarGame returns a game without sticky actions, reset with seed 1,
// and its rules for setting up a situation by hand.
func newMinAtarGame[G minatarGame](t *testing.T, name string, ramping bool) (*MinAtar, G) {
	t.Helper()
	m, err := NewMinAtar(name, MinAtarOptions{DifficultyRamping: ramping})
	if err != nil {
		t.Fatal(err)
	}
	m.Reset(1)
	return m, m.game.(G)
}

// minatarStep plays one full-set action.
func minatarStep(m *MinAtar, a int) (float64, bool, bool) {
	_, r, term, trunc, _ := m.Step([]float32{float32(a)})
	return r, term, trunc
}

// minatarFireAndWait fires, then waits: steps steps in all. It returns the
// rewards' sum and whether the episode terminated.
func minatarFireAndWait(m *MinAtar, steps int) (total float64, terminated bool) {
	a := maFire
	for range steps {
		r, term, _ := minatarStep(m, a)
		total, terminated, a = total+r, terminated || term, maNoop
	}
	return total, terminated
}

func TestMinAtarBreakoutBallBouncesOffBricksWallsAndPaddle(t *testing.T) {
	m, b := newMinAtarGame[*breakout](t, "Breakout", true)

	// Up and right into the brick at row 3, column 5: it breaks (+1) and the
	// ball turns down on its own row.
	b.ballX, b.ballY, b.dx, b.dy = 4, 4, 1, -1
	if r, term, _ := minatarStep(m, maNoop); r != 1 || term {
		t.Fatalf("hitting a brick: reward %v, terminated %v; want 1, false", r, term)
	}
	if b.bricks[3]&(1<<5) != 0 || b.ballX != 5 || b.ballY != 4 || b.dy != 1 {
		t.Errorf("after the brick: brick left %v, ball (%d, %d) dy %d; want brick gone, ball (5, 4) heading down",
			b.bricks[3]&(1<<5) != 0, b.ballX, b.ballY, b.dy)
	}

	// Into the right wall: the ball stays in column 9 and turns.
	b.ballX, b.ballY, b.dx, b.dy = 9, 6, 1, 1
	minatarStep(m, maNoop)
	if b.ballX != 9 || b.ballY != 7 || b.dx != -1 {
		t.Errorf("at the wall: ball (%d, %d) dx %d; want (9, 7) heading left", b.ballX, b.ballY, b.dx)
	}

	// The paddle under the ball: a vertical bounce, the ball stays on row 8.
	b.ballX, b.ballY, b.dx, b.dy, b.paddle = 3, 8, 1, 1, 3
	if _, term, _ := minatarStep(m, maNoop); term || b.ballX != 4 || b.ballY != 8 || b.dx != 1 || b.dy != -1 {
		t.Errorf("paddle under the ball: terminated %v, ball (%d, %d) dir (%d, %d); want (4, 8) heading up-right",
			term, b.ballX, b.ballY, b.dx, b.dy)
	}

	// The paddle's corner (the cell the ball enters): it goes back the way
	// it came.
	b.ballX, b.ballY, b.dx, b.dy, b.paddle = 3, 8, 1, 1, 4
	if _, term, _ := minatarStep(m, maNoop); term || b.dx != -1 || b.dy != -1 {
		t.Errorf("paddle's corner: terminated %v, dir (%d, %d); want up-left", term, b.dx, b.dy)
	}

	// The paddle moves first: one step right reaches a ball two columns away.
	b.ballX, b.ballY, b.dx, b.dy, b.paddle = 3, 8, 1, 1, 2
	if _, term, _ := minatarStep(m, maRight); term {
		t.Error("the paddle moved under the ball and still missed")
	}

	// Missed: the episode terminates.
	b.ballX, b.ballY, b.dx, b.dy, b.paddle = 3, 8, 1, 1, 7
	if _, term, _ := minatarStep(m, maNoop); !term {
		t.Error("the ball passed the paddle and the episode went on")
	}
}

// After breaking a brick the ball passes into the next brick it enters on
// the following step, leaving it whole (MinAtar's strike rule; the same
// three steps played by the original give rewards 1, 0, 0 and the ball at
// (2, 5), (3, 6), (4, 7)).
func TestMinAtarBreakoutStrikesOnlyEveryOtherStep(t *testing.T) {
	m, b := newMinAtarGame[*breakout](t, "Breakout", true)
	b.bricks = [minatarSize]uint16{1: breakoutRows, 3: breakoutRows}
	b.ballX, b.ballY, b.dx, b.dy, b.paddle = 4, 2, 1, -1, 0
	for i, want := range []struct {
		r    float64
		y, x int
	}{{1, 2, 5}, {0, 3, 6}, {0, 4, 7}} {
		r, term, _ := minatarStep(m, maNoop)
		if r != want.r || term || b.ballY != want.y || b.ballX != want.x {
			t.Errorf("step %d: reward %v, terminated %v, ball (%d, %d); want %v, false, (%d, %d)",
				i+1, r, term, b.ballY, b.ballX, want.r, want.y, want.x)
		}
	}
	if b.bricks[3] != breakoutRows {
		t.Errorf("row 3 after the ball passed into it: %010b, want whole", b.bricks[3])
	}
}

func TestMinAtarBreakoutRebuildsClearedBricks(t *testing.T) {
	m, b := newMinAtarGame[*breakout](t, "Breakout", true)
	b.bricks = [minatarSize]uint16{}
	b.ballX, b.ballY, b.dx, b.dy, b.paddle = 3, 8, 1, 1, 3
	minatarStep(m, maNoop)
	for y := 1; y <= 3; y++ {
		if b.bricks[y] != breakoutRows {
			t.Fatalf("row %d after clearing: %010b, want full", y, b.bricks[y])
		}
	}
}

func TestMinAtarAsterixGoldEnemiesAndRamping(t *testing.T) {
	m, g := newMinAtarGame[*asterix](t, "Asterix", true)
	g.spawnTimer = 1000 // no new objects

	// Gold in the cell the player moves into: +1 and the gold goes.
	g.objects[g.py-1] = asterixObject{active: true, gold: true, x: g.px + 1, dx: 1}
	if r, term, _ := minatarStep(m, maRight); r != 1 || term || g.objects[g.py-1].active {
		t.Errorf("picking up gold: reward %v, terminated %v, gold left %v", r, term, g.objects[g.py-1].active)
	}

	// An enemy moving into the player's cell ends the episode.
	g.objects[g.py-1] = asterixObject{active: true, x: g.px - 1, dx: 1}
	g.moveTimer = 0
	if _, term, _ := minatarStep(m, maNoop); !term {
		t.Error("an enemy moved onto the player and the episode went on")
	}

	// Ramping: spawns and moves come sooner as time passes, the first time
	// on step 102 (spawns only), the second on step 204.
	m, g = newMinAtarGame[*asterix](t, "Asterix", true)
	g.py = 1
	for i := range 204 {
		if i == 203 && (g.spawnInterval != asterixSpawnInterval-1 || g.moveInterval != asterixMoveInterval) {
			t.Errorf("after 203 steps: spawn interval %d, move interval %d; want %d, %d",
				g.spawnInterval, g.moveInterval, asterixSpawnInterval-1, asterixMoveInterval)
		}
		g.objects = [8]asterixObject{} // nothing to collide with
		if _, term, _ := minatarStep(m, maNoop); term {
			t.Fatalf("terminated at step %d with no objects", i+1)
		}
	}
	if g.spawnInterval != asterixSpawnInterval-2 || g.moveInterval != asterixMoveInterval-1 {
		t.Errorf("after 204 steps: spawn interval %d, move interval %d; want %d, %d",
			g.spawnInterval, g.moveInterval, asterixSpawnInterval-2, asterixMoveInterval-1)
	}
	m, g = newMinAtarGame[*asterix](t, "Asterix", false)
	for range 204 {
		g.objects = [8]asterixObject{}
		minatarStep(m, maNoop)
	}
	if g.spawnInterval != asterixSpawnInterval || g.moveInterval != asterixMoveInterval {
		t.Errorf("without ramping, after 204 steps: spawn interval %d, move interval %d", g.spawnInterval, g.moveInterval)
	}
}

func TestMinAtarFreewayCrossingCollisionAndTimeLimit(t *testing.T) {
	m, g := newMinAtarGame[*freeway](t, "Freeway", false)
	for i := range g.cars {
		g.cars[i] = freewayCar{x: 0, speed: 5, timer: 5, dx: 1} // far from column 4
	}

	// Up from row 1: +1 and back to the bottom.
	g.y, g.moveTimer = 1, 0
	if r, _, _ := minatarStep(m, maUp); r != 1 || g.y != minatarSize-1 {
		t.Errorf("crossing: reward %v, chicken on row %d; want 1, row 9", r, g.y)
	}

	// A car entering the chicken's cell sends it to the bottom.
	g.y, g.moveTimer = 5, 2
	g.cars[4] = freewayCar{x: 3, speed: 1, timer: 0, dx: 1}
	minatarStep(m, maNoop)
	if g.y != minatarSize-1 {
		t.Errorf("hit by a car: chicken on row %d, want 9", g.y)
	}

	// The chicken moves at most once every 3 steps.
	g.y, g.moveTimer = 9, 0
	for range 3 {
		minatarStep(m, maUp)
	}
	if g.y != 8 {
		t.Errorf("3 steps up: chicken on row %d, want 8", g.y)
	}

	// 2,500 time steps, then the 2,501st ends the episode as truncated.
	m.Reset(2)
	for i := range freewayTimeLimit + 1 {
		_, term, trunc := minatarStep(m, maNoop)
		if term {
			t.Fatalf("terminated at step %d", i+1)
		}
		if trunc != (i == freewayTimeLimit) {
			t.Fatalf("step %d: truncated %v", i+1, trunc)
		}
	}
}

func TestMinAtarSpaceInvadersShotAlienBulletsAndRamping(t *testing.T) {
	m, g := newMinAtarGame[*spaceInvaders](t, "SpaceInvaders", true)
	g.shotTimer, g.moveTimer = 1000, 1000 // aliens hold still and hold fire

	// Fire from column 5: the bullet climbs to the lowest alien (row 3)
	// after 6 steps, for +1.
	total, term := minatarFireAndWait(m, 6)
	if term {
		t.Fatal("terminated")
	}
	if total != 1 || g.aliens[3]&(1<<5) != 0 || g.count() != 23 {
		t.Errorf("shooting: reward %v, alien at (3, 5) %v, %d left; want 1, gone, 23", total, g.aliens[3]&(1<<5) != 0, g.count())
	}

	// An alien bullet falling on the cannon ends the episode.
	g.enemyBullets[8] = 1 << g.cannon
	if _, term, _ := minatarStep(m, maNoop); !term {
		t.Error("an alien bullet hit the cannon and the episode went on")
	}

	// Clearing a block brings a new one that moves sooner (ramping).
	m, g = newMinAtarGame[*spaceInvaders](t, "SpaceInvaders", true)
	g.aliens = [minatarSize]uint16{6: 1 << 5}
	minatarStep(m, maFire)
	minatarStep(m, maNoop)
	minatarStep(m, maNoop)
	if g.count() != 24 || g.moveInterval != siMoveInterval-1 {
		t.Errorf("after the last alien: %d aliens, move interval %d; want 24, %d", g.count(), g.moveInterval, siMoveInterval-1)
	}
}

func TestMinAtarSeaquestOxygenDiversAndShots(t *testing.T) {
	// Oxygen runs out after 200 steps under water.
	m, g := newMinAtarGame[*seaquest](t, "Seaquest", true)
	g.spawnTimer, g.diverTimer = 1<<30, 1<<30 // an empty sea
	minatarStep(m, maDown)
	steps := 1
	for steps < 1000 {
		steps++
		if _, term, _ := minatarStep(m, maNoop); term {
			break
		}
	}
	if steps != sqMaxOxygen+1 {
		t.Errorf("oxygen ran out after %d steps under water, want %d", steps, sqMaxOxygen+1)
	}

	// Surfacing without a diver ends the episode; with one it refills the
	// oxygen, lets the diver off and ramps the spawn rate.
	m, g = newMinAtarGame[*seaquest](t, "Seaquest", true)
	g.spawnTimer, g.diverTimer = 1<<30, 1<<30
	minatarStep(m, maDown)
	if _, term, _ := minatarStep(m, maUp); !term {
		t.Error("surfaced with no diver and the episode went on")
	}
	m.Reset(1)
	g.spawnTimer, g.diverTimer = 1<<30, 1<<30
	minatarStep(m, maDown)
	g.diversIn.add(sqObject{x: g.x + 1, y: g.y, dx: 1, moveTimer: 5})
	minatarStep(m, maRight)
	if g.divers != 1 {
		t.Fatalf("moved onto a diver: %d aboard, want 1", g.divers)
	}
	for range 10 {
		minatarStep(m, maNoop)
	}
	if r, term, _ := minatarStep(m, maUp); r != 0 || term || g.divers != 0 || g.oxygen != sqMaxOxygen || g.spawnInterval != sqSpawnInterval-1 {
		t.Errorf("surfacing with one diver: reward %v, terminated %v, %d divers, oxygen %d, spawn interval %d",
			r, term, g.divers, g.oxygen, g.spawnInterval)
	}

	// Six divers aboard: all leave, +1 per oxygen cell left, and the count
	// drops to -1, as in the original.
	minatarStep(m, maDown)
	for range 49 {
		minatarStep(m, maNoop)
	}
	g.divers = sqMaxDivers
	if r, _, _ := minatarStep(m, maUp); r != float64((sqMaxOxygen-50)*minatarSize/sqMaxOxygen) || g.divers != -1 {
		t.Errorf("surfacing full after 50 steps: reward %v, %d divers left; want %d, -1", r, g.divers, (sqMaxOxygen-50)*minatarSize/sqMaxOxygen)
	}
	// With -1 aboard, surfacing again is safe.
	minatarStep(m, maDown)
	if _, term, _ := minatarStep(m, maUp); term || g.divers != -2 {
		t.Errorf("surfacing with -1 divers: terminated %v, %d divers left; want false, -2", term, g.divers)
	}

	// A bullet hitting a fish gives +1 (the sub starts facing left); a
	// fish reaching the sub ends it.
	m, g = newMinAtarGame[*seaquest](t, "Seaquest", true)
	g.spawnTimer, g.diverTimer = 1<<30, 1<<30
	minatarStep(m, maDown)
	g.fish.add(sqObject{x: g.x - 3, y: g.y, dx: 1, moveTimer: 100})
	total, _ := minatarFireAndWait(m, 3)
	if total != 1 || g.fish.n != 0 {
		t.Errorf("shooting a fish: reward %v, %d fish left; want 1, 0", total, g.fish.n)
	}
	g.fish.add(sqObject{x: g.x - 1, y: g.y, dx: 1, moveTimer: 0})
	if _, term, _ := minatarStep(m, maNoop); !term {
		t.Error("a fish swam into the sub and the episode went on")
	}
}

// MinAtar's ids: -v0 has the full action set, -v1 the minimal one, and
// the option minimal_actions chooses either under either id.
func TestMinAtarIDsAndActionSets(t *testing.T) {
	for _, name := range MinAtarGames() {
		m, err := NewMinAtar(name, MinAtarOptions{MinimalActions: true})
		if err != nil {
			t.Fatal(err)
		}
		minimal := len(m.game.minimalActions())
		for _, tt := range []struct {
			id   string
			opts Options
			want int
		}{
			{"MinAtar/" + name + "-v0", nil, maActions},
			{"MinAtar/" + name + "-v1", nil, minimal},
			{"MinAtar/" + name + "-v0", Options{"minimal_actions": true}, minimal},
			{"MinAtar/" + name + "-v1", Options{"minimal_actions": false}, maActions},
		} {
			env, err := Make(tt.id, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if n := env.ActionSpace().(Discrete).N; n != tt.want {
				t.Errorf("%s %v: %d actions, want %d", tt.id, tt.opts, n, tt.want)
			}
		}
	}
}

// An agent of 6 actions under a -v1 id without minimal_actions was trained
// when -v1 named the full set: it plays -v0.
func TestLegacyMinAtarID(t *testing.T) {
	six, three := Discrete{N: 6}, Discrete{N: 3}
	for _, tt := range []struct {
		id      string
		opts    Options
		actions Space
		want    string
	}{
		{"MinAtar/Breakout-v1", nil, six, "MinAtar/Breakout-v0"},
		{"MinAtar/SpaceInvaders-v1", Options{"sticky_action_prob": 0.0}, six, "MinAtar/SpaceInvaders-v0"},
		{"MinAtar/Breakout-v1", nil, three, "MinAtar/Breakout-v1"},
		{"MinAtar/Breakout-v1", Options{"minimal_actions": false}, six, "MinAtar/Breakout-v1"},
		{"MinAtar/Breakout-v0", nil, six, "MinAtar/Breakout-v0"},
		{"MinAtar/Seaquest-v1", nil, six, "MinAtar/Seaquest-v1"},
		{"MinAtar/Pong-v1", nil, six, "MinAtar/Pong-v1"},
		{"CartPole-v1", nil, Discrete{N: 2}, "CartPole-v1"},
	} {
		if got := LegacyMinAtarID(tt.id, tt.opts, tt.actions); got != tt.want {
			t.Errorf("LegacyMinAtarID(%s, %v, %v) = %s, want %s", tt.id, tt.opts, tt.actions, got, tt.want)
		}
	}
}

func TestMinAtarOptions(t *testing.T) {
	for _, tt := range []struct {
		opts Options
		want string
	}{
		{Options{"sticky_actions": 0.1}, "sticky_actions"},
		{Options{"sticky_action_prob": 1.5}, "sticky_action_prob"},
		{Options{"sticky_action_prob": "high"}, "sticky_action_prob"},
		{Options{"difficulty_ramping": 1}, "difficulty_ramping"},
		{Options{"minimal_actions": "yes"}, "minimal_actions"},
	} {
		if _, err := Make("MinAtar/Asterix-v1", tt.opts); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("options %v: error %v, want one naming %s", tt.opts, err, tt.want)
		}
	}
}

// With sticky_action_prob 1 the first action (the no-op) repeats forever:
// Breakout's paddle never leaves column 4.
func TestMinAtarStickyActionsRepeatThePreviousAction(t *testing.T) {
	env, err := Make("MinAtar/Breakout-v0", Options{"sticky_action_prob": 1.0})
	if err != nil {
		t.Fatal(err)
	}
	env.Reset(3)
	b := Unwrapped(env).(*MinAtar).game.(*breakout)
	for range 5 {
		env.Step([]float32{maRight})
		if b.paddle != 4 {
			t.Fatalf("paddle moved to %d with sticky probability 1", b.paddle)
		}
	}
	// Probability 0.5: some steps repeat, some do not.
	m, err := NewMinAtar("Breakout", MinAtarOptions{StickyActionProb: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	m.Reset(3)
	moved := 0
	for range 40 {
		before := m.game.(*breakout).paddle
		m.last = maNoop
		if _, _, term, _, _ := m.Step([]float32{maLeft}); term {
			m.Reset(NoSeed)
			continue
		}
		if m.game.(*breakout).paddle != before {
			moved++
		}
	}
	if moved == 0 || moved == 40 {
		t.Errorf("sticky probability 0.5: the paddle moved on %d of 40 steps", moved)
	}
}

func TestMinAtarSameSeedSameEpisode(t *testing.T) {
	for _, name := range MinAtarGames() {
		t.Run(name, func(t *testing.T) {
			play := func() []float32 {
				m, err := NewMinAtar(name, DefaultMinAtarOptions())
				if err != nil {
					t.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(5, 5))
				obs, _ := m.Reset(11)
				trace := append([]float32(nil), obs...)
				for range 300 {
					obs, r, term, trunc, _ := m.Step([]float32{float32(rng.IntN(maActions))})
					trace = append(append(trace, obs...), float32(r))
					if term || trunc {
						obs, _ = m.Reset(NoSeed)
						trace = append(trace, obs...)
					}
				}
				return trace
			}
			if !slices.Equal(play(), play()) {
				t.Error("two runs of the same seed and actions differ")
			}
		})
	}
}

func TestMinAtarPassesCheck(t *testing.T) {
	for _, name := range MinAtarGames() {
		for _, opts := range []MinAtarOptions{DefaultMinAtarOptions(), {MinimalActions: true}} {
			m, err := NewMinAtar(name, opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := Check(m, CheckOptions{Steps: 3000, Seed: 4}); err != nil {
				t.Errorf("%s %+v: %v", name, opts, err)
			}
		}
	}
}

func TestRenderMinAtarGolden(t *testing.T) {
	for _, name := range MinAtarGames() {
		m, err := NewMinAtar(name, DefaultMinAtarOptions())
		if err != nil {
			t.Fatal(err)
		}
		// Up to 40 steps from a fixed seed, stopping before the episode
		// ends: Breakout tracks the ball, Freeway goes up, the other games
		// move at random.
		rng := rand.New(rand.NewPCG(1, 2))
		obs, _ := m.Reset(3)
		var actions [][]float32
		for range 40 {
			a := minatarUniform(obs, rng)
			switch name {
			case "Breakout":
				a = minatarTrackBall(obs, rng)
			case "Freeway":
				a = maUp
			}
			actions = append(actions, []float32{float32(a)})
			var term, trunc bool
			if obs, _, term, trunc, _ = m.Step(actions[len(actions)-1]); term || trunc {
				actions = actions[:len(actions)-1]
				break
			}
		}
		checkGolden(t, "minatar-"+strings.ToLower(name), gamesRender(t, m, 3, actions...))
	}
}

// BenchmarkMinAtarStep measures one step of each game under random actions
// (resetting when an episode ends).
func BenchmarkMinAtarStep(b *testing.B) {
	for _, name := range MinAtarGames() {
		b.Run(name, func(b *testing.B) {
			m, err := NewMinAtar(name, DefaultMinAtarOptions())
			if err != nil {
				b.Fatal(err)
			}
			m.Reset(1)
			rng := rand.New(rand.NewPCG(1, 1))
			var actions [256][]float32
			for i := range actions {
				actions[i] = []float32{float32(rng.IntN(maActions))}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if _, _, term, trunc, _ := m.Step(actions[i%len(actions)]); term || trunc {
					m.Reset(NoSeed)
				}
			}
		})
	}
}

// TestMinAtarSpacesMatchOriginal holds the channel counts and minimal action
// sets to the original's, as recorded beside its policy statistics.
func TestMinAtarSpacesMatchOriginal(t *testing.T) {
	var ref map[string]minatarPolicyStats
	readShared(t, "minatar/policy_stats.json", &ref)
	for _, c := range minatarStatCases {
		want := ref[c.key]
		if want.Channels == 0 {
			continue // the entry records no spaces
		}
		m, err := NewMinAtar(c.game, MinAtarOptions{MinimalActions: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := m.ObservationSpace().Shape(); !slices.Equal(got, []int{want.Channels, minatarSize, minatarSize}) {
			t.Errorf("%s: observation shape %v, want [%d 10 10]", c.key, got, want.Channels)
		}
		if got := m.Actions(); !slices.Equal(got, want.MinimalActions) {
			t.Errorf("%s: minimal actions %v, want %v", c.key, got, want.MinimalActions)
		}
	}
}

// agreesWithOriginal fails the test when the mean of xs, the port's, lies
// more than 4 standard errors (the original's sample of refN episodes with
// mean and std, and the port's, combined) from the original's mean; an
// exact difference where neither varies counts as infinitely many.
func agreesWithOriginal(t *testing.T, what string, xs []float64, mean, std, refN float64) {
	t.Helper()
	got, sd := meanStd(xs)
	se := math.Sqrt(std*std/refN + sd*sd/float64(len(xs)))
	z := 0.0
	if se > 0 {
		z = (got - mean) / se
	} else if got != mean {
		z = math.Inf(1)
	}
	t.Logf("%s: original %.3f (sd %.3f), port %.3f (sd %.3f), z = %+.2f", what, mean, std, got, sd, z)
	if math.Abs(z) > 4 {
		t.Errorf("%s: mean %.3f is %.1f standard errors from the original's %.3f", what, got, z, mean)
	}
}

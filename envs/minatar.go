package envs

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// minatarSize is the side of every MinAtar grid.
const minatarSize = 10

// MinAtar's full action set, in its order.
const (
	maNoop = iota
	maLeft
	maUp
	maRight
	maDown
	maFire
	maActions
)

// minatarGame is the rules of one game; the MinAtar env wraps it with
// seeding, sticky actions, the action set and the observation buffer.
type minatarGame interface {
	// channels is the number of state channels C.
	channels() int
	// minimalActions lists the actions of the full set that matter.
	minimalActions() []int
	// reset starts a new game.
	reset(rng *rand.Rand)
	// step plays one full-set action.
	step(a int, rng *rand.Rand) (reward float64, terminated, truncated bool)
	// observe sets the cells of the state in obs ([C, 10, 10], zeroed).
	observe(obs []float32)
}

// MinAtarOptions are the options every MinAtar game takes (config keys in
// brackets).
type MinAtarOptions struct {
	// StickyActionProb is the probability that the previous action repeats
	// instead of the chosen one [sticky_action_prob], in [0, 1].
	StickyActionProb float64
	// DifficultyRamping lets the game speed up as it goes on
	// [difficulty_ramping]; Breakout and Freeway have no ramping.
	DifficultyRamping bool
	// MinimalActions shrinks the action space to the game's minimal action
	// set, in full-set order [minimal_actions; its default comes from the
	// id: false for "-v0", true for "-v1"].
	MinimalActions bool
}

// DefaultMinAtarOptions returns MinAtar's defaults: sticky actions with
// probability 0.1, ramping on, the full action set.
func DefaultMinAtarOptions() MinAtarOptions {
	return MinAtarOptions{StickyActionProb: 0.1, DifficultyRamping: true}
}

// MinAtarGames returns the game names NewMinAtar accepts. Each is
// registered twice, as MinAtar registers it with Gymnasium:
// "MinAtar/<name>-v0" with the full action set of 6 and "MinAtar/<name>-v1"
// with the game's minimal action set. The option minimal_actions, when
// given, chooses the set under either id (so "-v0" with minimal_actions =
// true is "-v1", and "-v1" with minimal_actions = false is "-v0").
func MinAtarGames() []string {
	return []string{"Breakout", "Asterix", "Freeway", "SpaceInvaders", "Seaquest"}
}

// MinAtar is one of the five games of MinAtar (Young and Tian 2019,
// arXiv:1903.03176) as an Env: Atari games shrunk to a 10×10 grid whose
// state is a stack of binary channels, one per kind of object. The games
// are written from the rules and constants of MinAtar's documentation and
// paper; the order and timing of events within a step follow MinAtar's
// (GPL) source, read for them and checked against it, no code taken. Each
// game's type (breakout, asterix, freeway, spaceInvaders, seaquest in this
// package's source) states its rules and timing. The games are held to the
// original: exactly under each constant action where the original is then
// deterministic, statistically elsewhere (minatar_original_test.go, against
// testdata/minatar and, where Python and MinAtar are at hand, the original
// itself through the gym bridge), and to its statistics of fixed policies
// (minatar_test.go, against ../shared/testdata/minatar).
//
// Observations are Box{0,1} of shape [C, 10, 10] (channel, row from the
// top, column from the left; channels in MinAtar's order). Actions are
// Discrete(6) — 0 no-op, 1 left, 2 up, 3 right, 4 down, 5 fire — or, with
// MinimalActions, the game's minimal action set as a smaller Discrete (see
// Actions; the ids ending in -v1): Breakout no-op, left, right; Asterix all but fire;
// Freeway no-op, up, down; SpaceInvaders no-op, left, right, fire; Seaquest
// all six. With probability StickyActionProb (0.1 by default, drawn from
// the env's own stream) the previous action repeats instead of the chosen
// one. Rewards and ends are MinAtar's:
//
//   - Breakout (paddle, ball, trail, brick): +1 a brick; terminated when the
//     ball passes the paddle; three new rows when all bricks are broken.
//   - Asterix (player, enemy, trail, gold): +1 a gold piece; terminated on
//     touching an enemy; ramping speeds up spawns and moves every 100 steps.
//   - Freeway (chicken, car, speed1 … speed5): +1 a crossing; a car sends
//     the chicken back to the bottom. The game ends itself on its 2,501st
//     step (after 2,500 time steps) and reports it as truncated, not
//     terminated: the clock is not in the observation, so the end is a time
//     limit the agent cannot see, and bootstrapping from the last state's
//     value is the right target for the game it observes (Pardo et al.
//     2018, "Time limits in reinforcement learning").
//   - SpaceInvaders (cannon, alien, alien_left, alien_right,
//     friendly_bullet, enemy_bullet): +1 an alien; terminated when an alien
//     bullet hits the cannon or the aliens reach it or the bottom row;
//     ramping makes each new block faster.
//   - Seaquest (sub_front, sub_back, friendly_bullet, trail, enemy_bullet,
//     enemy_fish, enemy_sub, oxygen_guage, diver_guage, diver): +1 an enemy,
//     and a bonus for surfacing with six divers; terminated when hit, out of
//     oxygen, or surfacing with no diver; ramping on every surfacing.
//
// Breakout and Freeway have no difficulty ramping. The same seed gives the
// same episode. No time limit is registered (a perfect Breakout player
// never loses); the option max_episode_steps of Make sets one.
type MinAtar struct {
	name     string
	game     minatarGame
	opts     MinAtarOptions
	actions  []int // agent's action index -> full-set action
	last     int   // the previous full-set action, for sticky actions
	stream   stream
	obs      []float32
	obsSpace Box
}

// NewMinAtar returns the named game (one of MinAtarGames); call Reset
// before Step.
func NewMinAtar(name string, opts MinAtarOptions) (*MinAtar, error) {
	if !(opts.StickyActionProb >= 0 && opts.StickyActionProb <= 1) {
		return nil, fmt.Errorf("option %q = %v: want a probability in [0, 1]", "sticky_action_prob", opts.StickyActionProb)
	}
	var g minatarGame
	switch name {
	case "Breakout":
		g = &breakout{}
	case "Asterix":
		g = &asterix{ramping: opts.DifficultyRamping}
	case "Freeway":
		g = &freeway{}
	case "SpaceInvaders":
		g = &spaceInvaders{ramping: opts.DifficultyRamping}
	case "Seaquest":
		g = newSeaquest(opts.DifficultyRamping)
	default:
		return nil, fmt.Errorf("envs: no MinAtar game %q (have %v)", name, MinAtarGames())
	}
	m := &MinAtar{name: minatarID(name, opts.MinimalActions), game: g, opts: opts}
	m.actions = []int{maNoop, maLeft, maUp, maRight, maDown, maFire}
	if opts.MinimalActions {
		m.actions = g.minimalActions()
	}
	c := g.channels()
	m.obs = make([]float32, c*minatarSize*minatarSize)
	m.obsSpace = NewBox(0, 1, c, minatarSize, minatarSize)
	return m, nil
}

// minatarID returns the id of game name with the minimal or the full
// action set.
func minatarID(name string, minimal bool) string {
	if minimal {
		return "MinAtar/" + name + "-v1"
	}
	return "MinAtar/" + name + "-v0"
}

// newMinAtarFromOptions builds a game from config options; minimal is the
// default of minimal_actions, which the id sets.
func newMinAtarFromOptions(name string, minimal bool, o Options) (Env, error) {
	if err := o.Only("sticky_action_prob", "difficulty_ramping", "minimal_actions"); err != nil {
		return nil, err
	}
	opts := DefaultMinAtarOptions()
	opts.MinimalActions = minimal
	var err error
	if opts.StickyActionProb, err = o.Float("sticky_action_prob", opts.StickyActionProb); err != nil {
		return nil, err
	}
	if opts.DifficultyRamping, err = o.Bool("difficulty_ramping", opts.DifficultyRamping); err != nil {
		return nil, err
	}
	if opts.MinimalActions, err = o.Bool("minimal_actions", opts.MinimalActions); err != nil {
		return nil, err
	}
	return NewMinAtar(name, opts)
}

// registerMinAtar registers game name with its summary, as -v0 (the full
// action set) and -v1 (the minimal set). No time limit is registered:
// Breakout, Asterix, Space Invaders and Seaquest always end (a perfect
// Breakout player aside), and Freeway ends itself.
func registerMinAtar(name, summary string) {
	for _, minimal := range []bool{false, true} {
		set := "full action set"
		if minimal {
			set = "minimal action set"
		}
		mustRegister(Spec{ID: minatarID(name, minimal), Summary: summary + ", " + set,
			New: func(o Options) (Env, error) { return newMinAtarFromOptions(name, minimal, o) }})
	}
}

// LegacyMinAtarID returns the id under which an agent whose action space is
// actions plays the env that a config or command names id with options
// opts. Before MinAtar's two ids were registered here, "MinAtar/<Game>-v1"
// named the full action set (which MinAtar calls -v0); so an agent of
// Discrete(6) under such an id, without the option minimal_actions, was
// trained on the full set, and plays "MinAtar/<Game>-v0". Any other id
// comes back unchanged, as does Seaquest's, whose minimal set is the full
// set.
func LegacyMinAtarID(id string, opts Options, actions Space) string {
	name, ok := strings.CutPrefix(id, "MinAtar/")
	if !ok {
		return id
	}
	name, ok = strings.CutSuffix(name, "-v1")
	if _, set := opts["minimal_actions"]; !ok || set || actions != (Discrete{N: maActions}) {
		return id
	}
	m, err := NewMinAtar(name, MinAtarOptions{MinimalActions: true})
	if err != nil || len(m.actions) == maActions {
		return id
	}
	return minatarID(name, false)
}

// ObservationSpace returns Box(0, 1, [C, 10, 10]).
func (m *MinAtar) ObservationSpace() Space { return m.obsSpace }

// ActionSpace returns Discrete(6), or Discrete of the minimal action set.
func (m *MinAtar) ActionSpace() Space { return Discrete{N: len(m.actions)} }

// Actions returns the full-set action (0 no-op, 1 left, 2 up, 3 right,
// 4 down, 5 fire) behind each index of the action space.
func (m *MinAtar) Actions() []int { return append([]int(nil), m.actions...) }

// Reset starts a new game; the previous action becomes the no-op. MinAtar
// keeps the last action across a reset; here an episode from a seed plays
// the same whatever the env played before, which evaluation relies on.
func (m *MinAtar) Reset(seed int64) ([]float32, Info) {
	m.game.reset(m.stream.reset(seed))
	m.last = maNoop
	return m.observe(), Info{}
}

// Step plays the chosen action, or with probability StickyActionProb the
// previous one.
func (m *MinAtar) Step(action []float32) ([]float32, float64, bool, bool, Info) {
	a := m.actions[discreteAction(m.name, action, len(m.actions))]
	rng := m.stream.reset(NoSeed)
	if rng.Float64() < m.opts.StickyActionProb {
		a = m.last
	}
	m.last = a
	r, term, trunc := m.game.step(a, rng)
	return m.observe(), r, term, trunc, Info{}
}

func (m *MinAtar) observe() []float32 {
	clear(m.obs)
	m.game.observe(m.obs)
	return m.obs
}

// minatarMoveX moves column x one cell for left and right, staying on the
// grid.
func minatarMoveX(x, a int) int {
	switch a {
	case maLeft:
		return max(x-1, 0)
	case maRight:
		return min(x+1, minatarSize-1)
	}
	return x
}

// minatarSet sets cell (row y, column x) of channel c; cells off the grid
// are ignored.
func minatarSet(obs []float32, c, y, x int) {
	if x >= 0 && x < minatarSize && y >= 0 && y < minatarSize {
		obs[(c*minatarSize+y)*minatarSize+x] = 1
	}
}

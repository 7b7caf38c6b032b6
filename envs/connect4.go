package envs

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// Connect Four board size.
const (
	c4Rows = 6
	c4Cols = 7
)

// Connect Four opponents.
const (
	OpponentRandom    = "random"    // a uniformly random legal move
	OpponentLookahead = "lookahead" // win if it can, else block the agent's win, else random
)

// ConnectFour is Connect Four on a 6×7 board against a built-in opponent.
// At every reset a coin decides whether the agent moves first; if not, the
// opponent's first disc is already on the board. Action k drops the agent's
// disc into column k; Info.ActionMask marks full columns illegal. The
// observation is two 6×7 planes, the agent's discs then the opponent's
// (top row first), as a 2×6×7 image, or the same 84 values flat with the
// option flat = true. The episode terminates with +1 when the agent
// connects four, −1 when the opponent does, 0 for a full board (draw).
//
// An illegal move (a full column) from a careless caller is not a panic:
// the episode terminates with −1 and Info.Extra["illegal_action"] = true.
// A masked agent never makes one.
type ConnectFour struct {
	opponent string
	flat     bool
	stream   stream
	rng      *rand.Rand
	board    [c4Rows][c4Cols]int8 // 0 empty, 1 agent, 2 opponent
	obs      [2 * c4Rows * c4Cols]float32
	mask     [c4Cols]bool
	space    Box
}

// NewConnectFour returns a Connect Four env against opponent
// (OpponentRandom or OpponentLookahead), with flat or image observations.
func NewConnectFour(opponent string, flat bool) (*ConnectFour, error) {
	if opponent != OpponentRandom && opponent != OpponentLookahead {
		return nil, fmt.Errorf("opponent %q: want %q or %q", opponent, OpponentRandom, OpponentLookahead)
	}
	c := &ConnectFour{opponent: opponent, flat: flat, space: NewBox(0, 1, 2, c4Rows, c4Cols)}
	if flat {
		c.space = NewBox(0, 1, 2*c4Rows*c4Cols)
	}
	return c, nil
}

// ObservationSpace returns Box(0, 1, [2, 6, 7]), or [84] when flat.
func (c *ConnectFour) ObservationSpace() Space { return c.space }

// ActionSpace returns Discrete(7): the column to play.
func (c *ConnectFour) ActionSpace() Space { return Discrete{N: c4Cols} }

// Reset clears the board and lets the opponent open half of the time.
func (c *ConnectFour) Reset(seed int64) ([]float32, Info) {
	c.rng = c.stream.reset(seed)
	c.board = [c4Rows][c4Cols]int8{}
	if c.rng.IntN(2) == 1 {
		c.drop(c.opponentMove(), 2)
	}
	return c.observe(), c.info(false)
}

// Step plays the agent's move and, unless the game ended, the opponent's.
func (c *ConnectFour) Step(action []float32) ([]float32, float64, bool, bool, Info) {
	col := discreteAction("ConnectFour", action, c4Cols)
	if c.board[0][col] != 0 {
		return c.observe(), -1, true, false, c.info(true)
	}
	row := c.drop(col, 1)
	if c.wins(row, col) {
		return c.observe(), 1, true, false, c.info(false)
	}
	if c.full() {
		return c.observe(), 0, true, false, c.info(false)
	}
	col = c.opponentMove()
	row = c.drop(col, 2)
	if c.wins(row, col) {
		return c.observe(), -1, true, false, c.info(false)
	}
	return c.observe(), 0, c.full(), false, c.info(false)
}

// drop puts player's disc into col and returns the row it lands in.
func (c *ConnectFour) drop(col int, player int8) int {
	for r := c4Rows - 1; r >= 0; r-- {
		if c.board[r][col] == 0 {
			c.board[r][col] = player
			return r
		}
	}
	panic("envs: ConnectFour: drop into a full column")
}

func (c *ConnectFour) full() bool {
	for col := range c4Cols {
		if c.board[0][col] == 0 {
			return false
		}
	}
	return true
}

// wins reports whether the disc at (row, col) completes four in a line.
func (c *ConnectFour) wins(row, col int) bool {
	p := c.board[row][col]
	for _, d := range [4][2]int{{0, 1}, {1, 0}, {1, 1}, {1, -1}} {
		n := 1
		for _, s := range [2]int{1, -1} {
			r, k := row+s*d[0], col+s*d[1]
			for r >= 0 && r < c4Rows && k >= 0 && k < c4Cols && c.board[r][k] == p {
				n++
				r, k = r+s*d[0], k+s*d[1]
			}
		}
		if n >= 4 {
			return true
		}
	}
	return false
}

// opponentMove picks the opponent's column.
func (c *ConnectFour) opponentMove() int {
	var legal []int
	for col := range c4Cols {
		if c.board[0][col] == 0 {
			legal = append(legal, col)
		}
	}
	if c.opponent == OpponentLookahead {
		for _, player := range [2]int8{2, 1} { // win first, else block
			for _, col := range legal {
				row := c.drop(col, player)
				won := c.wins(row, col)
				c.board[row][col] = 0
				if won {
					return col
				}
			}
		}
	}
	return legal[c.rng.IntN(len(legal))]
}

func (c *ConnectFour) observe() []float32 {
	n := c4Rows * c4Cols
	for r := range c4Rows {
		for k := range c4Cols {
			i := r*c4Cols + k
			c.obs[i], c.obs[n+i] = 0, 0
			switch c.board[r][k] {
			case 1:
				c.obs[i] = 1
			case 2:
				c.obs[n+i] = 1
			}
		}
	}
	return c.obs[:]
}

func (c *ConnectFour) info(illegal bool) Info {
	for col := range c4Cols {
		c.mask[col] = c.board[0][col] == 0
	}
	info := Info{ActionMask: c.mask[:]}
	if !slices.Contains(c.mask[:], true) {
		// A full board ends the game; keep every column "legal" so the
		// mask never leaves nothing to choose from.
		for col := range c.mask {
			c.mask[col] = true
		}
	}
	if illegal {
		info.Extra = map[string]any{"illegal_action": true}
	}
	return info
}

func init() {
	mustRegister(Spec{ID: "ConnectFour-v0",
		Summary: "Connect Four against a built-in opponent, with action masks; options opponent (random|lookahead), flat",
		New: func(o Options) (Env, error) {
			if err := o.Only("opponent", "flat"); err != nil {
				return nil, err
			}
			opp, err := o.Text("opponent", OpponentRandom)
			if err != nil {
				return nil, err
			}
			flat, err := o.Bool("flat", false)
			if err != nil {
				return nil, err
			}
			return NewConnectFour(opp, flat)
		}})
}

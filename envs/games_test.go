package envs

import (
	"testing"
)

// TestCatchRules plays Catch by hand: the paddle starts in the middle,
// moves within the board, and the ninth step ends the episode with +1 under
// the ball and −1 elsewhere.
func TestCatchRules(t *testing.T) {
	for seed := range int64(20) {
		c := NewCatch()
		obs, _ := c.Reset(seed)
		ball := -1
		for k := range catchColumns {
			if obs[k] == 1 {
				ball = k
			}
		}
		if ball < 0 || obs[(catchRows-1)*catchColumns+catchColumns/2] != 1 {
			t.Fatalf("seed %d: first board %v: want a ball in the top row and the paddle mid-bottom", seed, obs)
		}
		// Walk the paddle to the ball (or away from it on odd seeds).
		target := ball
		if seed%2 == 1 {
			target = (ball + 2) % catchColumns
		}
		var r float64
		var term bool
		for step := 1; step <= catchRows-1; step++ {
			a := 1
			if c.paddleX < target {
				a = 2
			} else if c.paddleX > target {
				a = 0
			}
			obs, r, term, _, _ = c.Step([]float32{float32(a)})
			if term != (step == catchRows-1) {
				t.Fatalf("seed %d step %d: terminated %v", seed, step, term)
			}
			if !term && r != 0 {
				t.Fatalf("seed %d step %d: reward %v before the end", seed, step, r)
			}
			if obs[step*catchColumns+ball] != 1 {
				t.Fatalf("seed %d step %d: the ball is not one row lower", seed, step)
			}
		}
		want := 1.0
		if target != ball {
			want = -1
		}
		if r != want {
			t.Fatalf("seed %d: final reward %v, want %v", seed, r, want)
		}
	}
	c := NewCatch()
	c.Reset(0)
	for range 5 {
		c.Step([]float32{0})
	}
	if c.paddleX != 0 {
		t.Fatalf("paddle at %d after moving left 5 times, want 0 (the wall)", c.paddleX)
	}
}

func c4Play(t *testing.T, c *ConnectFour, col int) (float64, bool, Info) {
	t.Helper()
	_, r, term, _, info := c.Step([]float32{float32(col)})
	return r, term, info
}

func TestConnectFourRules(t *testing.T) {
	c, _ := NewConnectFour(OpponentRandom, false)
	// Vertical four for the agent on an empty board (the opponent's
	// random moves cannot block a column it does not choose; retry seeds).
	won := false
	for seed := range int64(50) {
		c.Reset(seed)
		if c.board != ([c4Rows][c4Cols]int8{}) {
			continue // the opponent opened; keep the test simple
		}
		var r float64
		var term bool
		for range 4 {
			if r, term, _ = c4Play(t, c, 3); term {
				break
			}
		}
		if term && r == 1 {
			won = true
			break
		}
	}
	if !won {
		t.Fatal("four agent discs in a column never won")
	}
	// Horizontal, diagonal detection.
	tests := []struct {
		name  string
		cells [][2]int
	}{
		{"horizontal", [][2]int{{5, 0}, {5, 1}, {5, 2}, {5, 3}}},
		{"diagonal", [][2]int{{5, 0}, {4, 1}, {3, 2}, {2, 3}}},
		{"anti-diagonal", [][2]int{{2, 3}, {3, 4}, {4, 5}, {5, 6}}},
	}
	for _, tt := range tests {
		c.board = [c4Rows][c4Cols]int8{}
		for _, rc := range tt.cells {
			c.board[rc[0]][rc[1]] = 1
		}
		last := tt.cells[1]
		if !c.wins(last[0], last[1]) {
			t.Errorf("%s four not detected", tt.name)
		}
		c.board[tt.cells[3][0]][tt.cells[3][1]] = 2
		if c.wins(last[0], last[1]) {
			t.Errorf("%s three detected as a win", tt.name)
		}
	}
}

func TestConnectFourMasksAndIllegalMoves(t *testing.T) {
	c, _ := NewConnectFour(OpponentRandom, true)
	c.Reset(1)
	c.board = [c4Rows][c4Cols]int8{}
	for r := range c4Rows {
		c.board[r][2] = int8(1 + r%2)
	}
	info := c.info(false)
	if info.ActionMask[2] || !info.ActionMask[0] {
		t.Fatalf("mask %v: column 2 is full", info.ActionMask)
	}
	_, r, term, trunc, info := c.Step([]float32{2})
	if !term || trunc || r != -1 || info.Extra["illegal_action"] != true {
		t.Fatalf("illegal move: reward %v terminated %v info %v; want a −1 terminal step flagged illegal", r, term, info.Extra)
	}
}

func TestConnectFourLookaheadWinsAndBlocks(t *testing.T) {
	c, _ := NewConnectFour(OpponentLookahead, false)
	c.Reset(3)
	// The opponent can win in column 6.
	c.board = [c4Rows][c4Cols]int8{}
	c.board[5][6], c.board[4][6], c.board[3][6] = 2, 2, 2
	if got := c.opponentMove(); got != 6 {
		t.Fatalf("lookahead plays %d, want the winning column 6", got)
	}
	// The agent threatens column 0; the opponent must block.
	c.board = [c4Rows][c4Cols]int8{}
	c.board[5][0], c.board[4][0], c.board[3][0] = 1, 1, 1
	if got := c.opponentMove(); got != 0 {
		t.Fatalf("lookahead plays %d, want the blocking column 0", got)
	}
	if _, err := NewConnectFour("minimax", false); err == nil {
		t.Fatal("unknown opponent: no error")
	}
	if _, err := Make("ConnectFour-v0", Options{"opponent": 3}); err == nil {
		t.Fatal("opponent = 3: no error")
	}
}

// TestConnectFourRandomPlayIsFair plays random legal moves against both
// opponents: episodes end within 21 agent moves, the agent moves first
// about half of the time, and lookahead beats random play more often than
// the random opponent does.
func TestConnectFourRandomPlayIsFair(t *testing.T) {
	losses := map[string]int{}
	for _, opp := range []string{OpponentRandom, OpponentLookahead} {
		env, err := Make("ConnectFour-v0", Options{"opponent": opp})
		if err != nil {
			t.Fatal(err)
		}
		c := Unwrapped(env).(*ConnectFour)
		first := 0
		_, info := env.Reset(9)
		rng := c.rng
		for ep := range 400 {
			if ep > 0 {
				_, info = env.Reset(NoSeed)
			}
			if c.board == ([c4Rows][c4Cols]int8{}) {
				first++
			}
			for n := 0; ; n++ {
				if n > 21 {
					t.Fatal("episode longer than 21 agent moves")
				}
				a := make([]float32, 1)
				Discrete{N: c4Cols}.SampleMasked(rng, info.ActionMask, a)
				var r float64
				var term bool
				_, r, term, _, info = env.Step(a)
				if info.Extra["illegal_action"] == true {
					t.Fatal("a masked move was illegal")
				}
				if term {
					if r == -1 {
						losses[opp]++
					}
					break
				}
			}
		}
		if first < 150 || first > 250 {
			t.Errorf("%s: agent moved first in %d of 400 games", opp, first)
		}
	}
	if losses[OpponentLookahead] <= losses[OpponentRandom] {
		t.Errorf("random play lost %d times to lookahead and %d to random; lookahead should win more", losses[OpponentLookahead], losses[OpponentRandom])
	}
}

package envs

import (
	"errors"
	"fmt"
	"math/rand/v2"
)

// DeepSea is bsuite's Deep Sea (Osband et al., "Behaviour Suite for
// Reinforcement Learning", 2020), the test of deep exploration: an N×N grid
// where the agent starts at the top-left cell and falls one row per step,
// moving one column left or right (clipped at the edges) as it falls; the
// episode terminates after N steps. Every move right costs move_cost/N;
// moving right from the last column of the bottom row pays +1. The one
// policy that earns it goes right N times in a row (return 1 − move_cost),
// and a dithering agent finds it with probability 2⁻ᴺ.
//
// Which action (0 or 1) moves right is drawn per cell from a fair coin, once
// for the env from its mapping seed (option mapping_seed, bsuite's
// mapping_seed), not per episode: the mapping is part of the task the agent
// learns, the same in training and evaluation. With deterministic = false
// (bsuite's stochastic variant) a move right succeeds only with probability
// 1 − 1/N, and reaching either bottom corner adds N(0, 1) noise to the
// reward, both drawn from the episode's stream.
//
// The observation is the grid as a 1×N×N image (Box 0..1) with a 1 at the
// agent's cell, or the same N² values flat (option flat, for an MLP); after
// the last step, where the agent has fallen off the grid, it is all zeros.
type DeepSea struct {
	size          int
	deterministic bool
	moveCost      float64 // the unscaled cost: a move right costs moveCost/size
	right         []int8  // [size·size]: the action that moves right in each cell
	stream        stream
	row, col      int
	obs           []float32
	obsSpace      Box
}

// DeepSeaConfig holds DeepSea's options.
type DeepSeaConfig struct {
	Size             int     // N, the grid's side (bsuite sweeps 10 to 50)
	Deterministic    bool    // false: the stochastic variant
	MoveCost         float64 // the cost of all N moves right (bsuite's unscaled_move_cost, 0.01)
	RandomizeActions bool    // false: action 1 moves right everywhere (bsuite's debugging mode)
	MappingSeed      uint64  // the seed of the action mapping
	Flat             bool    // observations as N² values instead of a 1×N×N image
}

// DefaultDeepSeaConfig is bsuite's default Deep Sea of size 10.
func DefaultDeepSeaConfig() DeepSeaConfig {
	return DeepSeaConfig{Size: 10, Deterministic: true, MoveCost: 0.01, RandomizeActions: true}
}

// maxDeepSeaSize bounds size: the observation has size² floats.
const maxDeepSeaSize = 1000

// NewDeepSea returns a Deep Sea; call Reset before Step.
func NewDeepSea(c DeepSeaConfig) (*DeepSea, error) {
	if c.Size < 1 || c.Size > maxDeepSeaSize {
		return nil, fmt.Errorf("DeepSea: size = %d: want 1 to %d", c.Size, maxDeepSeaSize)
	}
	if !(c.MoveCost >= 0) {
		return nil, fmt.Errorf("DeepSea: move_cost = %v: want >= 0", c.MoveCost)
	}
	n := c.Size
	d := &DeepSea{size: n, deterministic: c.Deterministic, moveCost: c.MoveCost,
		right: make([]int8, n*n), obs: make([]float32, n*n), obsSpace: NewBox(0, 1, 1, n, n)}
	if c.Flat {
		d.obsSpace = NewBox(0, 1, n*n)
	}
	mapping := rand.New(rand.NewPCG(c.MappingSeed, 0xdee95ea)) // "deep sea"
	for i := range d.right {
		d.right[i] = 1
		if c.RandomizeActions {
			d.right[i] = int8(mapping.IntN(2))
		}
	}
	return d, nil
}

// ObservationSpace returns Box(0, 1, [1, N, N]), or [N²] when flat.
func (d *DeepSea) ObservationSpace() Space { return d.obsSpace }

// ActionSpace returns Discrete(2); which of the two moves right depends on
// the cell.
func (d *DeepSea) ActionSpace() Space { return Discrete{N: 2} }

// RightAction returns the action that moves right from the cell at row,
// col: the env's action mapping, for tests and for an optimal policy.
func (d *DeepSea) RightAction(row, col int) int { return int(d.right[row*d.size+col]) }

// Position returns the agent's row and column (row N once the episode is
// over).
func (d *DeepSea) Position() (row, col int) { return d.row, d.col }

// Reset puts the agent at the top-left cell.
func (d *DeepSea) Reset(seed int64) ([]float32, Info) {
	d.stream.reset(seed)
	d.row, d.col = 0, 0
	return d.observe(), Info{}
}

// Step moves the agent one row down and one column left or right.
func (d *DeepSea) Step(action []float32) ([]float32, float64, bool, bool, Info) {
	if d.row >= d.size {
		panic("envs: DeepSea: Step after the episode ended; call Reset")
	}
	a := discreteAction("DeepSea", action, 2)
	n := d.size
	right := a == int(d.right[d.row*n+d.col])
	reward := 0.0
	if right && d.col == n-1 {
		reward++ // only reachable on the bottom row: col ≤ row
	}
	rng := d.stream.rng
	if !d.deterministic && d.row == n-1 && (d.col == 0 || d.col == n-1) {
		reward += rng.NormFloat64()
	}
	if right {
		if d.deterministic || rng.Float64() >= 1/float64(n) {
			d.col = min(d.col+1, n-1)
		}
		reward -= d.moveCost / float64(n)
	} else {
		d.col = max(d.col-1, 0)
	}
	d.row++
	return d.observe(), reward, d.row == n, false, Info{}
}

func (d *DeepSea) observe() []float32 {
	clear(d.obs)
	if d.row < d.size {
		d.obs[d.row*d.size+d.col] = 1
	}
	return d.obs
}

func init() {
	mustRegister(Spec{ID: "DeepSea-v0",
		Summary: "bsuite's Deep Sea: fall down an N×N grid, +1 only for going right at every step (options size, deterministic, move_cost, randomize_actions, mapping_seed, flat)",
		New: func(o Options) (Env, error) {
			if err := o.Only("size", "deterministic", "move_cost", "randomize_actions", "mapping_seed", "flat"); err != nil {
				return nil, err
			}
			c := DefaultDeepSeaConfig()
			size, errSize := o.Int("size", c.Size)
			det, errDet := o.Bool("deterministic", c.Deterministic)
			cost, errCost := o.Float("move_cost", c.MoveCost)
			random, errRandom := o.Bool("randomize_actions", c.RandomizeActions)
			seed, errSeed := o.Int("mapping_seed", 0)
			flat, errFlat := o.Bool("flat", false)
			if err := errors.Join(errSize, errDet, errCost, errRandom, errSeed, errFlat); err != nil {
				return nil, err
			}
			if seed < 0 {
				return nil, fmt.Errorf("option \"mapping_seed\" = %d: want >= 0", seed)
			}
			c.Size, c.Deterministic, c.MoveCost, c.RandomizeActions, c.Flat = size, det, cost, random, flat
			c.MappingSeed = uint64(seed)
			return NewDeepSea(c)
		}})
}

package buffer

import (
	"errors"
	"fmt"
)

// Dims are the fixed sizes of a Rollout.
type Dims struct {
	Steps    int // T: steps per env in one rollout (learn_step / N)
	Envs     int // N: envs stepped together
	ObsSize  int // flat size of one observation
	ActSize  int // flat size of one action
	MaskSize int // entries of one action mask; 0 when actions take no mask
	// HiddenSize is the number of floats of recurrent state per env (all of
	// an LSTM's h and c); 0 for non-recurrent agents.
	HiddenSize int
}

func (d Dims) validate() error {
	if d.Steps <= 0 || d.Envs <= 0 || d.ObsSize <= 0 || d.ActSize <= 0 || d.MaskSize < 0 || d.HiddenSize < 0 {
		return fmt.Errorf("buffer: dims %+v: steps, envs, obs and action sizes must be positive, mask and hidden sizes >= 0", d)
	}
	return nil
}

// Rollout is the storage of one rollout, [T][N] steps. Fields are flat
// row-major arrays; index (t*N + n) * width.
type Rollout struct {
	Dims

	Obs        []float32 // [T][N][ObsSize]
	Actions    []float32 // [T][N][ActSize], in the env's flat action form
	LogProbs   []float32 // [T][N], log π(a|s) when acting
	Values     []float32 // [T][N], V(s) when acting
	Rewards    []float32 // [T][N]
	Terminated []bool    // [T][N]
	Truncated  []bool    // [T][N]
	// FinalValues[t][n] is V(final observation) of an episode truncated at
	// step t; read only where Truncated and not Terminated.
	FinalValues []float32 // [T][N]
	Masks       []bool    // [T][N][MaskSize]; nil when MaskSize is 0
	Hidden      []float32 // [T][N][HiddenSize]; nil when HiddenSize is 0

	Advantages []float32 // [T][N], filled by ComputeGAE / ComputeReturns
	Returns    []float32 // [T][N]

	pos     int        // steps filled
	perm    []int      // shuffled flat indices, reused by Minibatches
	batches [][]int    // views of perm returned by Minibatches
	seqs    []Sequence // reused by Sequences
}

// New allocates a Rollout of the given sizes.
func New(d Dims) (*Rollout, error) {
	if err := d.validate(); err != nil {
		return nil, err
	}
	tn := d.Steps * d.Envs
	r := &Rollout{
		Dims:        d,
		Obs:         make([]float32, tn*d.ObsSize),
		Actions:     make([]float32, tn*d.ActSize),
		LogProbs:    make([]float32, tn),
		Values:      make([]float32, tn),
		Rewards:     make([]float32, tn),
		Terminated:  make([]bool, tn),
		Truncated:   make([]bool, tn),
		FinalValues: make([]float32, tn),
		Advantages:  make([]float32, tn),
		Returns:     make([]float32, tn),
		perm:        make([]int, tn),
	}
	if d.MaskSize > 0 {
		r.Masks = make([]bool, tn*d.MaskSize)
	}
	if d.HiddenSize > 0 {
		r.Hidden = make([]float32, tn*d.HiddenSize)
	}
	return r, nil
}

// Len returns the number of steps stored so far (at most Steps).
func (r *Rollout) Len() int { return r.pos }

// Full reports whether all Steps steps are stored.
func (r *Rollout) Full() bool { return r.pos == r.Steps }

// Reset empties the rollout for the next one, keeping its storage.
func (r *Rollout) Reset() { r.pos = 0 }

// Slot holds views into one step's row of a Rollout, for all N envs. The
// caller writes every field it uses; the next Rollout.Next overwrites what
// it left (FinalValues and Masks are cleared by Next, since most steps do
// not set them).
type Slot struct {
	Obs         []float32 // [N][ObsSize]
	Actions     []float32 // [N][ActSize]
	LogProbs    []float32 // [N]
	Values      []float32 // [N]
	Rewards     []float32 // [N]
	Terminated  []bool    // [N]
	Truncated   []bool    // [N]
	FinalValues []float32 // [N]
	Masks       []bool    // [N][MaskSize], or nil
	Hidden      []float32 // [N][HiddenSize], or nil
}

// ErrFull is returned by Next when the rollout already holds Steps steps.
var ErrFull = errors.New("buffer: rollout is full")

// Next returns the views of the next step's row and advances. Masks default
// to all legal and FinalValues to 0.
func (r *Rollout) Next() (Slot, error) {
	if r.pos == r.Steps {
		return Slot{}, ErrFull
	}
	n := r.Envs
	lo, hi := r.pos*n, (r.pos+1)*n
	s := Slot{
		Obs:         r.Obs[lo*r.ObsSize : hi*r.ObsSize],
		Actions:     r.Actions[lo*r.ActSize : hi*r.ActSize],
		LogProbs:    r.LogProbs[lo:hi],
		Values:      r.Values[lo:hi],
		Rewards:     r.Rewards[lo:hi],
		Terminated:  r.Terminated[lo:hi],
		Truncated:   r.Truncated[lo:hi],
		FinalValues: r.FinalValues[lo:hi],
	}
	clear(s.FinalValues)
	if r.Masks != nil {
		s.Masks = r.Masks[lo*r.MaskSize : hi*r.MaskSize]
		for i := range s.Masks {
			s.Masks[i] = true
		}
	}
	if r.Hidden != nil {
		s.Hidden = r.Hidden[lo*r.HiddenSize : hi*r.HiddenSize]
	}
	r.pos++
	return s, nil
}

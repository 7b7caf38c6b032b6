package buffer

import (
	"fmt"
	"math/rand/v2"
)

// Minibatches shuffles the T·N flat step indices (t*N + n) with rng and cuts
// them into consecutive batches of batchSize; the last batch is shorter when
// batchSize does not divide T·N. The result is backed by storage that the
// next call reuses.
func (r *Rollout) Minibatches(rng *rand.Rand, batchSize int) ([][]int, error) {
	total := r.Steps * r.Envs
	if batchSize <= 0 || batchSize > total {
		return nil, fmt.Errorf("buffer: batch size %d outside [1, %d] (steps × envs)", batchSize, total)
	}
	for i := range r.perm {
		r.perm[i] = i
	}
	rng.Shuffle(len(r.perm), func(i, j int) { r.perm[i], r.perm[j] = r.perm[j], r.perm[i] })
	r.batches = r.batches[:0]
	for lo := 0; lo < total; lo += batchSize {
		r.batches = append(r.batches, r.perm[lo:min(lo+batchSize, total)])
	}
	return r.batches, nil
}

// Steps holds gathered rollout steps, one per row; Batch and SeqBatch
// embed it. Per-row fields are [rows], observations [rows][ObsSize],
// actions [rows][ActSize] and masks [rows][MaskSize] (nil without masks).
type Steps struct {
	Obs        []float32
	Actions    []float32
	LogProbs   []float32
	Values     []float32
	Advantages []float32
	Returns    []float32
	Masks      []bool
}

func newSteps(d Dims, rows int) Steps {
	s := Steps{
		Obs:        make([]float32, rows*d.ObsSize),
		Actions:    make([]float32, rows*d.ActSize),
		LogProbs:   make([]float32, rows),
		Values:     make([]float32, rows),
		Advantages: make([]float32, rows),
		Returns:    make([]float32, rows),
	}
	if d.MaskSize > 0 {
		s.Masks = make([]bool, rows*d.MaskSize)
	}
	return s
}

// resize reslices every field to rows rows (within the allocated capacity).
func (s *Steps) resize(d Dims, rows int) {
	s.Obs, s.Actions = s.Obs[:rows*d.ObsSize], s.Actions[:rows*d.ActSize]
	s.LogProbs, s.Values = s.LogProbs[:rows], s.Values[:rows]
	s.Advantages, s.Returns = s.Advantages[:rows], s.Returns[:rows]
	if s.Masks != nil {
		s.Masks = s.Masks[:rows*d.MaskSize]
	}
}

// copyStep copies the rollout's flat step i into row.
func (s *Steps) copyStep(r *Rollout, i, row int) {
	copy(s.Obs[row*r.ObsSize:(row+1)*r.ObsSize], r.Obs[i*r.ObsSize:])
	copy(s.Actions[row*r.ActSize:(row+1)*r.ActSize], r.Actions[i*r.ActSize:])
	s.LogProbs[row] = r.LogProbs[i]
	s.Values[row] = r.Values[i]
	s.Advantages[row] = r.Advantages[i]
	s.Returns[row] = r.Returns[i]
	if s.Masks != nil {
		copy(s.Masks[row*r.MaskSize:(row+1)*r.MaskSize], r.Masks[i*r.MaskSize:])
	}
}

// Batch is a gathered minibatch of flat steps. Its arrays have room for
// Cap steps; Size says how many the last Gather filled.
type Batch struct {
	Cap, Size int
	Steps
}

// NewBatch allocates a Batch for up to size steps of a rollout with dims d.
func NewBatch(d Dims, size int) *Batch {
	return &Batch{Cap: size, Steps: newSteps(d, size)}
}

// Gather copies the steps at the flat indices idx into b (which must have
// room for them) and reslices b's arrays to len(idx) steps. It allocates
// nothing.
func (r *Rollout) Gather(idx []int, b *Batch) {
	if len(idx) > b.Cap {
		panic(fmt.Sprintf("buffer: gather of %d steps into a batch of capacity %d", len(idx), b.Cap))
	}
	b.Size = len(idx)
	b.resize(r.Dims, len(idx))
	for j, i := range idx {
		b.copyStep(r, i, j)
	}
}

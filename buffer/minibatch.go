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

// Batch is a gathered minibatch of flat steps. Its arrays have room for
// Cap steps; Size says how many the last Gather filled.
type Batch struct {
	Cap, Size  int
	Obs        []float32 // [Size][ObsSize]
	Actions    []float32 // [Size][ActSize]
	LogProbs   []float32 // [Size]
	Values     []float32 // [Size]
	Advantages []float32 // [Size]
	Returns    []float32 // [Size]
	Masks      []bool    // [Size][MaskSize], or nil
}

// NewBatch allocates a Batch for up to size steps of a rollout with dims d.
func NewBatch(d Dims, size int) *Batch {
	b := &Batch{
		Cap:        size,
		Obs:        make([]float32, size*d.ObsSize),
		Actions:    make([]float32, size*d.ActSize),
		LogProbs:   make([]float32, size),
		Values:     make([]float32, size),
		Advantages: make([]float32, size),
		Returns:    make([]float32, size),
	}
	if d.MaskSize > 0 {
		b.Masks = make([]bool, size*d.MaskSize)
	}
	return b
}

// Gather copies the steps at the flat indices idx into b (which must have
// room for them) and reslices b's arrays to len(idx) steps. It allocates
// nothing.
func (r *Rollout) Gather(idx []int, b *Batch) {
	if len(idx) > b.Cap {
		panic(fmt.Sprintf("buffer: gather of %d steps into a batch of capacity %d", len(idx), b.Cap))
	}
	k := len(idx)
	b.Size = k
	b.Obs = b.Obs[:k*r.ObsSize]
	b.Actions = b.Actions[:k*r.ActSize]
	b.LogProbs, b.Values = b.LogProbs[:k], b.Values[:k]
	b.Advantages, b.Returns = b.Advantages[:k], b.Returns[:k]
	if b.Masks != nil {
		b.Masks = b.Masks[:k*r.MaskSize]
	}
	for j, i := range idx {
		copy(b.Obs[j*r.ObsSize:(j+1)*r.ObsSize], r.Obs[i*r.ObsSize:])
		copy(b.Actions[j*r.ActSize:(j+1)*r.ActSize], r.Actions[i*r.ActSize:])
		b.LogProbs[j] = r.LogProbs[i]
		b.Values[j] = r.Values[i]
		b.Advantages[j] = r.Advantages[i]
		b.Returns[j] = r.Returns[i]
		if b.Masks != nil {
			copy(b.Masks[j*r.MaskSize:(j+1)*r.MaskSize], r.Masks[i*r.MaskSize:])
		}
	}
}

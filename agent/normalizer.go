package agent

import "math"

// obsClip bounds normalised observations, as Stable-Baselines3's
// VecNormalize does by default.
const obsClip = 10

// RunningNorm keeps a running mean and variance of observations (the
// parallel algorithm of Chan et al. for merging a batch into the totals) and
// normalises with them: clip((x − mean)/√(var + 1e-8), ±10). Count starts at
// 1e-4 so that the first batch dominates without a division by zero.
type RunningNorm struct {
	Mean, Var []float64
	Count     float64
}

// NewRunningNorm returns a normaliser for observations of size n.
func NewRunningNorm(n int) *RunningNorm {
	r := &RunningNorm{Mean: make([]float64, n), Var: make([]float64, n), Count: 1e-4}
	for i := range r.Var {
		r.Var[i] = 1
	}
	return r
}

// Update merges a batch of observations (rows of len(Mean) values) into the
// running statistics.
func (r *RunningNorm) Update(batch []float32) { updateNorm(r, batch) }

// updateNorm is Update for float32 or float64 rows: the reward scaler
// merges float64 discounted returns, as SB3's VecNormalize does.
func updateNorm[T float32 | float64](r *RunningNorm, batch []T) {
	n := len(r.Mean)
	rows := len(batch) / n
	if rows == 0 {
		return
	}
	bc := float64(rows)
	total := r.Count + bc
	for i := range n {
		mean := 0.0
		for k := range rows {
			mean += float64(batch[k*n+i])
		}
		mean /= bc
		v := 0.0
		for k := range rows {
			d := float64(batch[k*n+i]) - mean
			v += d * d
		}
		v /= bc
		delta := mean - r.Mean[i]
		m2 := r.Var[i]*r.Count + v*bc + delta*delta*r.Count*bc/total
		r.Mean[i] += delta * bc / total
		r.Var[i] = m2 / total
	}
	r.Count = total
}

// Normalize writes the normalised rows of src into dst (same length).
func (r *RunningNorm) Normalize(dst, src []float32) {
	n := len(r.Mean)
	for k := range src {
		i := k % n
		z := (float64(src[k]) - r.Mean[i]) / math.Sqrt(r.Var[i]+1e-8)
		dst[k] = float32(math.Max(-obsClip, math.Min(obsClip, z)))
	}
}

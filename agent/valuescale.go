package agent

import "math"

// Value-target normalisation as skrl's PPO does it with
// value_preprocessor = RunningStandardScaler: the critic predicts
// standardised values, which acting de-standardises
// (√var·clip(v, ±5) + mean) for GAE; after GAE the rollout's values and
// then its returns each update the running statistics (batch mean and
// unbiased variance, merged by the parallel algorithm, from a count of 1)
// and are standardised in place ((x − mean)/(√var + 1e-8), clipped to ±5),
// which is what the value loss and its clipping then see. skrl computes the
// last two steps in float32 from float64 statistics; so does this.

// valueClip bounds standardised values (skrl's clip_threshold).
const valueClip = 5

// newValueNorm returns skrl's initial statistics: mean 0, var 1, count 1.
func newValueNorm() *RunningNorm {
	return &RunningNorm{Mean: []float64{0}, Var: []float64{1}, Count: 1}
}

// valueStats returns the statistics as float32, as skrl reads them.
func (a *PPO) valueStats() (mean, std float32) {
	return float32(a.valNorm.Mean[0]), float32(math.Sqrt(float64(float32(a.valNorm.Var[0]))))
}

// destandardize turns the critic's outputs into values in return units, in
// place.
func (a *PPO) destandardize(v []float32) {
	mean, std := a.valueStats()
	for i, x := range v {
		v[i] = std*min(max(x, -valueClip), valueClip) + mean
	}
}

// standardizeTrain merges batch into the statistics and standardises it in
// place.
func (a *PPO) standardizeTrain(batch []float32) {
	r := a.valNorm
	n := float64(len(batch))
	if n > 1 {
		mean := 0.0
		for _, x := range batch {
			mean += float64(x)
		}
		mean /= n
		v := 0.0
		for _, x := range batch {
			d := float64(x) - mean
			v += d * d
		}
		v /= n - 1 // torch.var's default, unbiased
		total := r.Count + n
		delta := mean - r.Mean[0]
		m2 := r.Var[0]*r.Count + v*n + delta*delta*r.Count*n/total
		r.Mean[0] += delta * n / total
		r.Var[0] = m2 / total
		r.Count = total
	}
	mean, std := a.valueStats()
	for i, x := range batch {
		batch[i] = min(max((x-mean)/(std+1e-8), -valueClip), valueClip)
	}
}

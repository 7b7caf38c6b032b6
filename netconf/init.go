package netconf

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Init returns fresh weights for s drawn from rng, tensor by tensor in layout order, so the
// same spec and the same RNG state give the same weights bit for bit.
//
// Weights are orthogonal (as torch.nn.init.orthogonal_: a Gaussian matrix made orthonormal,
// its sign fixed by the positive diagonal of R in its QR decomposition) times a gain: √2 for
// hidden, latent and conv layers, s.OutputGain for the output layer, 1 for every LSTM and GRU
// gate matrix and every matrix of a Transformer (positions included). Biases are zero, LayerNorm scales one.
func Init(s Spec, rng *rand.Rand) (Params, error) {
	l, err := layout(s)
	if err != nil {
		return nil, err
	}
	p := make(Params, len(l))
	for i, sl := range l {
		p[i] = Tensor{Name: sl.Name, Shape: slices.Clone(sl.Shape), Data: fresh(sl, rng)}
	}
	return p, nil
}

// fresh returns a newly initialised tensor for one slot.
func fresh(sl slot, rng *rand.Rand) []float32 {
	d := make([]float32, sl.Size())
	switch sl.Role {
	case RoleWeight:
		rows := sl.rows()
		orthogonal(d, rows, len(d)/rows, sl.gain, rng)
	case RoleNormScale:
		for i := range d {
			d[i] = 1
		}
	}
	return d
}

// orthogonal fills the row-major rows×cols matrix dst with gain times a random matrix whose
// rows (if rows <= cols) or columns (otherwise) are orthonormal.
//
// It orthonormalises k = min(rows, cols) Gaussian vectors of length n = max(rows, cols) by
// modified Gram–Schmidt in float64. That is QR with R's diagonal positive, which is the
// sign convention that makes the result uniformly (Haar) distributed.
func orthogonal(dst []float32, rows, cols int, gain float64, rng *rand.Rand) {
	k, n := min(rows, cols), max(rows, cols)
	q := make([]float64, k*n) // vector j is q[j*n : (j+1)*n]
	for j := range k {
		v := q[j*n : (j+1)*n]
		for {
			for i := range v {
				v[i] = rng.NormFloat64()
			}
			for p := range j {
				u := q[p*n : (p+1)*n]
				dot := 0.0
				for i := range v {
					dot += u[i] * v[i]
				}
				for i := range v {
					v[i] -= dot * u[i]
				}
			}
			norm := 0.0
			for _, x := range v {
				norm += x * x
			}
			norm = math.Sqrt(norm)
			// A degenerate draw has probability zero; redrawing keeps the result
			// orthonormal even then.
			if norm > 1e-8 {
				for i := range v {
					v[i] /= norm
				}
				break
			}
		}
	}
	for r := range rows {
		for c := range cols {
			var x float64
			if rows <= cols {
				x = q[r*n+c]
			} else {
				x = q[c*n+r]
			}
			dst[r*cols+c] = float32(gain * x)
		}
	}
}

package nn

import (
	"math"

	"github.com/evolverl/evolve/netconf"
)

// layerNormForward normalises each row of z [rows, n] to zero mean and unit biased variance
// (xhat, with 1/√(var + eps) in rstd) and writes u = xhat·gamma + beta.
func layerNormForward(z, xhat, rstd, u, gamma, beta []float32, rows, n int) {
	for r := range rows {
		zr := z[r*n : (r+1)*n]
		mean := 0.0
		for _, v := range zr {
			mean += float64(v)
		}
		mean /= float64(n)
		vr := 0.0
		for _, v := range zr {
			dv := float64(v) - mean
			vr += dv * dv
		}
		s := 1 / math.Sqrt(vr/float64(n)+netconf.LayerNormEps)
		rstd[r] = float32(s)
		xr, ur := xhat[r*n:(r+1)*n], u[r*n:(r+1)*n]
		for j, v := range zr {
			h := float32((float64(v) - mean) * s)
			xr[j] = h
			ur[j] = h*gamma[j] + beta[j]
		}
	}
}

// layerNormBackward turns du, the gradient of the LayerNorm's output, into the gradient of
// its input in place, adding the scale's and shift's gradients into dGamma and dBeta:
// dz = rstd·(dx̂ − mean(dx̂) − x̂·mean(dx̂·x̂)) with dx̂ = du·gamma.
func layerNormBackward(du, xhat, rstd, gamma, dGamma, dBeta []float32, rows, n int) {
	for r := range rows {
		dr, xr := du[r*n:(r+1)*n], xhat[r*n:(r+1)*n]
		var m1, m2 float64
		for j, g := range dr {
			dGamma[j] += g * xr[j]
			dBeta[j] += g
			dh := float64(g * gamma[j])
			m1 += dh
			m2 += dh * float64(xr[j])
		}
		m1 /= float64(n)
		m2 /= float64(n)
		s := float64(rstd[r])
		for j, g := range dr {
			dh := float64(g * gamma[j])
			dr[j] = float32(s * (dh - m1 - float64(xr[j])*m2))
		}
	}
}

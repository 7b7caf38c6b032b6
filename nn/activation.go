package nn

import (
	"math"

	"github.com/evolverl/evolve/internal/simd"
	"github.com/evolverl/evolve/netconf"
)

// negMask is all ones when v < 0 and zero when v ≥ 0 (−0 included, as the
// graph's x ≥ 0 has it): the branch-free select of ReLU and LeakyReLU, whose
// signs are as unpredictable as coin flips, so branches would mispredict.
func negMask(v float32) uint32 {
	return uint32((int64(0x80000000) - int64(math.Float32bits(v))) >> 63)
}

// activate writes act(u) to y, with the formulas of the graph builder.
func activate(act netconf.Activation, u, y []float32) {
	y = y[:len(u)]
	switch act {
	case netconf.ReLU:
		for i := simd.Relu(y, u); i < len(u); i++ {
			y[i] = max(u[i], 0) // NaN stays NaN, as in the graph
		}
	case netconf.LeakyReLU:
		for i, v := range u {
			m := negMask(v)
			y[i] = v * math.Float32frombits(one32&^m|slope32&m)
		}
	case netconf.Tanh:
		simd.Tanh(y, u)
	case netconf.Sigmoid:
		simd.Sigmoid(y, u)
	case netconf.ELU:
		for i, v := range u {
			if v >= 0 {
				y[i] = v
			} else {
				y[i] = float32(math.Expm1(float64(v)))
			}
		}
	case netconf.Softsign:
		for i, v := range u {
			y[i] = v / (1 + float32(math.Abs(float64(v))))
		}
	case netconf.GELU:
		// In float64: 1 + tanh cancels for negative inputs and 1 − tanh² in the
		// gradient near ±1, which would magnify the vector tanh's few ulps.
		for i, v := range u {
			x := float64(v)
			y[i] = float32(0.5 * x * (1 + math.Tanh(geluC*(x+0.044715*x*x*x))))
		}
	}
}

// activateGrad writes dy·act′(u) to du; y = act(u). At the kinks it follows the graph: ReLU
// and LeakyReLU take the positive branch at 0, and ELU, built as relu(x) + expm1(−relu(−x)),
// gets the derivative of both branches there, 2.
func activateGrad(act netconf.Activation, u, y, dy, du []float32) {
	du = du[:len(u)]
	dy = dy[:len(u)]
	y = y[:len(u)]
	switch act {
	case netconf.ReLU:
		for i := simd.ReluGrad(du, u, dy); i < len(u); i++ {
			du[i] = math.Float32frombits(math.Float32bits(dy[i]) &^ negMask(u[i]))
		}
	case netconf.LeakyReLU:
		for i, v := range u {
			m := negMask(v)
			du[i] = dy[i] * math.Float32frombits(one32&^m|slope32&m)
		}
	case netconf.Tanh:
		for i, t := range y {
			du[i] = dy[i] * (1 - t*t)
		}
	case netconf.Sigmoid:
		for i, s := range y {
			du[i] = dy[i] * s * (1 - s)
		}
	case netconf.ELU:
		for i, v := range u {
			g := float32(0)
			if v >= 0 {
				g = 1
			}
			if v <= 0 {
				g += float32(math.Exp(float64(v)))
			}
			du[i] = dy[i] * g
		}
	case netconf.Softsign:
		for i, v := range u {
			a := 1 + float32(math.Abs(float64(v)))
			du[i] = dy[i] / (a * a)
		}
	case netconf.GELU:
		for i, v := range u {
			x := float64(v)
			t := math.Tanh(geluC * (x + 0.044715*x*x*x))
			g := 0.5*(1+t) + 0.5*x*(1-t*t)*geluC*(1+3*0.044715*x*x)
			du[i] = dy[i] * float32(g)
		}
	}
}

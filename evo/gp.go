// This file holds the Gaussian process behind PB2's explore (pb2.go): a
// time-varying squared-exponential kernel, its fit by the marginal
// likelihood, the posterior, and points added without observations.

package evo

import (
	"errors"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"
)

// gpKernel is PB2's time-varying kernel (Parker-Holder et al. 2020, after
// Bogunovic et al. 2016): between points (t, u) and (t', u'), with u the
// hyperparameters mapped to [0, 1] on their scales and t the generation,
//
//	k = Var · exp(−|u−u'|² / (2·Len²)) · (1−Eps)^(|t−t'|/2)
//
// so that an observation counts less the older it is; Noise is the
// observation noise's variance.
type gpKernel struct {
	Len, Var, Eps, Noise float64
}

func (k gpKernel) at(ta float64, a []float64, tb float64, b []float64) float64 {
	return k.ofPair(sqDist(a, b), math.Abs(ta-tb))
}

// ofPair is the kernel of two points whose u lie d2 apart squared and
// whose t lie dt apart.
func (k gpKernel) ofPair(d2, dt float64) float64 {
	return k.Var * math.Exp(-d2/(2*k.Len*k.Len)) * math.Pow(1-k.Eps, dt/2)
}

func sqDist(a, b []float64) float64 {
	d2 := 0.0
	for i := range a {
		d := a[i] - b[i]
		d2 += d * d
	}
	return d2
}

// gpPairs holds, for each pair of points i ≥ j (row by row), what the
// kernel needs of it: the squared distance of their u and the distance of
// their t. They do not depend on the kernel's parameters, so the fit
// computes them once.
type gpPairs struct{ d2, dt []float64 }

func newGPPairs(t []float64, u [][]float64) *gpPairs {
	p := &gpPairs{}
	for i := range t {
		for j := 0; j <= i; j++ {
			p.d2 = append(p.d2, sqDist(u[i], u[j]))
			p.dt = append(p.dt, math.Abs(t[i]-t[j]))
		}
	}
	return p
}

// gpBounds are the bounds of the kernel's parameters as the fit searches
// them (on a log scale), for y standardised to mean 0 and variance 1 and u
// in [0, 1].
var gpBounds = [4][2]float64{
	{0.05, 5},   // Len
	{0.05, 20},  // Var
	{1e-4, 0.5}, // Eps
	{1e-3, 1.5}, // Noise
}

// gpFromZ maps the fit's unconstrained z to a kernel within gpBounds: each
// parameter is the geometric interpolation of its bounds by the logistic
// of its z (z = 0: the geometric mean of the bounds).
func gpFromZ(z []float64) gpKernel {
	var p [4]float64
	for i, b := range gpBounds {
		s := 1 / (1 + math.Exp(-z[i]))
		p[i] = math.Exp(math.Log(b[0]) + s*(math.Log(b[1])-math.Log(b[0])))
	}
	return gpKernel{Len: p[0], Var: p[1], Eps: p[2], Noise: p[3]}
}

// gp is a Gaussian process posterior over standardised observations.
type gp struct {
	k gpKernel
	t []float64   // each point's time
	u [][]float64 // each point's coordinates
	y []float64   // standardised observations (pending points: their posterior mean)
	// pairs, when set, are the points' pair distances (the fit's).
	pairs *gpPairs
	chol  mat.Cholesky
	lower mat.TriDense // chol's lower factor L
	alpha []float64    // (K + Noise·I)⁻¹ y
}

// errGPData is returned for fewer than two points or no spread in y.
var errGPData = errors.New("gp: too few distinct observations")

// standardise returns y with mean 0 and variance 1, or errGPData when its
// values do not differ.
func standardise(y []float64) ([]float64, error) {
	if len(y) < 2 {
		return nil, errGPData
	}
	m, v := meanVar(y)
	if !(v > 0) {
		return nil, errGPData
	}
	s := math.Sqrt(v)
	out := make([]float64, len(y))
	for i, e := range y {
		out[i] = (e - m) / s
	}
	return out, nil
}

// fitGP standardises y and fits the kernel to the points (t, u) by
// maximising the log marginal likelihood with Nelder–Mead from the middle
// of gpBounds: deterministic for given data.
func fitGP(t []float64, u [][]float64, y []float64) (*gp, error) {
	ys, err := standardise(y)
	if err != nil {
		return nil, err
	}
	pairs := newGPPairs(t, u)
	nll := func(z []float64) float64 {
		g := &gp{k: gpFromZ(z), t: t, u: u, y: ys, pairs: pairs}
		if err := g.factor(); err != nil {
			return math.Inf(1)
		}
		return -g.logLikelihood()
	}
	z0 := make([]float64, len(gpBounds))
	res, err := optimize.Minimize(optimize.Problem{Func: nll}, z0,
		&optimize.Settings{FuncEvaluations: 400, Converger: &optimize.FunctionConverge{Absolute: 1e-6, Iterations: 40}},
		&optimize.NelderMead{})
	best := z0
	if err == nil && res != nil && !math.IsInf(res.F, 1) && res.F < nll(z0) {
		best = res.X
	}
	return newGP(gpFromZ(best), t, u, ys)
}

// newGP returns the posterior of kernel k given standardised ys at (t, u).
func newGP(k gpKernel, t []float64, u [][]float64, ys []float64) (*gp, error) {
	// Clipped, so that addPending never writes into the caller's arrays.
	g := &gp{k: k, t: slices.Clip(t), u: slices.Clip(u), y: slices.Clip(ys)}
	return g, g.factor()
}

// factor computes the Cholesky factor of K + Noise·I and alpha.
func (g *gp) factor() error {
	n := len(g.t)
	K := mat.NewSymDense(n, nil)
	p := 0
	for i := range n {
		for j := 0; j <= i; j++ {
			var v float64
			if g.pairs != nil {
				v = g.k.ofPair(g.pairs.d2[p], g.pairs.dt[p])
				p++
			} else {
				v = g.k.at(g.t[i], g.u[i], g.t[j], g.u[j])
			}
			if i == j {
				v += g.k.Noise
			}
			K.SetSym(i, j, v)
		}
	}
	if ok := g.chol.Factorize(K); !ok {
		return errors.New("gp: kernel matrix not positive definite")
	}
	g.lower.Reset()
	g.chol.LTo(&g.lower)
	a := mat.NewVecDense(n, nil)
	if err := g.chol.SolveVecTo(a, mat.NewVecDense(n, append([]float64(nil), g.y...))); err != nil {
		return err
	}
	g.alpha = a.RawVector().Data
	return nil
}

// logLikelihood returns log p(y | t, u, kernel).
func (g *gp) logLikelihood() float64 {
	fit := 0.0
	for i, a := range g.alpha {
		fit += g.y[i] * a
	}
	n := float64(len(g.y))
	return -0.5*fit - 0.5*g.chol.LogDet() - 0.5*n*math.Log(2*math.Pi)
}

// predict returns the posterior mean and variance of the latent function
// at (t, u), in standardised units.
func (g *gp) predict(t float64, u []float64) (mean, variance float64) {
	n := len(g.t)
	ks := make([]float64, n)
	for i := range n {
		ks[i] = g.k.at(t, u, g.t[i], g.u[i])
		mean += ks[i] * g.alpha[i]
	}
	v := mat.NewVecDense(n, nil)
	if err := v.SolveVec(&g.lower, mat.NewVecDense(n, ks)); err != nil {
		return mean, 0
	}
	variance = g.k.Var - mat.Dot(v, v)
	return mean, max(variance, 0)
}

// addPending adds a point chosen but not yet observed, with its posterior
// mean as its value: the mean stays as it was and the variance near the
// point shrinks, so that the next choice of a batch goes elsewhere
// (GP-BUCB, Desautels et al. 2014).
func (g *gp) addPending(t float64, u []float64) error {
	m, _ := g.predict(t, u)
	g.t = append(g.t, t)
	g.u = append(g.u, u)
	g.y = append(g.y, m)
	return g.factor()
}

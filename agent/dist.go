package agent

import (
	"fmt"
	"math"

	"github.com/evolverl/evolve/envs"
	G "gorgonia.org/gorgonia"
)

// maskFill is the logit of an illegal action: exp(−1e9 − logsumexp) is
// exactly 0 in float32, so an illegal action is never sampled and its logit
// gets exactly zero gradient.
const maskFill = -1e9

// distKind is the family of the policy's action distribution.
type distKind int

const (
	categorical distKind = iota // Discrete and MultiDiscrete: independent categoricals
	bernoulli                   // MultiBinary: independent bits
	gaussian                    // Box: diagonal Gaussian, state-independent log-std
)

// dist describes the policy's distribution for one action space: how wide
// the actor's output is and how actions map to it.
type dist struct {
	kind  distKind
	space envs.Space
	nvec  []int // categorical: choices per component (one component for Discrete)
	start int   // Discrete.Start: action value of choice 0
	size  int   // actor output width: sum(nvec), bits, or action dims
	low   []float32
	high  []float32 // gaussian: the bounds actions are clipped to for the env
}

func newDist(s envs.Space) (*dist, error) {
	switch s := s.(type) {
	case envs.Discrete:
		return &dist{kind: categorical, space: s, nvec: []int{s.N}, start: s.Start, size: s.N}, nil
	case envs.MultiDiscrete:
		n := 0
		for _, k := range s.Nvec {
			n += k
		}
		return &dist{kind: categorical, space: s, nvec: append([]int(nil), s.Nvec...), size: n}, nil
	case envs.MultiBinary:
		return &dist{kind: bernoulli, space: s, size: s.N}, nil
	case envs.Box:
		if len(s.Dims) != 1 {
			return nil, fmt.Errorf("box action space %v: only one-dimensional Box actions are supported", s)
		}
		return &dist{kind: gaussian, space: s, size: s.Dims[0], low: s.Low, high: s.High}, nil
	}
	return nil, fmt.Errorf("action space %v is not supported (Discrete, MultiDiscrete, MultiBinary or a 1-D Box)", s)
}

// actWidth is the flat size of one action.
func (d *dist) actWidth() int { return d.space.FlatSize() }

// distGraph holds the nodes of the distribution on top of the actor's
// output for one batch of rows. Acting and training build the log-probability
// of an action from the same operations, so that PPO's first ratio is
// exactly 1: categorical and Bernoulli log-probabilities are selected from
// per-choice values (exact in both), a Gaussian's goes through the same
// nodes from the action on.
type distGraph struct {
	// Inputs.
	maskAdd *G.Node // categorical: [rows, size], 0 or maskFill
	onehot  *G.Node // categorical, training: [rows, size], the taken choices
	bits    *G.Node // bernoulli, training: [rows, size], the taken bits (0/1)
	noise   *G.Node // gaussian, acting: [rows, size] standard normal draws
	action  *G.Node // gaussian: [rows, size]; an input when training, mean + std·noise when acting

	// Outputs.
	logpAll []*G.Node // categorical, acting: per component [rows, n_c] log-probabilities of every choice
	logp1   *G.Node   // bernoulli, acting: [rows, size] log σ(z), log-probability of a 1 bit
	logp0   *G.Node   // bernoulli, acting: [rows, size] log σ(−z)
	actionV G.Value   // gaussian, acting: the sampled action (read, since it is an inner node)
	logp    *G.Node   // training (and gaussian acting): [rows] log π(action)
	entropy *G.Node   // training: [rows]
}

// build adds the distribution to g on top of out ([rows, size]); logStd is
// the Gaussian's parameter node. Acting graphs get what sampling needs,
// training graphs the log-probability and entropy of given actions.
func (d *dist) build(g *G.ExprGraph, out *G.Node, rows int, acting bool, logStd *G.Node) (dg *distGraph, err error) {
	defer func() {
		if r := recover(); r != nil { // must() below: a shape error is a bug, reported as one
			err = fmt.Errorf("policy distribution: %v", r)
		}
	}()
	dg = &distGraph{}
	switch d.kind {
	case categorical:
		dg.maskAdd = newInput(g, "mask_add", rows, d.size)
		if !acting {
			dg.onehot = newInput(g, "onehot", rows, d.size)
		}
		logits := must(G.Add(out, dg.maskAdd))
		off := 0
		for _, n := range d.nvec {
			part, hot := logits, dg.onehot
			if len(d.nvec) > 1 {
				part = must(G.Slice(logits, nil, G.S(off, off+n)))
				if !acting {
					hot = must(G.Slice(dg.onehot, nil, G.S(off, off+n)))
				}
			}
			off += n
			lp := logSoftmax(part)
			if acting {
				dg.logpAll = append(dg.logpAll, lp)
				continue
			}
			// One non-zero term per row: the sum is exactly the chosen
			// log-probability, the value acting read from logpAll.
			sel := must(G.Sum(must(G.HadamardProd(hot, lp)), 1))
			ent := must(G.Neg(must(G.Sum(must(G.HadamardProd(must(G.Exp(lp)), lp)), 1))))
			if dg.logp == nil {
				dg.logp, dg.entropy = sel, ent
			} else {
				dg.logp, dg.entropy = must(G.Add(dg.logp, sel)), must(G.Add(dg.entropy, ent))
			}
		}
	case bernoulli:
		// log σ(z) = −softplus(−z), log σ(−z) = −softplus(z).
		logp1 := must(G.Neg(must(G.Softplus(must(G.Neg(out))))))
		logp0 := must(G.Neg(must(G.Softplus(out))))
		if acting {
			dg.logp1, dg.logp0 = logp1, logp0
			break
		}
		// log p(b) = b·log σ(z) + (1−b)·log σ(−z): one term is exactly 0.
		dg.bits = newInput(g, "bits", rows, d.size)
		notBits := must(G.Sub(G.NewConstant(float32(1)), dg.bits))
		lp := must(G.Add(must(G.HadamardProd(dg.bits, logp1)), must(G.HadamardProd(notBits, logp0))))
		dg.logp = must(G.Sum(lp, 1))
		// H = softplus(z) − z·σ(z) per bit.
		h := must(G.Sub(must(G.Softplus(out)), must(G.HadamardProd(out, must(G.Sigmoid(out))))))
		dg.entropy = must(G.Sum(h, 1))
	case gaussian:
		std := must(G.Exp(logStd))
		if acting {
			dg.noise = newInput(g, "noise", rows, d.size)
			dg.action = must(G.Add(out, must(G.BroadcastHadamardProd(dg.noise, std, nil, []byte{0}))))
			G.Read(dg.action, &dg.actionV)
		} else {
			dg.action = newInput(g, "action", rows, d.size)
		}
		// log N(a; μ, σ) = Σ_d −½·z² − log σ − ½·log 2π with z = (a − μ)/σ.
		z := must(G.BroadcastHadamardDiv(must(G.Sub(dg.action, out)), std, nil, []byte{0}))
		halfSq := must(G.Mul(G.NewConstant(float32(0.5)), must(G.Square(z))))
		perDim := must(G.BroadcastSub(must(G.Neg(halfSq)), logStd, nil, []byte{0}))
		perDim = must(G.Sub(perDim, G.NewConstant(float32(0.5*math.Log(2*math.Pi)))))
		dg.logp = must(G.Sum(perDim, 1))
		if !acting {
			// The entropy does not depend on the state: Σ_d ½ + ½·log 2π + log σ.
			ent := must(G.Sum(must(G.Add(logStd, G.NewConstant(float32(0.5+0.5*math.Log(2*math.Pi)))))))
			dg.entropy = must(G.Mul(newConstOnes(g, rows), ent))
		}
	}
	return dg, nil
}

// logSoftmax is the log-softmax over the columns of x [rows, n], built from
// elementary ops: x − m − log Σ exp(x − m) with m the row maximum.
//
// gorgonia v0.9.18's own LogSoftMax (tensor's softMaxLastDimF32) shifts
// every row by a maximum seeded with the first element of the whole batch
// instead of the row's own. With a masked logit of −1e9 there, exp overflows
// and the log-probabilities of other rows become NaN; otherwise a row's
// rounding depends on the rest of the batch, so acting (N rows) and
// training (a minibatch) would disagree in the last bit. It also starts one
// goroutine per row.
func logSoftmax(x *G.Node) *G.Node {
	m := must(G.Max(x, 1))
	z := must(G.BroadcastSub(x, m, nil, []byte{1}))
	lse := must(G.Log(must(G.Sum(must(G.Exp(z)), 1))))
	return must(G.BroadcastSub(z, lse, nil, []byte{1}))
}

func must(n *G.Node, err error) *G.Node {
	if err != nil {
		panic(err)
	}
	return n
}

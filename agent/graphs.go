package agent

import (
	"fmt"

	"github.com/evolverl/evolve/netconf"
	G "gorgonia.org/gorgonia"
)

// nets builds the actor and critic on top of the input x. The critic is a
// second head on the actor's encoder when encoders are shared. steps is the
// LSTM unroll length (1 for acting).
type nets struct {
	actor, critic *netconf.Net
	criticOut     *G.Node // [rows, 1]
	logStd        *G.Node // gaussian only
	learnables    G.Nodes // in the order of (*PPO).tensors()
}

func (a *PPO) buildNets(g *G.ExprGraph, x *G.Node, steps int) (*nets, error) {
	n := &nets{}
	var err error
	n.actor, err = netconf.Build(g, a.actorSpec, a.actor, x, netconf.Options{Name: "actor", Steps: steps})
	if err != nil {
		return nil, fmt.Errorf("actor: %w", err)
	}
	n.learnables = append(n.learnables, n.actor.Learnables()...)
	if a.cfg.ShareEncoders {
		out, params, err := netconf.BuildHead(g, a.criticSpec, a.critic, n.actor.Latent, netconf.Options{Name: "critic", Steps: steps})
		if err != nil {
			return nil, fmt.Errorf("critic head: %w", err)
		}
		n.criticOut = out
		for _, p := range params {
			n.learnables = append(n.learnables, p.Node)
		}
	} else {
		n.critic, err = netconf.Build(g, a.criticSpec, a.critic, x, netconf.Options{Name: "critic", Steps: steps})
		if err != nil {
			return nil, fmt.Errorf("critic: %w", err)
		}
		n.criticOut = n.critic.Out
		n.learnables = append(n.learnables, n.critic.Learnables()...)
	}
	if a.logStd != nil {
		n.logStd = paramNode(g, "actor/log_std", a.logStd)
		n.learnables = append(n.learnables, n.logStd)
	}
	return n, nil
}

// obsShape is the input shape for rows observations: [rows, features],
// NCHW [rows, C, H, W] for images, and the flat [rows, total] for Dict
// observations, whose networks split it by key.
func (a *PPO) obsShape(rows int) []int {
	if a.actorSpec.Encoder == netconf.EncoderCNN && !a.actorSpec.Dict() {
		return append([]int{rows}, a.actorSpec.Input...)
	}
	return []int{rows, a.actorSpec.Input[0]}
}

// actGraph computes, for a batch of observations, what acting needs: the
// distribution's sampling inputs and the critic's value.
type actGraph struct {
	rows  int
	g     *G.ExprGraph
	vm    G.VM
	obs   *G.Node
	nets  *nets
	dist  *distGraph
	value *G.Node
	src   actDist // views of the outputs, for sample
}

func (a *PPO) newActGraph(rows int) (*actGraph, error) {
	g := G.NewGraph()
	x := newInput(g, "obs", a.obsShape(rows)...)
	n, err := a.buildNets(g, x, 1)
	if err != nil {
		return nil, err
	}
	dg, err := a.dist.build(g, n.actor.Out, rows, true, n.logStd)
	if err != nil {
		return nil, err
	}
	return &actGraph{rows: rows, g: g, vm: G.NewTapeMachine(g), obs: x, nets: n, dist: dg, value: n.criticOut}, nil
}

// trainGraph computes the PPO loss of a minibatch and its gradient.
type trainGraph struct {
	rows int
	g    *G.ExprGraph
	vm   G.VM
	obs  *G.Node
	nets *nets
	dist *distGraph

	// Per-row inputs: log π_old(a|s), normalised advantages, returns, old
	// values, and weights (1 for a real step, 0 for BPTT padding).
	oldLogp, adv, ret, oldValue, weight *G.Node
	// Scalar inputs, so hyperparameter mutations need no rebuild.
	clipLo, clipHi, clipNeg, clipPos, entCoef, vfCoef, invWeight *G.Node

	loss, pgLoss, vLoss, entropy *G.Node
	logRatio                     G.Value // read: an inner node
}

func (a *PPO) newTrainGraph(rows, steps int) (tg *trainGraph, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("build training graph: %v", r)
		}
	}()
	g := G.NewGraph()
	x := newInput(g, "obs", a.obsShape(rows)...)
	n, err := a.buildNets(g, x, steps)
	if err != nil {
		return nil, err
	}
	dg, err := a.dist.build(g, n.actor.Out, rows, false, n.logStd)
	if err != nil {
		return nil, err
	}
	tg = &trainGraph{rows: rows, g: g, obs: x, nets: n, dist: dg,
		oldLogp: newInput(g, "old_logp", rows), adv: newInput(g, "adv", rows), ret: newInput(g, "ret", rows),
		oldValue: newInput(g, "old_value", rows), weight: newInput(g, "weight", rows),
		clipLo: newScalar(g, "clip_lo"), clipHi: newScalar(g, "clip_hi"),
		clipNeg: newScalar(g, "clip_neg"), clipPos: newScalar(g, "clip_pos"),
		entCoef: newScalar(g, "ent_coef"), vfCoef: newScalar(g, "vf_coef"), invWeight: newScalar(g, "inv_weight"),
	}
	mean := func(v *G.Node) *G.Node {
		return must(G.Mul(must(G.Sum(must(G.HadamardProd(v, tg.weight)))), tg.invWeight))
	}
	// Clipped surrogate: mean(max(−A·r, −A·clip(r, 1−c, 1+c))).
	logRatio := must(G.Sub(dg.logp, tg.oldLogp))
	G.Read(logRatio, &tg.logRatio)
	ratio := must(G.Exp(logRatio))
	negAdv := must(G.Neg(tg.adv))
	pg1 := must(G.HadamardProd(negAdv, ratio))
	pg2 := must(G.HadamardProd(negAdv, clipNodes(ratio, tg.clipLo, tg.clipHi)))
	tg.pgLoss = mean(maxNodes(pg1, pg2))
	// Clipped value loss: ½·mean(max((v−R)², (v_old + clip(v − v_old, ±c) − R)²)).
	v := must(G.Reshape(n.criticOut, []int{rows}))
	vl1 := must(G.Square(must(G.Sub(v, tg.ret))))
	vClipped := must(G.Add(tg.oldValue, clipNodes(must(G.Sub(v, tg.oldValue)), tg.clipNeg, tg.clipPos)))
	vl2 := must(G.Square(must(G.Sub(vClipped, tg.ret))))
	tg.vLoss = must(G.Mul(G.NewConstant(float32(0.5)), mean(maxNodes(vl1, vl2))))
	tg.entropy = mean(dg.entropy)
	// loss = pg − ent_coef·H + vf_coef·v_loss
	tg.loss = must(G.Add(must(G.Sub(tg.pgLoss, must(G.Mul(tg.entCoef, tg.entropy)))), must(G.Mul(tg.vfCoef, tg.vLoss))))
	if _, err := G.Grad(tg.loss, n.learnables...); err != nil {
		return nil, fmt.Errorf("gradient of the PPO loss: %w", err)
	}
	tg.vm = G.NewTapeMachine(g, G.BindDualValues(n.learnables...))
	return tg, nil
}

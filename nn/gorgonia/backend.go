package gorgonia

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	G "gorgonia.org/gorgonia"

	"github.com/evolverl/evolve/netconf"
	"github.com/evolverl/evolve/nn"
)

// Name is the name the backend is registered under with package nn.
const Name = "gorgonia"

func init() { nn.Register(Name, Backend{}) }

// Backend is the reference network backend: an nn.Backend whose models are gorgonia graphs
// built by Build and BuildHead, differentiated by G.Grad. It favours being obviously right
// over speed — it is the oracle the plain-Go backend is held to — and is also selectable
// for a run by its Name.
type Backend struct{}

// NewModel returns a model of the actor and critic specs (see nn.Backend). The critic must
// have one output, the value; a separate critic must read the same observation shape as
// the actor, and a shared one a latent of the actor's width.
func (Backend) NewModel(actor, critic netconf.Spec, shared bool) (nn.Model, error) {
	al, err := netconf.Layout(actor)
	if err != nil {
		return nil, fmt.Errorf("actor: %w", err)
	}
	cl, err := netconf.Layout(critic)
	if err != nil {
		return nil, fmt.Errorf("critic: %w", err)
	}
	if critic.Output != 1 {
		return nil, fmt.Errorf("critic: %d outputs, want 1 (the value)", critic.Output)
	}
	if shared {
		if critic.LatentWidth() != actor.LatentWidth() {
			return nil, fmt.Errorf("critic head reads a latent of %d, the actor's encoder gives %d", critic.LatentWidth(), actor.LatentWidth())
		}
		cl = slices.DeleteFunc(cl, func(t netconf.TensorSpec) bool {
			return !strings.HasPrefix(t.Name, "head.") && !strings.HasPrefix(t.Name, "out.")
		})
	} else if !slices.Equal(actor.Input, critic.Input) || actor.Dict() != critic.Dict() {
		return nil, fmt.Errorf("critic input %v (dict %v), actor input %v (dict %v): a separate critic reads the actor's observations",
			critic.Input, critic.Dict(), actor.Input, actor.Dict())
	}
	m := &model{actorSpec: actor.Clone(), criticSpec: critic.Clone(), shared: shared,
		actorLayout: al, criticLayout: cl, graphs: map[shape]*graph{}}
	m.actor, m.critic = zeros(al), zeros(cl)
	m.obsShape = []int{actor.Input[0]}
	if actor.Encoder == netconf.EncoderCNN && !actor.Dict() {
		m.obsShape = slices.Clone(actor.Input)
	}
	m.stateSize = actor.StateSize()
	if !shared {
		m.stateSize += critic.StateSize()
	}
	return m, nil
}

// zeros returns zeroed tensors of the layout l.
func zeros(l []netconf.TensorSpec) netconf.Params {
	p := make(netconf.Params, len(l))
	for i, t := range l {
		p[i] = netconf.Tensor{Name: t.Name, Shape: slices.Clone(t.Shape), Data: make([]float32, t.Size())}
	}
	return p
}

// model is an actor and a critic computed by one gorgonia graph per batch shape.
//
// Every graph's parameter nodes are backed by the model's own actor and critic Params;
// Forward copies the batch's weights into them, so all graphs see the weights of the last
// Forward and the caller's slices are never aliased by a graph.
type model struct {
	actorSpec, criticSpec     netconf.Spec
	shared                    bool
	actorLayout, criticLayout []netconf.TensorSpec // the critic's: head and output only when shared
	actor, critic             netconf.Params
	obsShape                  []int // one observation: [features], or [C, H, W] for a CNN
	stateSize                 int
	graphs                    map[shape]*graph
	last                      *graph // of the last Forward, for Backward
}

// shape is a batch shape: rows, and the time steps an LSTM unrolls over (1 without one).
type shape struct{ rows, steps int }

// graph computes, for one batch shape, the actor's output, the values and the gradient of
// cost = Σ out ⊙ dOut + Σ values ⊙ dValues with respect to every parameter.
type graph struct {
	shape
	vm                      G.VM
	obs, dOut, dValues      *G.Node // inputs
	actorNodes, criticNodes []ParamNode
	// recurrent holds the state inputs and outputs of the actor's LSTM, then the critic's;
	// networks without one have no entry.
	recurrent []*Recurrent
	// recurrentOff holds where each entry of recurrent starts in a sequence's state.
	recurrentOff []int
	// windows holds the Transformer encoders' inputs, with where their part of a
	// sequence's state starts.
	windows     []*Windows
	windowsOff  []int
	out, values []float32 // copied out by every run
	features    []float32 // the actor's output layer's input, copied out by every run
}

func (m *model) StateSize() int { return m.stateSize }

func (m *model) Forward(b nn.Batch) (out, values []float32, err error) {
	m.last = nil
	sh := shape{rows: b.Rows, steps: max(b.Steps, 1)}
	if m.stateSize == 0 {
		sh.steps = 1 // feed-forward networks treat every row alike
	}
	if sh.rows < 1 || sh.rows%sh.steps != 0 {
		return nil, nil, fmt.Errorf("batch of %d rows in %d steps: want a positive multiple of the steps", b.Rows, sh.steps)
	}
	if want := b.Rows * shapeSize(m.obsShape); len(b.Obs) != want {
		return nil, nil, fmt.Errorf("batch obs has %d values, want %d rows × %v", len(b.Obs), b.Rows, m.obsShape)
	}
	seqState := sh.rows / sh.steps * m.stateSize
	if b.State != nil && len(b.State) != seqState || b.Final != nil && len(b.Final) != seqState {
		return nil, nil, fmt.Errorf("batch state has %d values and final %d, want %d sequences × %d",
			len(b.State), len(b.Final), sh.rows/sh.steps, m.stateSize)
	}
	if b.Starts != nil && len(b.Starts) != b.Rows {
		return nil, nil, fmt.Errorf("batch has %d episode starts for %d rows", len(b.Starts), b.Rows)
	}
	if err := copyParams(m.actor, b.Actor, m.actorLayout); err != nil {
		return nil, nil, fmt.Errorf("actor weights: %w", err)
	}
	if err := copyParams(m.critic, b.Critic, m.criticLayout); err != nil {
		return nil, nil, fmt.Errorf("critic weights: %w", err)
	}
	g, err := m.graph(sh)
	if err != nil {
		return nil, nil, err
	}
	copy(Data(g.obs), b.Obs)
	clear(Data(g.dOut))
	clear(Data(g.dValues))
	g.setState(b.State, m.stateSize)
	g.setStarts(b.Starts)
	for i, w := range g.windows {
		off := g.windowsOff[i]
		w.Fill(b.Obs, tail(b.State, off), m.stateSize, b.Starts, sh.steps, tail(b.Final, off))
	}
	if err := g.run(); err != nil {
		return nil, nil, err
	}
	if b.Final != nil {
		g.finalState(b.Final, m.stateSize)
	}
	m.last = g
	return g.out, g.values, nil
}

// ActorFeatures implements nn.FeatureModel.
func (m *model) ActorFeatures() []float32 {
	if m.last == nil {
		return nil
	}
	return m.last.features
}

func (m *model) Backward(dOut, dValues []float32, gActor, gCritic netconf.Params) error {
	g := m.last
	if g == nil {
		return errors.New("backward without a successful forward")
	}
	if len(dOut) != len(g.out) || len(dValues) != len(g.values) {
		return fmt.Errorf("gradients of %d outputs and %d values, the last forward gave %d and %d", len(dOut), len(dValues), len(g.out), len(g.values))
	}
	if err := gActor.CheckLayout(m.actorLayout); err != nil {
		return fmt.Errorf("actor gradients: %w", err)
	}
	if err := gCritic.CheckLayout(m.criticLayout); err != nil {
		return fmt.Errorf("critic gradients: %w", err)
	}
	copy(Data(g.dOut), dOut)
	copy(Data(g.dValues), dValues)
	// Re-running the forward pass costs little next to the backward pass, and the recurrent
	// state and observations are still in the graph's inputs.
	if err := g.run(); err != nil {
		return err
	}
	if err := addGrads(gActor, g.actorNodes); err != nil {
		return fmt.Errorf("actor: %w", err)
	}
	if err := addGrads(gCritic, g.criticNodes); err != nil {
		return fmt.Errorf("critic: %w", err)
	}
	return nil
}

// copyParams copies the tensors of the layout l from src into dst, laid out by l.
func copyParams(dst, src netconf.Params, l []netconf.TensorSpec) error {
	if err := src.CheckLayout(l); err != nil {
		return err
	}
	for i := range dst {
		copy(dst[i].Data, src.Tensor(dst[i].Name).Data)
	}
	return nil
}

// addGrads adds the gradient of every node to the tensor of its name in dst.
func addGrads(dst netconf.Params, nodes []ParamNode) error {
	for _, pn := range nodes {
		g, err := gradData(pn.Node)
		if err != nil {
			return err
		}
		d := dst.Tensor(pn.Name).Data
		for i, v := range g {
			d[i] += v
		}
	}
	return nil
}

// gradData returns the float32 slice behind a parameter node's gradient.
func gradData(n *G.Node) ([]float32, error) {
	gv, err := n.Grad()
	if err != nil {
		return nil, fmt.Errorf("gradient of %s: %w", n.Name(), err)
	}
	d, ok := gv.Data().([]float32)
	if !ok {
		return nil, fmt.Errorf("gradient of %s holds %T, want []float32", n.Name(), gv.Data())
	}
	return d, nil
}

// run zeroes the gradients (the tape machine adds to them: GORGONIA.md, pitfall 3) and runs
// the machine once, forward and backward.
func (g *graph) run() error {
	for _, nodes := range [][]ParamNode{g.actorNodes, g.criticNodes} {
		for _, pn := range nodes {
			if gv, err := pn.Node.Grad(); err == nil && gv != nil { // none before the first run
				d, err := gradData(pn.Node)
				if err != nil {
					return err
				}
				clear(d)
			}
		}
	}
	g.vm.Reset()
	if err := g.vm.RunAll(); err != nil {
		return fmt.Errorf("run the %d-row graph: %w", g.rows, err)
	}
	return nil
}

// setState writes each sequence's initial state (zeros for nil) into the graph's inputs.
// A sequence's stride floats hold, per LSTM and layer, h then c.
func (g *graph) setState(state []float32, stride int) {
	g.eachState(stride, func(node *G.Node, _ []float32, seq, off, n int) {
		d := Data(node)[seq*n : (seq+1)*n]
		if state == nil {
			clear(d)
		} else {
			copy(d, state[seq*stride+off:])
		}
	})
}

// setStarts writes the episode starts (none for nil) into every LSTM's starts input. The
// graph keeps 1 − starts of the state, so any nonzero start is written as 1.
func (g *graph) setStarts(starts []float32) {
	for _, r := range g.recurrent {
		d := Data(r.Starts)
		clear(d)
		for i, s := range starts {
			if s != 0 {
				d[i] = 1
			}
		}
	}
}

// finalState copies each sequence's state after the last step into final.
func (g *graph) finalState(final []float32, stride int) {
	g.eachState(stride, func(_ *G.Node, out []float32, seq, off, n int) {
		copy(final[seq*stride+off:seq*stride+off+n], out[seq*n:(seq+1)*n])
	})
}

// eachState calls f for every sequence and every h and c of every LSTM layer, in the order
// of a sequence's state, with the initial-state input node, the captured final state, the
// sequence, the offset in the sequence's state, and the hidden size.
func (g *graph) eachState(stride int, f func(in *G.Node, out []float32, seq, off, n int)) {
	for seq := range g.rows / g.steps {
		for i, r := range g.recurrent {
			off := g.recurrentOff[i]
			for l := range r.Layers {
				f(r.H0[l], r.H[l], seq, off, r.Hidden)
				off += r.Hidden
				if r.C0 != nil { // an LSTM's
					f(r.C0[l], r.C[l], seq, off, r.Hidden)
					off += r.Hidden
				}
			}
		}
	}
}

// buildMu serialises graph construction: gorgonia v0.9.18 keeps unsynchronised
// package-level state while building (see Rectify), and a backend's models may be built
// from several goroutines.
var buildMu sync.Mutex

// graph returns the graph for a batch shape, building it on first use.
func (m *model) graph(sh shape) (*graph, error) {
	if g, ok := m.graphs[sh]; ok {
		return g, nil
	}
	buildMu.Lock()
	g, err := m.newGraph(sh)
	buildMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("build the graph of %s and %s for %d rows in %d steps: %w", m.actorSpec, m.criticSpec, sh.rows, sh.steps, err)
	}
	m.graphs[sh] = g
	return g, nil
}

func (m *model) newGraph(sh shape) (g *graph, err error) {
	defer func() {
		if r := recover(); r != nil { // gorgonia panics on some shape errors
			if e, ok := r.(error); ok {
				g, err = nil, fmt.Errorf("gorgonia: %w", e)
			} else {
				g, err = nil, fmt.Errorf("gorgonia: %v", r)
			}
		}
	}()
	eg := G.NewGraph()
	g = &graph{shape: sh}
	g.obs = NewInput(eg, "obs", append([]int{sh.rows}, m.obsShape...)...)
	actor, err := Build(eg, m.actorSpec, m.actor, g.obs, Options{Name: "actor", Steps: sh.steps})
	if err != nil {
		return nil, fmt.Errorf("actor: %w", err)
	}
	g.actorNodes = actor.Params
	g.addState(actor, 0)
	var value *G.Node
	if m.shared {
		if value, g.criticNodes, err = BuildHead(eg, m.criticSpec, m.critic, actor.Latent, Options{Name: "critic"}); err != nil {
			return nil, fmt.Errorf("critic head: %w", err)
		}
	} else {
		critic, err := Build(eg, m.criticSpec, m.critic, g.obs, Options{Name: "critic", Steps: sh.steps})
		if err != nil {
			return nil, fmt.Errorf("critic: %w", err)
		}
		value, g.criticNodes = critic.Out, critic.Params
		g.addState(critic, m.actorSpec.StateSize())
	}
	g.dOut = NewInput(eg, "d_out", actor.Out.Shape()...)
	g.dValues = NewInput(eg, "d_values", value.Shape()...)
	cost, err := sumProduct(actor.Out, g.dOut)
	if err != nil {
		return nil, err
	}
	cv, err := sumProduct(value, g.dValues)
	if err != nil {
		return nil, err
	}
	if cost, err = G.Add(cost, cv); err != nil {
		return nil, err
	}
	var wrt G.Nodes
	for _, pn := range append(slices.Clip(g.actorNodes), g.criticNodes...) {
		wrt = append(wrt, pn.Node)
	}
	if _, err := G.Grad(cost, wrt...); err != nil {
		return nil, fmt.Errorf("gradient: %w", err)
	}
	g.out, g.values, g.features = capture(actor.Out), capture(value), capture(actor.Features)
	g.vm = G.NewTapeMachine(eg, G.BindDualValues(wrt...))
	return g, nil
}

// addState records net's state inputs, which start at off in a sequence's state.
func (g *graph) addState(net *Net, off int) {
	if net.Recurrent != nil {
		g.recurrent, g.recurrentOff = append(g.recurrent, net.Recurrent), append(g.recurrentOff, off)
	}
	if net.Windows != nil {
		g.windows, g.windowsOff = append(g.windows, net.Windows), append(g.windowsOff, off)
	}
}

// tail returns s[off:], or nil for a nil s.
func tail(s []float32, off int) []float32 {
	if s == nil {
		return nil
	}
	return s[off:]
}

// sumProduct returns Σ x ⊙ w.
func sumProduct(x, w *G.Node) (*G.Node, error) {
	p, err := G.HadamardProd(x, w)
	if err != nil {
		return nil, err
	}
	return G.Sum(p)
}

package nn

import (
	"errors"
	"fmt"

	"github.com/evolverl/evolve/internal/bufs"
	"github.com/evolverl/evolve/netconf"
)

// Net computes one network of a netconf.Spec in plain Go: encoder (MLP, CNN, LSTM, GRU,
// Transformer, or one MLP or CNN per key of a Dict observation) → latent → head → output layer, forward for
// any number of rows and backward to every parameter's gradient.
//
// It computes what the gorgonia reference backend computes: Linear (y = x·W + b with W
// stored [in, out]), LayerNorm (eps 1e-5, biased variance), the seven activations with
// gorgonia's derivatives also at the kinks (ReLU and LeakyReLU take the positive branch at
// 0, so ReLU′(0) = 1; ELU, built as relu(x) + expm1(−relu(−x)), gets both branches there,
// ELU′(0) = 2), Conv2d (NCHW, no padding, flattened in C, H, W order into the latent),
// PyTorch's LSTM (gates i, f, g, o) and GRU (r, z, n), and a pre-LayerNorm causal
// Transformer (docs/agent-file.md section 4).
//
// Weights are read in place from the Params handed to each call, so an optimizer that
// updates Data, or code that replaces a tensor's Data, is seen by the next call. Gradients
// are added into a Params laid out like the weights (netconf.Zeros gives one); the caller
// zeroes them. A Net keeps its intermediate values and outputs in buffers that grow to the
// largest row count seen and are reused: after a warm-up no call allocates. Returned slices
// are views of those buffers, valid until the next call of the same kind; the inputs handed
// to the forward calls are kept (not copied) for the backward pass and must not change
// before it.
//
// The network splits at the latent layer, so two heads can share one encoder: run
// ForwardEncoder once, ForwardHead on each head's Net with that latent, then BackwardHead
// on each, sum the latent gradients, and BackwardEncoder once. A Net is not safe for
// concurrent use.
//
// Every row (every sequence, for an LSTM or GRU) is computed by the same sequence of float32
// operations whatever the batch around it, so a row's outputs do not depend on the batch:
// acting on N rows and training on a minibatch give the same log-probabilities.
type Net struct {
	spec              netconf.Spec
	enc               encoder
	head              []denseLayer // the head's layers, then the output layer
	encRows, headRows int
	lat               []float32    // input of the last ForwardHead (caller's memory)
	dLat              []float32    // gradient of the latent, returned by BackwardHead
	ones              []float32    // ones, one per row, for the bias gradients
	dx                [2][]float32 // gradients between layers, used in turn
	pEnc, pHead       binding
	gEnc, gHead       binding
	ws                workspace
	oneStep           Recurrence // the default recurrence: one step from zeros
}

// Recurrence is the recurrent context of a forward pass through an LSTM, GRU or Transformer
// encoder. The rows are time-major: step t of sequence s is row t·(rows/Steps) + s.
type Recurrence struct {
	// Steps is the number of time steps of every sequence.
	Steps int
	// State holds each sequence's initial state, Stride floats apart, this network's first:
	// layer by layer, h then c (a GRU: h only), Hidden floats each; a Transformer's window
	// of the inputs before the step and their count (StateSize in all). nil means zeros.
	// Final, if not nil, receives the state after the last step in the same layout; it may
	// be State itself.
	State, Final []float32
	Stride       int
	// Starts, if not nil, is [rows]: the state of a sequence is zeroed before the step of a
	// row whose entry is not 0, as at an episode start.
	Starts []float32
}

// workspace holds what the encoders' backward passes share.
type workspace struct {
	ones []float32
	dx   *[2][]float32
	rows int
}

// New returns a network for s.
func New(s netconf.Spec) (*Net, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	n := &Net{spec: s.Clone()}
	var err error
	if n.enc, err = newEncoder(s, &n.pEnc); err != nil {
		return nil, err
	}
	in := s.LatentWidth()
	n.head, in = appendMLP(n.head, "head", in, s.Head, &n.pHead)
	n.head = append(n.head, newDenseLayer("out", in, s.Output, false, "", &n.pHead))
	n.gEnc = binding{names: n.pEnc.names, sizes: n.pEnc.sizes}
	n.gHead = binding{names: n.pHead.names, sizes: n.pHead.sizes}
	return n, nil
}

// Spec returns the spec the network was made for.
func (n *Net) Spec() netconf.Spec { return n.spec }

// StateSize is the number of floats of recurrent state per sequence: 2·layers·hidden for an
// LSTM encoder, layers·hidden for a GRU, (context − 1)·input + 1 for a Transformer (see
// netconf.Spec.StateSize), else 0.
func (n *Net) StateSize() int { return n.spec.StateSize() }

// inputSize is the flat size of one input row.
func (n *Net) inputSize() int {
	size := 1
	for _, d := range n.spec.Input {
		size *= d
	}
	return size
}

// Forward runs the whole network on rows rows of x and returns the output [rows, output].
// rec is needed for an LSTM, GRU or Transformer encoder only (nil: one step from a zero
// state).
func (n *Net) Forward(p netconf.Params, x []float32, rows int, rec *Recurrence) ([]float32, error) {
	lat, err := n.ForwardEncoder(p, x, rows, rec)
	if err != nil {
		return nil, err
	}
	return n.ForwardHead(p, lat, rows)
}

// ForwardEncoder runs the encoder and the latent layer (with the head's activation) on x
// [rows, input] (NCHW images for a CNN) and returns the latent [rows, latent width]. p needs
// the "encoder." and "latent." tensors.
func (n *Net) ForwardEncoder(p netconf.Params, x []float32, rows int, rec *Recurrence) ([]float32, error) {
	if err := n.pEnc.resolve(p); err != nil {
		return nil, err
	}
	in := n.inputSize()
	if rows < 1 || len(x) < rows*in {
		return nil, fmt.Errorf("nn: %d input values for %d rows of %d", len(x), rows, in)
	}
	if n.StateSize() > 0 {
		if rec == nil {
			n.oneStep = Recurrence{Steps: 1}
			rec = &n.oneStep
		}
		if rec.Steps < 1 || rows%rec.Steps != 0 {
			return nil, fmt.Errorf("nn: %d rows do not split into sequences of %d steps", rows, rec.Steps)
		}
		need := (rows/rec.Steps-1)*rec.Stride + n.StateSize()
		if rec.State != nil && (len(rec.State) < need || rec.Stride < n.StateSize()) {
			return nil, fmt.Errorf("nn: recurrent state of %d values with stride %d for %d sequences of %d", len(rec.State), rec.Stride, rows/rec.Steps, n.StateSize())
		}
		if rec.Starts != nil && len(rec.Starts) < rows {
			return nil, fmt.Errorf("nn: %d episode starts for %d rows", len(rec.Starts), rows)
		}
		if rec.Final != nil && (len(rec.Final) < need || rec.Stride < n.StateSize()) {
			return nil, fmt.Errorf("nn: final state of %d values with stride %d for %d sequences of %d", len(rec.Final), rec.Stride, rows/rec.Steps, n.StateSize())
		}
	}
	lat, err := n.enc.forward(&n.pEnc, p, x[:rows*in], rows, rec)
	if err != nil {
		return nil, err
	}
	n.encRows = rows
	return lat, nil
}

// ForwardHead runs the head and the output layer on a latent [rows, latent width] and
// returns the output [rows, output]. p needs the "head." and "out." tensors only.
func (n *Net) ForwardHead(p netconf.Params, latent []float32, rows int) ([]float32, error) {
	if err := n.pHead.resolve(p); err != nil {
		return nil, err
	}
	w := n.spec.LatentWidth()
	if rows < 1 || len(latent) < rows*w {
		return nil, fmt.Errorf("nn: %d latent values for %d rows of %d", len(latent), rows, w)
	}
	n.lat, n.headRows = latent[:rows*w], rows
	return forwardLayers(n.head, &n.pHead, p, n.lat, rows), nil
}

// Features returns the input of the output layer at the last ForwardHead, [rows,
// spec.FeatureWidth()]: the head's last hidden layer's output, or the latent when the head
// has no hidden layer. It is a view valid until the next ForwardHead; nil before the first.
func (n *Net) Features() []float32 {
	if n.headRows == 0 {
		return nil
	}
	if k := len(n.head); k > 1 {
		return n.head[k-2].y[:n.headRows*n.spec.FeatureWidth()]
	}
	return n.lat
}

// errNoForward is returned by a backward call that has no matching forward pass.
var errNoForward = errors.New("nn: backward pass without a matching forward pass")

// Backward adds the gradient of every parameter for dOut [rows, output], the gradient of
// the output of the last Forward, into grad.
func (n *Net) Backward(p, grad netconf.Params, dOut []float32) error {
	dl, err := n.BackwardHead(p, grad, dOut)
	if err != nil {
		return err
	}
	return n.BackwardEncoder(p, grad, dl)
}

// BackwardHead adds the gradients of the head's and the output layer's parameters into grad
// and returns the gradient of the latent [rows, latent width], after ForwardHead.
func (n *Net) BackwardHead(p, grad netconf.Params, dOut []float32) ([]float32, error) {
	rows := n.headRows
	if rows == 0 {
		return nil, errNoForward
	}
	if len(dOut) < rows*n.spec.Output {
		return nil, fmt.Errorf("nn: %d output gradients for %d rows of %d", len(dOut), rows, n.spec.Output)
	}
	if err := n.pHead.resolve(p); err != nil {
		return nil, err
	}
	if err := n.gHead.resolve(grad); err != nil {
		return nil, fmt.Errorf("gradient: %w", err)
	}
	n.dLat = bufs.Grow(n.dLat, rows*n.spec.LatentWidth())
	n.setOnes(rows)
	backwardLayers(n.head, &n.pHead, &n.gHead, p, grad, n.lat, dOut[:rows*n.spec.Output], n.dLat, &n.dx, n.ones, rows)
	return n.dLat, nil
}

// BackwardEncoder adds the gradients of the encoder's and the latent layer's parameters into
// grad, given the gradient of the latent dLatent [rows, latent width], after ForwardEncoder.
// No gradient flows into the initial recurrent state.
func (n *Net) BackwardEncoder(p, grad netconf.Params, dLatent []float32) error {
	rows := n.encRows
	if rows == 0 {
		return errNoForward
	}
	if w := n.spec.LatentWidth(); len(dLatent) < rows*w {
		return fmt.Errorf("nn: %d latent gradients for %d rows of %d", len(dLatent), rows, w)
	}
	if err := n.pEnc.resolve(p); err != nil {
		return err
	}
	if err := n.gEnc.resolve(grad); err != nil {
		return fmt.Errorf("gradient: %w", err)
	}
	n.setOnes(rows)
	n.ws = workspace{ones: n.ones, dx: &n.dx, rows: rows}
	n.enc.backward(&n.pEnc, &n.gEnc, p, grad, dLatent[:rows*n.spec.LatentWidth()], &n.ws)
	return nil
}

// setOnes makes n.ones at least rows ones long.
func (n *Net) setOnes(rows int) {
	for len(n.ones) < rows {
		n.ones = append(n.ones, 1)
	}
}

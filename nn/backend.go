package nn

import (
	"fmt"
	"slices"
	"sync"

	"github.com/evolverl/evolve/netconf"
)

// Model computes an agent's two networks, the actor and the critic: the seam between the
// PPO loss (in package agent) and a network backend. A Model computes networks only; what
// their outputs mean (logits, Gaussian means, values) is the caller's business.
//
// A Model is not safe for concurrent use.
type Model interface {
	// StateSize is the number of floats of recurrent state per sequence, 0 for networks
	// without an LSTM, GRU or Transformer: the actor's, then (unless the critic shares the
	// actor's encoder) the critic's, each as netconf.Spec.StateSize lays it out (an LSTM
	// layer by layer, h then c; a GRU's h; a Transformer's window of the inputs before the
	// step, then their count).
	StateSize() int
	// Forward runs both networks on b and returns the actor's output [b.Rows·actor.Output]
	// and the critic's values [b.Rows]. The slices are the model's buffers, valid until its
	// next call. b.Obs must not change before the matching Backward.
	Forward(b Batch) (out, values []float32, err error)
	// Backward adds, for the gradients dOut and dValues of the last Forward's outputs, the
	// gradient of every parameter into gActor and gCritic, laid out like the Params of that
	// Forward. No gradient flows into the initial recurrent state.
	Backward(dOut, dValues []float32, gActor, gCritic netconf.Params) error
}

// FeatureModel is a Model that also gives the actor's features, what gSDE's state-dependent
// exploration noise is a linear map of. Both of this module's backends implement it.
type FeatureModel interface {
	Model
	// ActorFeatures returns the input of the actor's output layer at the last Forward,
	// [rows · actor.FeatureWidth()]: the head's last hidden layer, or the latent when the
	// head has none. It is the model's buffer, valid until its next call.
	ActorFeatures() []float32
}

// Batch is the input of one forward pass.
type Batch struct {
	// Actor and Critic hold the weights, read in place. When the critic shares the actor's
	// encoder, Critic holds only its "head." and "out." tensors.
	Actor, Critic netconf.Params
	// Obs is [Rows, input size], preprocessed. Recurrent batches are time-major: step t of
	// sequence s is row t·(Rows/Steps) + s.
	Obs  []float32
	Rows int
	// Steps is the number of time steps of each sequence of a recurrent batch (Rows is a
	// multiple of it); 0 or 1 for one step. Feed-forward models ignore it.
	Steps int
	// State holds each sequence's initial recurrent state, [Rows/Steps · StateSize()]; nil
	// means zeros. Final, if not nil, receives the state after the last step in the same
	// layout; it may be State itself.
	State, Final []float32
	// Starts, if not nil, is [Rows]: where Starts[r] ≠ 0 an episode starts at row r, and
	// the recurrent state of its sequence is zeroed before that step. (The agent cuts
	// sequences at episode ends and leaves it nil.)
	Starts []float32
}

// Backend builds Models from specs.
type Backend interface {
	// NewModel returns a model for the actor and critic specs (full specs, each with its
	// Input and Output set). With shared, the critic is a head on the actor's encoder: only
	// the critic spec's latent, head and output are used.
	NewModel(actor, critic netconf.Spec, shared bool) (Model, error)
}

// DefaultBackend is the name of the plain-Go backend of this package.
const DefaultBackend = "go"

var (
	registryMu sync.RWMutex
	registry   = map[string]Backend{DefaultBackend: goBackend{}}
)

// Register makes a backend available by name, as database/sql drivers do: a backend
// package calls it from its init function, and a program selects it by importing that
// package. It panics if the name is taken or b is nil.
func Register(name string, b Backend) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if b == nil {
		panic("nn: Register of a nil backend " + name)
	}
	if _, dup := registry[name]; dup {
		panic("nn: Register called twice for backend " + name)
	}
	registry[name] = b
}

// Lookup returns the backend registered under name ("" for the default).
func Lookup(name string) (Backend, error) {
	if name == "" {
		name = DefaultBackend
	}
	registryMu.RLock()
	defer registryMu.RUnlock()
	b, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("unknown network backend %q (registered: %v; the gorgonia backend needs an import of github.com/evolverl/evolve/nn/gorgonia)", name, backendNames())
	}
	return b, nil
}

// Backends returns the names of the registered backends, sorted.
func Backends() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	return backendNames()
}

func backendNames() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

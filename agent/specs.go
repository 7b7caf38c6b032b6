package agent

import (
	"fmt"

	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/netconf"
)

// DeriveSpecs returns the full specs of the actor and the critic of an
// agent with architecture net on the spaces obs and act, exactly as New
// derives them (inputs from the observation space, one encoder per key of
// a Dict, outputs and output gains from the action space), and logStd, the
// number of log-standard-deviation parameters (the size of Box actions; 0
// otherwise; with gSDE, Config.UseSDE, the log-std is a matrix of
// actor.FeatureWidth() rows of logStd). It builds nothing, so evo's memory estimate uses it before
// any agent exists.
func DeriveSpecs(obs, act envs.Space, net netconf.Spec) (actor, critic netconf.Spec, logStd int, err error) {
	s, err := deriveSpecs(obs, act, net)
	if err != nil {
		return actor, critic, 0, err
	}
	if s.dist.kind == gaussian {
		logStd = s.dist.size
	}
	return s.actor, s.critic, logStd, nil
}

// derivedSpecs is what an agent's architecture and spaces imply.
type derivedSpecs struct {
	dist          *dist
	actor, critic netconf.Spec
	scale         []imageScale // bounded images in the flat observation
	oneHot        *oneHot      // discrete observations, one-hot encoded
}

// deriveSpecs derives the actor's and critic's full specs from the
// architecture and the spaces, and checks them.
func deriveSpecs(obsSpace, actSpace envs.Space, net netconf.Spec) (derivedSpecs, error) {
	d, err := newDist(actSpace)
	if err != nil {
		return derivedSpecs{}, err
	}
	spec := net.Clone()
	var scale []imageScale
	var hot *oneHot
	if _, dict := obsSpace.(envs.Dict); !dict {
		if other := spec.DictTable(); other != "" {
			return derivedSpecs{}, fmt.Errorf("net has a %s table beside its %s encoder, which only a Dict observation's keys use, and the observation space %v is not one",
				other, spec.Encoder, obsSpace)
		}
	}
	switch obs := obsSpace.(type) {
	case envs.Discrete, envs.MultiDiscrete:
		if spec.Dict() {
			return derivedSpecs{}, fmt.Errorf("net.inputs lists %d dict keys, but the observation space %v is not a Dict", len(spec.Inputs), obs)
		}
		if spec.Encoder == netconf.EncoderCNN {
			return derivedSpecs{}, fmt.Errorf("cnn encoder needs image observations [C, H, W], got %v (one-hot encoded: use an mlp or a recurrent encoder)", obs)
		}
		hot = newOneHot(obs)
		spec.Input = []int{hot.width}
	case envs.Box:
		if spec.Dict() {
			return derivedSpecs{}, fmt.Errorf("net.inputs lists %d dict keys, but the observation space %v is not a Dict", len(spec.Inputs), obs)
		}
		switch spec.Encoder {
		case netconf.EncoderCNN:
			if len(obs.Dims) != 3 {
				return derivedSpecs{}, fmt.Errorf("cnn encoder needs image observations [C, H, W], got %v", obs.Dims)
			}
			spec.Input = append([]int(nil), obs.Dims...)
			if obs.Bounded() {
				scale = []imageScale{{off: 0, low: obs.Low, high: obs.High}}
			}
		default:
			if len(obs.Dims) != 1 {
				return derivedSpecs{}, fmt.Errorf("%s encoder needs flat observations, got shape %v (use encoder = \"cnn\" for images)", spec.Encoder, obs.Dims)
			}
			spec.Input = []int{obs.Dims[0]}
		}
	case envs.Dict:
		if spec.Inputs, scale, err = dictInputs(obs, net); err != nil {
			return derivedSpecs{}, fmt.Errorf("observation space %v: %w", obs, err)
		}
		spec.Input = []int{obs.FlatSize()}
	default:
		return derivedSpecs{}, fmt.Errorf("observation space %v: want a Box, a Discrete, a MultiDiscrete or a Dict of Boxes", obsSpace)
	}
	actor, critic := spec.Clone(), spec.Clone()
	actor.Output, actor.OutputGain = d.size, netconf.PolicyGain
	critic.Output, critic.OutputGain = 1, netconf.ValueGain
	if err := actor.Validate(); err != nil {
		return derivedSpecs{}, fmt.Errorf("actor network: %w", err)
	}
	if err := critic.Validate(); err != nil {
		return derivedSpecs{}, fmt.Errorf("critic network: %w", err)
	}
	return derivedSpecs{dist: d, actor: actor, critic: critic, scale: scale, oneHot: hot}, nil
}

// setSpecs gives the agent the specs its architecture net and its spaces
// imply (deriveSpecs). For a Dict observation space it also records the
// per-key encoders in a.cfg.Net.Inputs, where architecture mutations (and
// evolution, which picks them from Config().Net) find them.
func (a *PPO) setSpecs(net netconf.Spec) error {
	s, err := deriveSpecs(a.obsSpace, a.actSpace, net)
	if err != nil {
		return err
	}
	if a.cfg.UseSDE && s.dist.kind == gaussian {
		s.dist.feat = s.actor.FeatureWidth()
	}
	a.dist, a.actorSpec, a.criticSpec, a.scale, a.oneHot = s.dist, s.actor, s.critic, s.scale, s.oneHot
	a.sdeExpl, a.sdeStale = nil, nil
	if s.actor.Dict() {
		a.cfg.Net.Inputs = s.actor.Clone().Inputs
	}
	a.work = nil
	return nil
}

// imageScale is a part of the flat observation that preprocess scales to
// [0, 1] by its bounds: an image, whose values start at off.
type imageScale struct {
	off       int
	low, high []float32
}

// dictInputs returns one encoder per key of obs: net's MLP table (or
// netconf's default MLP when it has none) for a 1-D Box, net's CNN table
// (or the default CNN) for a [C, H, W] Box, whichever the encoder. When
// net already lists them (a mutated or loaded agent), they are checked
// against obs and kept. It also returns the bounded image keys to scale.
func dictInputs(obs envs.Dict, net netconf.Spec) ([]netconf.KeyInput, []imageScale, error) {
	if net.Encoder.Recurrent() {
		return nil, nil, fmt.Errorf(`encoder %q does not take dict observations (use "mlp" or "cnn": every key gets its own encoder)`, net.Encoder)
	}
	if net.Dict() && len(net.Inputs) != len(obs.Keys) {
		return nil, nil, fmt.Errorf("net.inputs lists %d keys, the observation space has %d", len(net.Inputs), len(obs.Keys))
	}
	inputs := make([]netconf.KeyInput, len(obs.Keys))
	var scale []imageScale
	off := 0
	for i, key := range obs.Keys {
		box, ok := obs.Spaces[i].(envs.Box)
		if !ok {
			return nil, nil, fmt.Errorf("dict key %q: %v: only Box subspaces are supported (1-D through an MLP, [C, H, W] images through a CNN)", key, obs.Spaces[i])
		}
		var want netconf.EncoderKind
		switch len(box.Dims) {
		case 1:
			want = netconf.EncoderMLP
		case 3:
			want = netconf.EncoderCNN
			if box.Bounded() {
				scale = append(scale, imageScale{off: off, low: box.Low, high: box.High})
			}
		default:
			return nil, nil, fmt.Errorf("dict key %q: Box of shape %v: want a 1-D Box (MLP) or a [C, H, W] image (CNN)", key, box.Dims)
		}
		off += box.FlatSize()
		k := netconf.KeyInput{Key: key, Encoder: want, Input: append([]int(nil), box.Dims...)}
		switch {
		case net.Dict():
			got := net.Inputs[i]
			if got.Key != key || got.Encoder != want {
				return nil, nil, fmt.Errorf("net.inputs[%d] is key %q with a %q encoder, the observation space wants key %q with a %q encoder",
					i, got.Key, got.Encoder, key, want)
			}
			k.MLP, k.CNN = got.MLP, got.CNN
		case want == netconf.EncoderMLP && net.MLP != nil:
			k.MLP = net.MLP
		case want == netconf.EncoderMLP:
			m := netconf.DefaultMLP()
			k.MLP = &m
		case net.CNN != nil:
			k.CNN = net.CNN
		default:
			c := netconf.DefaultCNN()
			if _, err := c.OutputShape(box.Dims); err != nil {
				return nil, nil, fmt.Errorf("dict key %q: the default CNN does not fit its image: %w; give the network a CNN that does (a config's [net.cnn])", key, err)
			}
			k.CNN = &c
		}
		inputs[i] = k
	}
	// Clone, so that no key shares its MLP or CNN with net or another key.
	return netconf.Spec{Inputs: inputs}.Clone().Inputs, scale, nil
}

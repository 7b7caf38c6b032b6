package nn

import (
	"fmt"

	"github.com/evolverl/evolve/internal/bufs"
	"github.com/evolverl/evolve/netconf"
)

// goBackend is the plain-Go backend: Models made of Nets.
type goBackend struct{}

// NewModel returns the plain-Go model of an actor and a critic.
func (goBackend) NewModel(actor, critic netconf.Spec, shared bool) (Model, error) {
	a, err := New(actor)
	if err != nil {
		return nil, fmt.Errorf("actor: %w", err)
	}
	c, err := New(critic)
	if err != nil {
		return nil, fmt.Errorf("critic: %w", err)
	}
	if critic.Output != 1 {
		return nil, fmt.Errorf("critic: %d outputs, want 1 (the value)", critic.Output)
	}
	if shared && critic.LatentWidth() != actor.LatentWidth() {
		return nil, fmt.Errorf("critic head reads a latent of %d, the actor's encoder gives %d", critic.LatentWidth(), actor.LatentWidth())
	}
	return &goModel{actor: a, critic: c, shared: shared}, nil
}

// goModel is an actor and a critic Net; with shared, only the critic's head is used, on the
// actor's latent.
type goModel struct {
	actor, critic *Net
	shared        bool
	pa, pc        netconf.Params // the weights of the last Forward, for Backward
	recA, recC    Recurrence     // kept here so that passing them allocates nothing
	dLat          []float32      // the shared latent's summed gradient
}

func (m *goModel) StateSize() int {
	if m.shared {
		return m.actor.StateSize()
	}
	return m.actor.StateSize() + m.critic.StateSize()
}

func (m *goModel) Forward(b Batch) (out, values []float32, err error) {
	m.pa, m.pc = b.Actor, b.Critic
	size := m.StateSize()
	steps := max(1, b.Steps)
	m.recA = Recurrence{Steps: steps, State: b.State, Final: b.Final, Stride: size, Starts: b.Starts}
	lat, err := m.actor.ForwardEncoder(b.Actor, b.Obs, b.Rows, &m.recA)
	if err != nil {
		return nil, nil, fmt.Errorf("actor: %w", err)
	}
	if out, err = m.actor.ForwardHead(b.Actor, lat, b.Rows); err != nil {
		return nil, nil, fmt.Errorf("actor: %w", err)
	}
	if !m.shared {
		// The critic's state follows the actor's in each sequence's slice.
		m.recC = Recurrence{Steps: steps, Stride: size, Starts: b.Starts}
		off := m.actor.StateSize()
		if b.State != nil {
			m.recC.State = b.State[off:]
		}
		if b.Final != nil {
			m.recC.Final = b.Final[off:]
		}
		if lat, err = m.critic.ForwardEncoder(b.Critic, b.Obs, b.Rows, &m.recC); err != nil {
			return nil, nil, fmt.Errorf("critic: %w", err)
		}
	}
	if values, err = m.critic.ForwardHead(b.Critic, lat, b.Rows); err != nil {
		return nil, nil, fmt.Errorf("critic: %w", err)
	}
	return out, values, nil
}

// ActorFeatures implements FeatureModel.
func (m *goModel) ActorFeatures() []float32 { return m.actor.Features() }

func (m *goModel) Backward(dOut, dValues []float32, gActor, gCritic netconf.Params) error {
	dLatA, err := m.actor.BackwardHead(m.pa, gActor, dOut)
	if err != nil {
		return fmt.Errorf("actor: %w", err)
	}
	dLatC, err := m.critic.BackwardHead(m.pc, gCritic, dValues)
	if err != nil {
		return fmt.Errorf("critic: %w", err)
	}
	if m.shared {
		m.dLat = bufs.Grow(m.dLat, len(dLatA))
		for i, g := range dLatA {
			m.dLat[i] = g + dLatC[i]
		}
		dLatA = m.dLat
	} else if err := m.critic.BackwardEncoder(m.pc, gCritic, dLatC); err != nil {
		return fmt.Errorf("critic: %w", err)
	}
	if err := m.actor.BackwardEncoder(m.pa, gActor, dLatA); err != nil {
		return fmt.Errorf("actor: %w", err)
	}
	return nil
}

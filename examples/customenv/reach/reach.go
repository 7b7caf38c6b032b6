// Package reach is the example's own environment, Reach1D-v0, in a package
// of its own so that every program that trains or plays it can register it.
//
// Reach1D-v0 is a line of cells. The agent starts on one cell and must walk
// to the target cell: each step it moves left, stays or moves right
// (Discrete(3)), costs 0.01, and reaching the target ends the episode with
// a reward of 1. It sees its own position and the target's, scaled to
// [-1, 1]. Episodes that have not reached the target are cut after 50 steps
// (the registered time limit; a config may change it with
// [env.options] max_episode_steps = N). The option "size" sets the number
// of cells (default 10, at least 2).
package reach

import (
	"fmt"
	"math/rand/v2"

	"github.com/evolverl/evolve/envs"
)

// Spec registers Reach1D-v0: envs.Register(reach.Spec) in every program
// that trains or plays it (the command and, say, a server that deploys the
// agent).
var Spec = envs.Spec{
	ID:              "Reach1D-v0",
	New:             newReach,
	MaxEpisodeSteps: 50,
	Summary:         "walk along a line of cells to a target cell",
}

// reach is the Reach1D-v0 env.
type reach struct {
	size        int
	pos, target int
	rng         *rand.Rand
	obs         [2]float32
}

// newReach builds one env from the config's [env.options]; it rejects keys
// it does not know.
func newReach(o envs.Options) (envs.Env, error) {
	if err := o.Only("size"); err != nil {
		return nil, err
	}
	size, err := o.Int("size", 10)
	if err != nil {
		return nil, err
	}
	if size < 2 {
		return nil, fmt.Errorf("option \"size\" = %d: want at least 2", size)
	}
	// Unseeded, it plays as seeded with 0 (envs' rule for envs that were
	// never seeded): the generator Reset(0) makes.
	return &reach{size: size, rng: rand.New(rand.NewPCG(0, 0x5eed))}, nil
}

func (r *reach) ObservationSpace() envs.Space { return envs.NewBox(-1, 1, 2) }

func (r *reach) ActionSpace() envs.Space { return envs.Discrete{N: 3} }

func (r *reach) Reset(seed int64) ([]float32, envs.Info) {
	if seed >= 0 {
		r.rng = rand.New(rand.NewPCG(uint64(seed), 0x5eed))
	}
	r.target = r.rng.IntN(r.size)
	r.pos = r.rng.IntN(r.size - 1)
	if r.pos >= r.target {
		r.pos++ // never start on the target
	}
	return r.observe(), envs.Info{}
}

func (r *reach) Step(action []float32) ([]float32, float64, bool, bool, envs.Info) {
	a := int(action[0])
	if a < 0 || a > 2 || float32(a) != action[0] {
		panic(fmt.Sprintf("Reach1D-v0: action %v outside Discrete(3)", action[0]))
	}
	r.pos = min(max(r.pos+a-1, 0), r.size-1)
	if r.pos == r.target {
		return r.observe(), 1, true, false, envs.Info{}
	}
	return r.observe(), -0.01, false, false, envs.Info{}
}

// observe writes the positions, scaled to [-1, 1], into the env's own
// observation buffer.
func (r *reach) observe() []float32 {
	scale := func(i int) float32 { return 2*float32(i)/float32(r.size-1) - 1 }
	r.obs = [2]float32{scale(r.pos), scale(r.target)}
	return r.obs[:]
}

// Command customenv is the evolve command with one more environment: a
// program's own Go env, registered with envs.Register before cli.Main runs,
// so that a config can name it.
//
//	go run ./examples/customenv -config examples/customenv/config.toml
//	go run ./examples/customenv play -agent runs/reach
//
// Reach1D-v0 is a line of cells. The agent starts on one cell and must walk
// to the target cell: each step it moves left, stays or moves right
// (Discrete(3)), costs 0.01, and reaching the target ends the episode with
// a reward of 1. It sees its own position and the target's, scaled to
// [-1, 1]. Episodes that have not reached the target are cut after 50 steps
// (the registered time limit; a config may change it with
// [env.options] max_episode_steps = N). The option "size" sets the number
// of cells (default 10, at least 2).
package main

import (
	"fmt"
	"log"
	"math/rand/v2"
	"os"

	"github.com/evolverl/evolve/cli"
	"github.com/evolverl/evolve/envs"
)

func main() {
	if err := envs.Register(reachSpec); err != nil {
		log.Fatal(err)
	}
	os.Exit(cli.Main())
}

// reachSpec registers Reach1D-v0.
var reachSpec = envs.Spec{
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
	return &reach{size: size, rng: rand.New(rand.NewPCG(0, 0))}, nil
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

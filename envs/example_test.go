package envs_test

import (
	"fmt"

	"github.com/evolverl/evolve/envs"
)

// A vector of CartPoles stepped with a fixed policy; finished episodes
// report their return, and FinalObs keeps their last observation.
func Example() {
	vec, err := envs.MakeVector("CartPole-v1", 4, nil)
	if err != nil {
		panic(err)
	}
	if _, err := vec.Reset(42); err != nil {
		panic(err)
	}
	actions := make([]float32, vec.Len()) // always push left
	episodes := 0
	for episodes < 4 {
		step, err := vec.Step(actions)
		if err != nil {
			panic(err)
		}
		for i := range vec.Len() {
			if step.Done(i) {
				episodes++
				fmt.Printf("env %d: return %v, terminated %v\n", i, step.EpisodeReturns[i], step.Terminated[i])
			}
		}
	}
	// Output:
	// env 0: return 8, terminated true
	// env 1: return 8, terminated true
	// env 2: return 10, terminated true
	// env 3: return 10, terminated true
}

// Check a user's environment before training on it.
func ExampleCheck() {
	env, err := envs.Make("Probe7-v0", nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(envs.Check(env, envs.CheckOptions{Steps: 200}))
	// Output: <nil>
}

package envs_test

import (
	"fmt"

	"github.com/evolverl/evolve/envs"
)

// A vector of CartPoles stepped with a fixed policy; finished episodes
// report their return, and FinalObs keeps their last observation (past
// the 0.2095 rad at which CartPole ends).
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
				// The pole's angle at the end (FinalObs; Obs holds the next episode's start).
				fmt.Printf("env %d: return %v, terminated %v, final angle %.3f\n", i, step.EpisodeReturns[i], step.Terminated[i], step.FinalObs[i][2])
			}
		}
	}
	// Output:
	// env 0: return 8, terminated true, final angle 0.219
	// env 1: return 8, terminated true, final angle 0.224
	// env 2: return 10, terminated true, final angle 0.254
	// env 3: return 10, terminated true, final angle 0.245
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

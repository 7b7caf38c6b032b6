package agent_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/envs"
)

// Save an agent to a file, load it back without any agent beforehand, and
// play one CartPole episode with its deterministic actions, as a deployed
// agent would.
func Example() {
	env, err := envs.Make("CartPole-v1", nil)
	if err != nil {
		panic(err)
	}
	a, err := agent.New(env.ObservationSpace(), env.ActionSpace(), agent.DefaultConfig(), 1)
	if err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "evolve-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "cartpole.safetensors")
	if err := a.Save(path); err != nil {
		panic(err)
	}

	loaded, err := agent.Load(path)
	if err != nil {
		panic(err)
	}
	obs, info := env.Reset(42)
	steps, total := 0, 0.0
	for {
		action, err := loaded.Act(obs, [][]bool{info.ActionMask}, true)
		if err != nil {
			panic(err)
		}
		var reward float64
		var terminated, truncated bool
		obs, reward, terminated, truncated, info = env.Step(action)
		steps++
		total += reward
		if terminated || truncated {
			break
		}
	}
	fmt.Printf("episode of %d steps, return %v\n", steps, total)
	// Output: episode of 8 steps, return 8
}

// Ask an agent for its action probabilities and value on one CartPole
// observation, and for the log-probability of the action it then takes.
func ExamplePPO_Policy() {
	env, err := envs.Make("CartPole-v1", nil)
	if err != nil {
		panic(err)
	}
	a, err := agent.New(env.ObservationSpace(), env.ActionSpace(), agent.DefaultConfig(), 1)
	if err != nil {
		panic(err)
	}
	obs, info := env.Reset(42)
	p, err := a.Policy(obs, [][]bool{info.ActionMask})
	if err != nil {
		panic(err)
	}
	fmt.Printf("P(left) %.5f, P(right) %.5f, value %.5f\n", p.Probs[0][0], p.Probs[0][1], p.Values[0])
	a.ResetState(0) // Policy is a step, as Act is; a recurrent agent would have advanced
	action, logp, _, err := a.ActInfo(obs, [][]bool{info.ActionMask}, true)
	if err != nil {
		panic(err)
	}
	fmt.Printf("action %v, log-probability %.3f\n", action[0], logp[0])
	// Output:
	// P(left) 0.50005, P(right) 0.49995, value -0.00499
	// action 0, log-probability -0.693
}

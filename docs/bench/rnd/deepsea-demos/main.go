// Command deepsea-demos records demonstrations of Deep Sea solved: the
// episode that moves right on every row, found by trying each action after
// the prefix already known (Deep Sea is deterministic), recorded in the
// format of package record, as a user's own recordings would be. PPO+D's
// benchmark (docs/benchmarks.md#random-network-distillation-and-ppod) replays them:
//
//	go run ./docs/bench/rnd/deepsea-demos -size 30 -mapping-seed 1 -episodes 5 -o demos/ds30-s1.npz
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/record"
)

func main() {
	size := flag.Int("size", 20, "Deep Sea's N (env option size; deepsea-ppod.toml's 20)")
	seed := flag.Int("mapping-seed", 0, "the action mapping's seed (env option mapping_seed; the env's default 0)")
	episodes := flag.Int("episodes", 5, "episodes to record (all the same: the env is deterministic)")
	out := flag.String("o", "", "the .npz file to write")
	flag.Parse()
	switch {
	case *out == "" || filepath.Ext(*out) != ".npz":
		fmt.Fprintln(os.Stderr, "deepsea-demos: -o OUT.npz is needed (a [demos] dir reads *.npz files)")
		os.Exit(2)
	case *size < 1 || *episodes < 1:
		fmt.Fprintln(os.Stderr, "deepsea-demos: -size and -episodes must be >= 1")
		os.Exit(2)
	}
	if err := run(*size, *seed, *episodes, *out); err != nil {
		fmt.Fprintln(os.Stderr, "deepsea-demos:", err)
		os.Exit(1)
	}
}

func run(size, seed, episodes int, out string) error {
	opts := envs.Options{"size": size, "mapping_seed": seed, "flat": true}
	env, err := envs.Make("DeepSea-v0", opts)
	if err != nil {
		return err
	}
	defer envs.Close(env)
	// column returns the agent's column in a flat observation.
	column := func(obs []float32) int {
		for i, v := range obs {
			if v == 1 {
				return i % size
			}
		}
		return -1
	}
	// Learn the action that moves right on each row, replaying the prefix.
	var plan []float32
	for row := range size {
		found := false
		for _, act := range []float32{0, 1} {
			obs, _ := env.Reset(0)
			for _, a := range plan {
				obs, _, _, _, _ = env.Step([]float32{a})
			}
			col := column(obs)
			next, r, term, _, _ := env.Step([]float32{act})
			// The last move ends the episode: right is where the reward is.
			if term && r > 0.5 || !term && column(next) > col {
				plan, found = append(plan, act), true
				break
			}
		}
		if !found {
			return fmt.Errorf("row %d: neither action moves right", row)
		}
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	w, err := record.Create(out, env.ObservationSpace(), env.ActionSpace())
	if err != nil {
		return err
	}
	total := 0.0
	for range episodes {
		obs, _ := env.Reset(0)
		total = 0
		for k, a := range plan {
			// The observation the action answers: Step reuses the env's buffer.
			here := slices.Clone(obs)
			next, r, term, trunc, _ := env.Step([]float32{a})
			total += r
			if err := w.Add(record.Step{Obs: here, Action: []float32{a}, Reward: r, Terminated: term, Truncated: trunc, EpisodeStart: k == 0}); err != nil {
				return err
			}
			obs = next
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	fmt.Printf("wrote %s: %d episodes of %d steps, return %.4f each\n", out, episodes, size, total)
	return nil
}

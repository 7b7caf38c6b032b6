package evo_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/evolverl/evolve/evo"
)

// Training from Go: a config from TOML text (LoadConfig reads a file),
// changed in Go, trained, stopped by its context, resumed and read back.
// New completes a config changed in Go as its config.toml will read back
// (Config.Complete), so Resume trains on what New started.
func ExampleNew() {
	cfg, err := evo.ParseConfig([]byte(`
[env]
id = "CartPole-v1"
num_envs = 2
eval_episodes = 2
[population]
size = 2
max_steps = 2048
evo_steps = 512
[ppo]
learn_step = 256
`))
	if err != nil {
		log.Fatal(err) // errors.Is(err, evo.ErrBadInput): a line per bad key
	}
	dir, err := os.MkdirTemp("", "evolve-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	cfg.OutDir = filepath.Join(dir, "run")
	cfg.Net.MLP.Hidden = []int{32} // the network every agent starts with

	// Stop after the first generation, as a signal would.
	ctx, cancel := context.WithCancel(context.Background())
	tr, err := evo.New(cfg, evo.Options{OnGeneration: func(evo.GenerationReport) { cancel() }})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := tr.Run(ctx); err != nil {
		fmt.Println("stopped:", ctx.Err())
	}

	tr, err = evo.Resume(cfg.OutDir, evo.Options{})
	if err != nil {
		log.Fatal(err)
	}
	sum, err := tr.Run(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	m, err := evo.ReadMetrics(cfg.OutDir)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("finished:", sum.Finished, sum.StopReason, "after", sum.Generations, "generations")
	fmt.Println("rows:", len(m.Rows), "first network:", m.Rows[0].Net)
	// Output:
	// stopped: context canceled
	// finished: true budget after 2 generations
	// rows: 4 first network: mlp[32] ReLU latent 32 head[64] ReLU
}

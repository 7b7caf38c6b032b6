// Command customenv is the evolve command with one more environment: a
// program's own Go env (package reach), registered with envs.Register before
// cli.Main runs, so that a config can name it.
//
//	go run ./examples/customenv -config examples/customenv/config.toml
//	go run ./examples/customenv play -agent runs/reach
package main

import (
	"log"
	"os"

	"github.com/evolverl/evolve/cli"
	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/examples/customenv/reach"
)

func main() {
	if err := envs.Register(reach.Spec); err != nil {
		log.Fatal(err)
	}
	os.Exit(cli.Main())
}

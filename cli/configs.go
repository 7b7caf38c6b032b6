package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/evolverl/evolve/configs"
	"github.com/evolverl/evolve/internal/nearest"
)

// configsCmd is `evolve configs [NAME]`: it lists the shipped configs, or
// prints one to start a config of one's own from.
func configsCmd(_ context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCommand("evolve configs", "usage: evolve configs [NAME]\n\n"+
		"Lists the configs shipped in the binary (train one with evolve -config NAME or evolve -env ID),\n"+
		"or prints the config NAME, e.g. evolve configs lunarlander > my.toml.\n\n", stderr)
	pos, status, ok := c.parseInterspersed(args)
	switch {
	case !ok:
		return status
	case len(pos) > 1:
		return c.misuse("unexpected argument %q", pos[1])
	case len(pos) == 1:
		b, err := configs.Read(pos[0])
		if err != nil {
			var names []string
			for _, c := range configs.List() {
				names = append(names, c.Name)
			}
			if near := nearest.Name(strings.TrimSuffix(pos[0], ".toml"), names, 2); near != "" {
				err = fmt.Errorf("no shipped config %q: did you mean %s?", pos[0], near)
			}
			fmt.Fprintf(stderr, "evolve configs: %v\n", err)
			return exitBadInput
		}
		stdout.Write(b)
		return exitOK
	}
	list := configs.List()
	nameW, envW := 0, 0
	for _, c := range list {
		nameW, envW = max(nameW, len(c.Name)), max(envW, len(c.Env))
	}
	for _, c := range list {
		fmt.Fprintf(stdout, "%-*s  %-*s  %s\n", nameW, c.Name, envW, c.Env, clip(c.Summary, 100))
	}
	return exitOK
}

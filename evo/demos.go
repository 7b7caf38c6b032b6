package evo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/record"
)

// DemosConfig is the [demos] section: where the demonstrations PPO+D
// replays come from ([ppo] demo_rho, demo_phi).
type DemosConfig struct {
	// Dir holds the demonstrations: every *.npz file in it, in the format
	// of package record (evolve play -record, evolve sample, or a user's
	// own), each episode one demo. It is read before every generation:
	// files added while the run trains join from the next generation.
	Dir string `toml:"dir"`
}

// checkDemos checks the [demos] section against [ppo]: a directory only
// with PPO+D on, and every file in it a recording of the env's spaces.
func (c Config) checkDemos(ps *problems) {
	on := c.PPO.DemoRho > 0 || c.PPO.DemoPhi > 0
	switch {
	case c.Demos == nil:
		return
	case !on:
		ps.add(errors.New("demos.dir is set, but PPO+D is off: set ppo.demo_rho (or demo_phi) > 0"))
	case c.Demos.Dir == "":
		ps.add(errors.New(`demos.dir = "": want the directory of the demonstrations (.npz files)`))
	default:
		if st, err := os.Stat(c.Demos.Dir); err != nil {
			ps.add(fmt.Errorf("demos.dir = %q: %w", c.Demos.Dir, pathErr(err)))
		} else if !st.IsDir() {
			ps.add(fmt.Errorf("demos.dir: %s is not a directory", c.Demos.Dir))
		}
	}
}

// initDemos reads the [demos] directory for the first time, before
// anything is trained: a file that is not a recording of the agents'
// spaces is bad input, naming the file and the field.
func (t *Trainer) initDemos() error {
	if t.cfg.Demos == nil || len(t.members) == 0 {
		return nil
	}
	if _, local := t.opts.Pool.(LocalPool); t.opts.Pool != nil && !local {
		return badInput(errors.New("[demos] (PPO+D) trains on local workers only: its demonstrations do not travel to remote workers (drop -nats)"))
	}
	t.demos = &demoLoader{dir: t.cfg.Demos.Dir, seen: map[string]bool{}}
	a := t.members[0].Agent
	demos, err := t.demos.load(a.ObservationSpace(), a.ActionSpace(), true, t.log.Warn)
	if err == nil && len(demos) == 0 {
		t.log.Warn("demos.dir holds no demonstration yet (*.npz): until one is added, PPO+D replays only the agents' own episodes", "dir", t.demos.dir)
	}
	return err
}

// generationDemos reads the demos added to the directory since the last
// generation (a bad one is skipped with a warning) and returns them all.
func (t *Trainer) generationDemos(g int) []agent.Demo {
	if t.demos == nil {
		return nil
	}
	a := t.members[0].Agent
	before := t.demos.files
	demos, _ := t.demos.load(a.ObservationSpace(), a.ActionSpace(), false, t.log.Warn)
	if t.demos.files != before || !t.loggedDemos { // the session's first generation, and every change
		t.loggedDemos = true
		t.log.Info("demos", "generation", g, "files", t.demos.files, "episodes", len(demos), "dir", t.demos.dir)
	}
	return demos
}

// demoLoader reads a run's demonstrations directory, each file once.
type demoLoader struct {
	dir   string
	seen  map[string]bool
	demos []agent.Demo
	files int
}

// load reads the files of the directory not read before, in name order,
// and returns all demos read so far. A file that is not a recording of
// obs and act is an error naming it and the field at fault when strict
// (the run's first generation: a bad start is bad input), else skipped
// with a warning through warn, once.
func (l *demoLoader) load(obs, act envs.Space, strict bool, warn func(msg string, args ...any)) ([]agent.Demo, error) {
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		if strict {
			return nil, badInput(fmt.Errorf("demos.dir = %q: %w", l.dir, pathErr(err)))
		}
		warn("demos.dir unreadable: the demos read so far stay", "dir", l.dir, "error", err)
		return l.demos, nil
	}
	var names []string
	for _, e := range entries {
		if n := e.Name(); strings.HasSuffix(n, ".npz") && !l.seen[n] {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		l.seen[n] = true
		path := filepath.Join(l.dir, n)
		t, err := record.Read(path)
		var demos []agent.Demo
		if err == nil {
			demos, err = agent.DemosFrom(t, obs, act)
			if err != nil {
				err = fmt.Errorf("demo %s: %w", path, err)
			}
		}
		if err != nil {
			if strict {
				return nil, badInput(err)
			}
			warn("demo file skipped", "file", path, "error", err)
			continue
		}
		l.demos = append(l.demos, demos...)
		l.files++
	}
	return l.demos, nil
}

package evo

import (
	"context"
	"strings"
	"testing"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/internal/runtest"
)

// copyPool trains each task on a copy of its agent that went through
// Encode and Decode, last task first, as a remote pool would.
type copyPool struct{ wrongIndex bool }

func (p copyPool) Train(ctx context.Context, cfg Config, tasks []Task, progress func(int)) ([]Result, error) {
	out := make([]Result, len(tasks))
	for i := len(tasks) - 1; i >= 0; i-- {
		b, err := tasks[i].Agent.Encode()
		if err != nil {
			return nil, err
		}
		task := tasks[i]
		if task.Agent, err = agent.Decode(b); err != nil {
			return nil, err
		}
		r, err := TrainTask(ctx, cfg, task, progress)
		if err != nil {
			return nil, err
		}
		if p.wrongIndex {
			r.Index++
		}
		out[i] = Result{Report: r, Agent: task.Agent}
	}
	return out, nil
}

// TestPoolDoesNotChangeResults: a pool that trains decoded copies of the
// agents, in another order, gives the run of the default pool.
func TestPoolDoesNotChangeResults(t *testing.T) {
	var dirs []string
	for _, pool := range []Pool{nil, copyPool{}} {
		cfg := tiny(t)
		cfg.Population.MaxSteps = 2 * 3 * 256
		if _, err := run(t, cfg, Options{Pool: pool}, nil); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, cfg.OutDir)
	}
	runtest.SameRun(t, dirs[0], dirs[1])
}

// TestPoolResultForAnotherAgentFailsTheRun: the trainer checks that each
// result answers its task.
func TestPoolResultForAnotherAgentFailsTheRun(t *testing.T) {
	cfg := tiny(t)
	_, err := run(t, cfg, Options{Pool: copyPool{wrongIndex: true}}, nil)
	if err == nil || !strings.Contains(err.Error(), "want agent 0") {
		t.Fatalf("err = %v; want an error naming the agent", err)
	}
}

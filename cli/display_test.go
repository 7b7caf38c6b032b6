package cli

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/evo"
)

func TestGenerationTableAndLogLine(t *testing.T) {
	cfg := agent.DefaultConfig()
	r := evo.GenerationReport{Generation: 3, TotalSteps: 24576, MaxSteps: 100000, Best: 1, NewElite: true, EliteFitness: 500,
		Members: []evo.MemberReport{
			{Index: 0, Parent: -1, Fitness: 120, Steps: 8192, Config: cfg, Mutation: "none"},
			{Index: 4, Parent: 0, Fitness: 500, Steps: 8192, Config: cfg, Mutation: "rl_hp: lr 0.0003 -> 0.00036"},
			{Index: 5, Parent: 0, Fitness: math.Inf(-1), Diverged: true, Steps: 8192, Config: cfg, Mutation: "parameters: 1 of 8"},
		}}
	var table, line bytes.Buffer
	(&display{w: &table, terminal: true}).generation(r)
	(&display{w: &line}).generation(r)
	for _, want := range []string{"generation 3", "new elite", "*4 ", "diverged", "rl_hp: lr 0.0003 -> 0.00036", "24,576/100,000"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	if n := strings.Count(line.String(), "\n"); n != 1 || !strings.HasPrefix(line.String(), "gen 3: best 500 (agent 4)") {
		t.Errorf("log line:\n%s", line.String())
	}
	var quiet bytes.Buffer
	(&display{w: &quiet, quiet: true}).generation(r)
	if quiet.Len() != 0 {
		t.Errorf("-quiet printed %q", quiet.String())
	}
}

package cli

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/evo"
	"github.com/evolverl/evolve/netconf"
)

func TestGenerationTableAndLogLine(t *testing.T) {
	cfg := agent.DefaultConfig()
	r := evo.GenerationReport{Generation: 3, TotalSteps: 24576, MaxSteps: 100000, Best: 1, NewElite: true, EliteFitness: 500,
		Members: []evo.MemberReport{
			{Index: 0, Parent: -1, Fitness: 120, Steps: 8192, Config: cfg, Mutation: "none"},
			{Index: 4, Parent: 0, Fitness: 500, Steps: 8192, Config: cfg, Mutation: "rl_hp: lr 0.0003 -> 0.00036"},
			{Index: 5, Parent: 0, Fitness: math.Inf(-1), Diverged: true, Steps: 8192, Config: cfg, Mutation: "parameters: 1 of 8"},
			{Index: 6, Parent: 0, Fitness: 310, Idle: true, Steps: 16384, Config: cfg, Mutation: "none (pbt: 8192 steps ahead of the laggard, not ranked)"},
		}}
	var table, line bytes.Buffer
	(&display{w: &table, terminal: true}).generation(r)
	(&display{w: &line}).generation(r)
	for _, want := range []string{"generation 3", "new elite", "*4 ", "diverged", "rl_hp: lr 0.0003 -> 0.00036", "24,576/100,000", "1 waiting", "(310.0)"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	if n := strings.Count(line.String(), "\n"); n != 1 || !strings.HasPrefix(line.String(), "gen 3: best 500 (agent 4)") || !strings.Contains(line.String(), ", 1 waiting,") {
		t.Errorf("log line:\n%s", line.String())
	}
	var quiet bytes.Buffer
	(&display{w: &quiet, quiet: true}).generation(r)
	if quiet.Len() != 0 {
		t.Errorf("-quiet printed %q", quiet.String())
	}
	// With a memory gene the line says which model the best agent is.
	gene := agent.DefaultConfig()
	gru := netconf.DefaultLSTM()
	gene.Net.Encoder, gene.Net.MLP, gene.Net.GRU, gene.Net.Memories = netconf.EncoderGRU, nil, &gru, []netconf.EncoderKind{"lstm", "gru"}
	r.Members[1].Config = gene
	line.Reset()
	(&display{w: &line}).generation(r)
	if !strings.HasPrefix(line.String(), "gen 3: best 500 (agent 4, gru)") {
		t.Errorf("log line with a memory gene:\n%s", line.String())
	}
}

// TestNonTerminalPrintsALinePerGeneration runs the command with its output
// going to buffers, not a terminal: each generation is one plain line on
// stderr (generation, best and elite fitness, total steps of the budget,
// steps/s, wall time), with no progress bar's escape codes, and stdout gets
// only the final summary.
func TestNonTerminalPrintsALinePerGeneration(t *testing.T) {
	config, _ := writeTiny(t, 3*2*256)
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), []string{"-config", config}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if strings.ContainsAny(stderr.String(), "\r\033") {
		t.Errorf("stderr holds a progress bar's control characters: %q", stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "evolve: training 2 agents") {
		t.Fatalf("stderr, want a first line and one per generation:\n%s", stderr.String())
	}
	line := regexp.MustCompile(`^gen (\d): best [-0-9.e+]+ \(agent \d+\)( \(new elite, saved\))?, mean [-0-9.e+]+, elite [-0-9.e+]+, steps ([0-9,]+)/1,536, [0-9,]+ steps/s, [0-9.]+s$`)
	for i, l := range lines[1:] {
		m := line.FindStringSubmatch(l)
		if m == nil || m[1] != fmt.Sprint(i+1) || m[3] != commas((i+1)*512) {
			t.Errorf("generation %d's line %q", i+1, l)
		}
	}
	if !strings.HasPrefix(stdout.String(), "generations   3 ") || strings.Contains(stdout.String(), "gen 1:") {
		t.Errorf("stdout:\n%s", stdout.String())
	}
}

// TestTimeLeftCountsTheLastGeneration: a budget that ends inside a
// generation is reached only at that generation's end (a review's run of
// max_steps 100,000 in generations of 81,920 said "0.7s left" at 82 % and
// ran 4 s more), so the time left counts the steps to that end.
func TestTimeLeftCountsTheLastGeneration(t *testing.T) {
	for _, c := range []struct {
		p       evo.Progress
		genStep int
		rate    float64
		want    string
	}{
		{evo.Progress{TotalSteps: 81_920, MaxSteps: 100_000}, 81_920, 20_000, "4.1s left"}, // to 163,840
		{evo.Progress{TotalSteps: 40_000, MaxSteps: 163_840}, 81_920, 1_000, "2m03s left"}, // a whole number of generations
		{evo.Progress{TotalSteps: 40_000, MaxSteps: 100_000}, 0, 1_000, "1m00s left"},      // generations unknown: the budget
		{evo.Progress{TotalSteps: 100_000, MaxSteps: 100_000}, 81_920, 1_000, "finishing the generation"},
		{evo.Progress{TotalSteps: 0, MaxSteps: 100_000}, 81_920, 0, "? left"},
	} {
		if got := timeLeft(c.p, c.genStep, c.rate); got != c.want {
			t.Errorf("timeLeft(%+v, %d, %g) = %q, want %q", c.p, c.genStep, c.rate, got, c.want)
		}
	}
}

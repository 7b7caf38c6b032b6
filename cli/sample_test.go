package cli

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/evo"
	"github.com/evolverl/evolve/record"
)

// sample runs `evolve sample` into a new file and returns it, failing the
// test unless it exits 0.
func sample(t *testing.T, run string, args ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "data.npz")
	code, _, stderr := evolve(context.Background(), append(append([]string{"sample", "-o", out}, args...), run)...)
	if code != exitOK {
		t.Fatalf("sample %v: exit %d; stderr:\n%s", args, code, stderr)
	}
	return out
}

// TestSampleWritesEveryCheckpointsAgents samples a run's kept checkpoints
// and checks the dataset against them: every agent of every checkpoint in
// order, its fitness, whole episodes numbered through the file, episode k
// of every agent starting from the same reset seed, greedy actions equal
// to the agent's own, and the same bytes whatever the number of workers.
func TestSampleWritesEveryCheckpointsAgents(t *testing.T) {
	run := tinyRun(t)
	ckpts, err := evo.ReadCheckpoints(run)
	if err != nil {
		t.Fatal(err)
	}
	const eps = 2
	one := sample(t, run, "-method", "greedy", "-episodes", "2", "-workers", "1")
	three := sample(t, run, "-method", "greedy", "-episodes", "2", "-workers", "3")
	if !bytes.Equal(mustRead(t, one), mustRead(t, three)) {
		t.Error("the datasets of 1 and 3 workers differ")
	}
	tr, err := record.Read(one)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Sources) != tr.Len() || !strings.Contains(string(tr.Dataset), `"method":"greedy"`) {
		t.Fatalf("%d sources for %d steps, dataset info %s", len(tr.Sources), tr.Len(), tr.Dataset)
	}
	type key struct{ gen, agent int }
	var want []key
	fitness := map[key]float64{}
	files := map[key]string{}
	for _, c := range ckpts {
		for _, m := range c.Members {
			k := key{c.Generation, m.Index}
			want = append(want, k, k) // two episodes each
			fitness[k], files[k] = m.Fitness, m.File
		}
	}
	var got []key
	starts := map[int][]float32{} // episode k's first observation (of the first agent)
	agents := map[key]*agent.PPO{}
	for i, s := range tr.Sources {
		k := key{s.Generation, s.Agent}
		if tr.EpisodeStarts[i] {
			if s.Episode != len(got) {
				t.Fatalf("step %d starts episode %d, want %d", i, s.Episode, len(got))
			}
			got = append(got, k)
			if first, ok := starts[s.Episode%eps]; !ok {
				starts[s.Episode%eps] = tr.Observations[i]
			} else if !slices.Equal(first, tr.Observations[i]) {
				t.Errorf("episode %d starts from %v, the first agent's episode %d from %v: want the same reset seed",
					s.Episode, tr.Observations[i], s.Episode%eps, first)
			}
		} else if prev := tr.Sources[i-1]; s.Agent != prev.Agent || s.Generation != prev.Generation || s.Episode != prev.Episode {
			t.Fatalf("step %d: source %+v within an episode of %+v", i, s, tr.Sources[i-1])
		}
		if f := fitness[k]; f != s.Fitness && !(math.IsNaN(f) && math.IsNaN(s.Fitness)) {
			t.Errorf("step %d: fitness %g, the checkpoint says %g", i, s.Fitness, f)
		}
		if s.BehaviorLogProb != 0 {
			t.Fatalf("step %d: greedy behaviour log-probability %g, want 0 (probability 1)", i, s.BehaviorLogProb)
		}
		a := agents[k]
		if a == nil {
			if a, err = agent.Load(files[k]); err != nil {
				t.Fatal(err)
			}
			agents[k] = a
		}
		act, err := a.Act(tr.Observations[i], nil, true)
		if err != nil || !slices.Equal(act, tr.Actions[i]) {
			t.Fatalf("step %d: action %v, agent %d of generation %d acts %v (%v)", i, tr.Actions[i], k.agent, k.gen, act, err)
		}
		if end := i+1 == tr.Len() || tr.EpisodeStarts[i+1]; end != (tr.Terminated[i] || tr.Truncated[i]) {
			t.Fatalf("step %d: episode end %v, terminated %v truncated %v", i, end, tr.Terminated[i], tr.Truncated[i])
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("episodes from %v, want %v (every kept checkpoint's agents in order, 2 episodes each)", got, want)
	}
	if len(ckpts) < 2 {
		t.Errorf("the tiny run keeps %d checkpoints: the test needs two", len(ckpts))
	}
}

// TestSampleChoosesGenerationsTheEliteAndMethods: -generations picks
// checkpoints, -elite the elite of summary.json, and stochastic sampling
// records the agent's log π as the behaviour's.
func TestSampleChoosesGenerationsTheEliteAndMethods(t *testing.T) {
	run := tinyRun(t)
	ckpts, err := evo.ReadCheckpoints(run)
	if err != nil {
		t.Fatal(err)
	}
	last := ckpts[len(ckpts)-1].Generation
	for _, tc := range []struct {
		args []string
		gens []int
	}{
		{[]string{"-generations", "last"}, []int{last}},
		{[]string{"-generations", "0"}, []int{0}},
		{[]string{"-elite"}, nil},
	} {
		tr, err := record.Read(sample(t, run, append(tc.args, "-episodes", "1")...))
		if err != nil {
			t.Fatal(err)
		}
		agents := map[int]bool{}
		for _, s := range tr.Sources {
			agents[s.Agent] = true
			if tc.gens != nil && !slices.Contains(tc.gens, s.Generation) {
				t.Errorf("%v: a step of generation %d", tc.args, s.Generation)
			}
		}
		for i, s := range tr.Sources {
			if d := math.Abs(float64(s.BehaviorLogProb - tr.LogProbs[i])); d > 1e-5 {
				t.Fatalf("%v step %d: stochastic behaviour log-probability %g, log π %g", tc.args, i, s.BehaviorLogProb, tr.LogProbs[i])
			}
		}
		wantAgents := len(ckpts[0].Members)
		if tc.gens == nil {
			wantAgents = 1
		}
		if len(agents) != wantAgents {
			t.Errorf("%v: steps of %d agents, want %d", tc.args, len(agents), wantAgents)
		}
	}
}

// TestSampleBadInput: every misuse exits 2 with the reason and writes no
// dataset; a damaged checkpoint is refused only where it is to be played.
func TestSampleBadInput(t *testing.T) {
	run := tinyRun(t)
	empty := t.TempDir()
	if err := os.WriteFile(filepath.Join(empty, "config.toml"), mustRead(t, filepath.Join(run, "config.toml")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(empty, "checkpoints"), 0o755); err != nil {
		t.Fatal(err)
	}
	tampered := filepath.Join(t.TempDir(), "run")
	copyTree(t, run, tampered)
	ckpts, err := evo.ReadCheckpoints(tampered)
	if err != nil {
		t.Fatal(err)
	}
	victim := ckpts[0].Members[0].File
	b := mustRead(t, victim)
	b[len(b)-1] ^= 1
	if err := os.WriteFile(victim, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-o", "X"}, "want one run directory"},
		{[]string{run}, "-o: give"},
		{[]string{"-o", "x.csv", run}, "ending in .npz"},
		{[]string{"-o", "X", "-method", "boltzmann", run}, `-method "boltzmann": want one of greedy, stochastic, temperature, epsilon`},
		{[]string{"-o", "X", "-method", "temperature", "-temperature", "0", run}, "-temperature 0: want a finite T > 0"},
		{[]string{"-o", "X", "-method", "epsilon", "-epsilon", "1.5", run}, "-epsilon 1.5: want a probability"},
		{[]string{"-o", "X", "-epsilon", "0.1", run}, "-epsilon applies to -method epsilon only"},
		{[]string{"-o", "X", "-method", "epsilon", run}, "-method epsilon needs -epsilon E"},
		{[]string{"-o", filepath.Join(t.TempDir(), "no", "d.npz"), run}, "is not a directory"},
		{[]string{"-o", "X", "-elite", "-generations", "0", run}, "exclude each other"},
		{[]string{"-o", "X", "-episodes", "0", run}, "-episodes 0"},
		{[]string{"-o", "X", "-generations", "7", run}, "keeps no checkpoint of generation 7 (it keeps 0, "},
		{[]string{"-o", "X", "-generations", "1,x", run}, `"x" is not a generation`},
		{[]string{"-o", "X", filepath.Join(run, "nothere")}, "config.toml"},
		{[]string{"-o", "X", empty}, "holds no checkpoint"},
		{[]string{"-o", "X", tampered}, victim},
		{[]string{"-o", "X", "-generations", "0", tampered}, victim + ": "},
	} {
		out := filepath.Join(t.TempDir(), "data.npz")
		args := slices.Clone(tc.args)
		for i, a := range args {
			if a == "X" {
				args[i] = out
			}
		}
		code, _, stderr := evolve(context.Background(), append([]string{"sample"}, args...)...)
		if code != exitBadInput || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 1 {
			t.Errorf("sample %v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("sample %v wrote %s", tc.args, out)
		}
	}
	// A damaged checkpoint that -generations leaves out is not read: the
	// others are played.
	if _, err := record.Read(sample(t, tampered, "-generations", "last", "-episodes", "1")); err != nil {
		t.Error(err)
	}
}

// TestSampleRecurrentAgents samples an LSTM population greedily: each
// episode's actions and values are what the agent gives stepping through
// it from a zero state, as a deployed agent would.
func TestSampleRecurrentAgents(t *testing.T) {
	config, _ := writeTiny(t, 1024)
	b := mustRead(t, config)
	text := strings.Replace(string(b), "[net]\n[net.mlp]\nhidden = [16]\n", "[net]\nencoder = \"lstm\"\n[net.lstm]\nhidden = 16\n", 1)
	if text == string(b) {
		t.Fatal("the tiny config's [net] was not found to make it an LSTM")
	}
	if err := os.WriteFile(config, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := evolve(context.Background(), "-config", config, "-quiet"); code != exitOK {
		t.Fatalf("training: exit %d\n%s", code, stderr)
	}
	run := filepath.Join(filepath.Dir(config), "run")
	tr, err := record.Read(sample(t, run, "-method", "greedy", "-episodes", "2", "-generations", "last"))
	if err != nil {
		t.Fatal(err)
	}
	ckpts, err := evo.ReadCheckpoints(run)
	if err != nil {
		t.Fatal(err)
	}
	files := map[int]string{}
	for _, m := range ckpts[len(ckpts)-1].Members {
		files[m.Index] = m.File
	}
	var a *agent.PPO
	for i, s := range tr.Sources {
		if tr.EpisodeStarts[i] {
			if a, err = agent.Load(files[s.Agent]); err != nil {
				t.Fatal(err)
			}
			a.ResetState(-1)
		}
		act, _, values, err := a.ActInfo(tr.Observations[i], nil, true)
		if err != nil || !slices.Equal(act, tr.Actions[i]) || values[0] != tr.Values[i] {
			t.Fatalf("step %d (agent %d): action %v value %v, the LSTM stepping through the episode from a zero state acts %v with value %v (%v)",
				i, s.Agent, tr.Actions[i], tr.Values[i], act, values, err)
		}
	}
}

package evo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/envs"
)

func TestDeriveSeedSeparatesStreams(t *testing.T) {
	seen := map[uint64]string{}
	for seed := int64(0); seed < 3; seed++ {
		for a := -1; a < 4; a++ {
			for g := 0; g < 4; g++ {
				for p := purposeInit; p <= purposeEval; p++ {
					s := deriveSeed(seed, a, g, p)
					key := string(rune(seed)) + "/" + string(rune(a+1)) + "/" + string(rune(g)) + "/" + string(rune(p))
					if old, dup := seen[s]; dup {
						t.Fatalf("streams %q and %q share seed %x", old, key, s)
					}
					seen[s] = key
				}
			}
		}
	}
}

func TestMutationDrawFollowsWeights(t *testing.T) {
	m := MutationConfig{NoMutation: 0.4, Architecture: 0.3, Parameters: 0.2, Activation: 0, RLHP: 0.1}
	r := newRNG(1, 0, 0, purposeMutation)
	counts := map[string]int{}
	const n = 20000
	for range n {
		counts[m.draw(r)]++
	}
	for kind, w := range map[string]float64{MutationNone: 0.4, MutationArchitecture: 0.3, MutationParameters: 0.2, MutationActivation: 0, MutationRLHP: 0.1} {
		got := float64(counts[kind]) / n
		if math.Abs(got-w) > 0.015 || (w == 0 && counts[kind] > 0) {
			t.Errorf("%s drawn %.3f of the time, want %.2f", kind, got, w)
		}
	}
}

func TestTournament(t *testing.T) {
	fitness := []float64{3, 9, 9, math.Inf(-1), 1}
	r := newRNG(1, -1, 1, purposeTournament)
	for range 200 {
		picks := tournament(fitness, 5, 2, true, r)
		if len(picks) != 5 || picks[0] != 1 {
			t.Fatalf("picks %v: want 5 with the first best (position 1) first", picks)
		}
	}
	// A tournament as large as the population almost always finds a best.
	wins := 0
	for range 200 {
		for _, p := range tournament(fitness, 5, 5, false, r)[1:] {
			if fitness[p] == 9 {
				wins++
			}
		}
	}
	if wins < 200*4*8/10 {
		t.Errorf("tournaments of 5 picked a best agent %d times of 800", wins)
	}
	// Size 1 picks uniformly, the diverged agent included.
	counts := make([]int, 5)
	for range 2000 {
		for _, p := range tournament(fitness, 5, 1, false, r) {
			counts[p]++
		}
	}
	for i, c := range counts {
		if c < 1700 || c > 2300 {
			t.Errorf("size-1 tournaments picked position %d %d times of 10000, want about 2000", i, c)
		}
	}
}

// newTiny builds the tiny config's population, with edits to its config.
func newTiny(t *testing.T, edit func(*Config)) *Trainer {
	t.Helper()
	cfg := tiny(t)
	if edit != nil {
		edit(&cfg)
	}
	tr, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// fileOf saves a and returns the bytes of its file.
func fileOf(t *testing.T, a *agent.PPO) []byte {
	t.Helper()
	p := filepath.Join(t.TempDir(), "a.safetensors")
	if err := a.Save(p); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func only(kind string) func(*Config) {
	return func(c *Config) {
		c.Mutation = MutationConfig{MutationSD: 0.1, NewLayer: 0.5, MutateElite: true}
		switch kind {
		case MutationArchitecture:
			c.Mutation.Architecture = 1
		case MutationParameters:
			c.Mutation.Parameters = 1
		case MutationActivation:
			c.Mutation.Activation = 1
		case MutationRLHP:
			c.Mutation.RLHP = 1
		default:
			c.Mutation.NoMutation = 1
		}
	}
}

func TestRLHPMutationStaysInItsRange(t *testing.T) {
	tr := newTiny(t, only(MutationRLHP))
	a := tr.members[0].Agent
	changed := map[string]bool{}
	for g := 1; g <= 60; g++ {
		before := a.Config()
		b, desc, err := tr.cfg.mutate(a, 0, g)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(desc, "rl_hp: ") || b.History[len(b.History)-1] != desc {
			t.Fatalf("description %q, history %v", desc, b.History)
		}
		after := b.Config()
		for name, r := range tr.cfg.HP {
			v := hpValue(after, name)
			if v < r.Min || v > r.Max || (isIntHP(name) && v != math.Trunc(v)) {
				t.Fatalf("%s = %v outside [%v, %v] or not whole", name, v, r.Min, r.Max)
			}
			if v != hpValue(before, name) {
				changed[name] = true
			}
		}
		a = b
	}
	if len(changed) != 3 {
		t.Errorf("only %v changed in 60 mutations", changed)
	}
}

func TestParameterMutationTouchesAboutATenthOfSomeMatrices(t *testing.T) {
	tr := newTiny(t, only(MutationParameters))
	a := tr.members[0].Agent
	before := fileOf(t, a)
	history := slices.Clone(a.History)
	var old [][]float32
	for _, w := range a.WeightMatrices() {
		old = append(old, slices.Clone(w.Data))
	}
	b, desc, err := tr.cfg.mutate(a, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(desc, "parameters: ") || b.History[len(b.History)-1] != desc {
		t.Fatalf("description %q, history %v", desc, b.History)
	}
	matrices := 0
	for k, w := range b.WeightMatrices() {
		diff := 0
		for i := range w.Data {
			if w.Data[i] != old[k][i] {
				diff++
			}
		}
		if diff > 0 {
			matrices++
			if most := max(1, int(math.Round(0.1*float64(len(w.Data))))); diff > most {
				t.Errorf("%s: %d of %d entries changed, want at most %d", w.Name, diff, len(w.Data), most)
			}
		}
		copy(w.Data, old[k]) // undo, to compare everything else below
	}
	if matrices == 0 {
		t.Error("no weight matrix changed")
	}
	b.History = history
	if !bytes.Equal(before, fileOf(t, b)) {
		t.Error("the mutation changed more than weight matrices")
	}
}

func TestArchitectureAndActivationMutationsChangeTheNetwork(t *testing.T) {
	for _, kind := range []string{MutationArchitecture, MutationActivation} {
		tr := newTiny(t, only(kind))
		applied := 0
		for g := 1; g <= 6; g++ {
			a := tr.members[0].Agent
			before := a.Config().Net.String()
			b, desc, err := tr.cfg.mutate(a, 0, g)
			if err != nil {
				t.Fatal(err)
			}
			if after := b.Config().Net.String(); after != before {
				applied++
				if b.History[len(b.History)-1] != desc {
					t.Errorf("%s: history does not record %q", kind, desc)
				}
			}
			tr.members[0].Agent = b
		}
		if applied == 0 {
			t.Errorf("no %s mutation changed the network in 6 tries", kind)
		}
	}
}

func TestEliteIsKeptIntactWithoutMutateElite(t *testing.T) {
	tr := newTiny(t, func(c *Config) { only(MutationParameters)(c); c.Mutation.MutateElite = false })
	for i, m := range tr.members {
		m.Fitness = []float64{float64(10 * i)}
	}
	elite := tr.members[2]
	before := fileOf(t, elite.Agent)
	if err := tr.evolve(1); err != nil {
		t.Fatal(err)
	}
	if tr.members[0] != elite || !bytes.Equal(before, fileOf(t, elite.Agent)) || elite.Mutation != "none (elite)" {
		t.Fatalf("the elite was replaced or changed (mutation %q)", tr.members[0].Mutation)
	}
	for i, m := range tr.members[1:] {
		if m.Index != 3+i || !strings.HasPrefix(m.Mutation, "parameters") {
			t.Errorf("clone %d: index %d, mutation %q; want index %d, a parameter mutation", i, m.Index, m.Mutation, 3+i)
		}
	}
}

func TestDivergedAgentGetsMinusInfAndTheRunGoesOn(t *testing.T) {
	tr := newTiny(t, func(c *Config) { c.Population.MaxSteps = 1 })
	setNaN(tr.members[1].Agent, false)
	sum, err := tr.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if sum.Generations != 1 || sum.EliteIndex == 1 {
		t.Fatalf("summary %+v", sum)
	}
	rows := readMetrics(t, tr.cfg.OutDir)
	if rows[2][1] != "1" || rows[2][3] != "-Inf" || rows[2][4] != "true" {
		t.Fatalf("metrics row of the diverged agent: %v", rows[2])
	}
}

// panicEnv is CartPole that panics at its 40th step.
type panicEnv struct {
	envs.Env
	steps int
}

func (p *panicEnv) Step(a []float32) ([]float32, float64, bool, bool, envs.Info) {
	if p.steps++; p.steps == 40 {
		panic("the simulator exploded")
	}
	return p.Env.Step(a)
}

func registerPanicEnv() error {
	if _, ok := envs.Lookup("PanicCartPole-v0"); ok {
		return nil // -count > 1
	}
	return envs.Register(envs.Spec{ID: "PanicCartPole-v0", New: func(o envs.Options) (envs.Env, error) {
		e, err := envs.Make("CartPole-v1", o)
		return &panicEnv{Env: e}, err
	}})
}

func TestEnvPanicFailsTheRunNamingAgentAndEnv(t *testing.T) {
	if err := registerPanicEnv(); err != nil {
		t.Fatal(err)
	}
	tr := newTiny(t, func(c *Config) { c.Env.ID = "PanicCartPole-v0" })
	_, err := tr.Run(context.Background())
	dir := tr.cfg.OutDir
	checkFailedRun(t, err, dir, "agent 0", "PanicCartPole-v0", "the simulator exploded")
	if _, err := Resume(dir, Options{}); err != nil {
		t.Errorf("the checkpoint of the last good generation does not resume: %v", err)
	}
}

func TestResumeRefusesAChangedConfigAndNewRefusesARun(t *testing.T) {
	if raceEnabled {
		t.Skip("covered without -race")
	}
	cfg := tiny(t)
	cfg.Population.MaxSteps = 1
	if _, err := run(t, cfg, Options{}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := New(cfg, Options{}); !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "already holds a run") {
		t.Errorf("New over a run: %v", err)
	}
	path := filepath.Join(cfg.OutDir, "config.toml")
	b := readFile(t, path)
	if err := os.WriteFile(path, bytes.Replace(b, []byte("lr = 0.0003"), []byte("lr = 0.0004"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Resume(cfg.OutDir, Options{}); !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "config was changed") ||
		!strings.Contains(err.Error(), "config.toml sets ppo.lr = 0.0004 (the checkpoint's: 0.0003): ") {
		t.Errorf("Resume with a changed config: %v", err)
	}
}

func TestCheckpointsKeepTheNewest(t *testing.T) {
	if raceEnabled {
		t.Skip("covered without -race")
	}
	cfg := tiny(t)
	cfg.Population.MaxSteps = 4 * 3 * 256
	cfg.Checkpoint.Keep = 2
	if _, err := run(t, cfg, Options{}, nil); err != nil {
		t.Fatal(err)
	}
	got, _ := filepath.Glob(filepath.Join(cfg.OutDir, "checkpoints", "*"))
	var names []string
	for _, p := range got {
		names = append(names, filepath.Base(p))
	}
	if strings.Join(names, " ") != "gen-000003 gen-000004 latest" {
		t.Errorf("checkpoints: %v", names)
	}
	// A checkpoint's directory has the mode of checkpoints/ (not
	// MkdirTemp's 0700).
	root, err := os.Stat(filepath.Join(cfg.OutDir, "checkpoints"))
	if err != nil {
		t.Fatal(err)
	}
	gen, err := os.Stat(filepath.Join(cfg.OutDir, "checkpoints", "gen-000004"))
	if err != nil {
		t.Fatal(err)
	}
	if gen.Mode().Perm() != root.Mode().Perm() {
		t.Errorf("checkpoint directory mode %v, want checkpoints/'s %v", gen.Mode(), root.Mode())
	}
}

func TestTargetStopsTheRunAfterMinGenerations(t *testing.T) {
	cfg := tiny(t)
	cfg.Population.Target = 0 // every CartPole return reaches it
	cfg.Population.MinGenerations = 2
	sum, err := run(t, cfg, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Generations != 2 || sum.StopReason != StopTarget || !sum.Finished || sum.EliteFitness < 0 {
		t.Fatalf("summary %+v: want a stop by the target after 2 generations", sum)
	}
	var file map[string]any
	if err := json.Unmarshal(readFile(t, filepath.Join(cfg.OutDir, "summary.json")), &file); err != nil ||
		file["stop_reason"] != StopTarget || file["generations"] != 2.0 {
		t.Fatalf("summary.json: %v, %v", file, err)
	}
}

func TestIndependentAgentsAreNeitherSelectedNorMutated(t *testing.T) {
	cfg := tiny(t)
	cfg.Population.Independent = true
	sum, err := run(t, cfg, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rows := readMetrics(t, cfg.OutDir)
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	gens := 0
	for _, r := range rows[1:] {
		g, _ := strconv.Atoi(r[col["generation"]])
		gens = max(gens, g)
		agent, _ := strconv.Atoi(r[col["agent"]])
		want := "none (independent)"
		if g == 1 {
			want = "initial"
		}
		if agent > 2 || r[col["parent"]] != "-1" || r[col["lr"]] != "0.0003" || r[col["mutation"]] != want {
			t.Errorf("generation %d: agent %s, parent %s, lr %s, mutation %q: want agents 0-2 with their initial lr, never cloned nor mutated",
				g, r[col["agent"]], r[col["parent"]], r[col["lr"]], r[col["mutation"]])
		}
	}
	if gens != 4 || len(rows) != 1+3*gens {
		t.Fatalf("%d generations, %d rows: want 4 generations of 3 agents", gens, len(rows)-1)
	}
	got, err := ReadSummary(cfg.OutDir)
	if err != nil || !reflect.DeepEqual(got, sum) || sum.Elite == nil || sum.Elite.Index != sum.EliteIndex {
		t.Fatalf("ReadSummary = %+v, %v; want what Run returned, %+v, with the elite's record", got, err, sum)
	}
}

// TestRLHPMutationMovesSmallIntegers: a tournament's rl_hp mutation of an
// integer moves it by at least 1 (2 × 1.2 and 2 × 0.8 both round to 2, which
// held update_epochs at 2 for good), within its range.
func TestRLHPMutationMovesSmallIntegers(t *testing.T) {
	tr := newTiny(t, only(MutationRLHP))
	tr.cfg.HP = map[string]HPRange{"update_epochs": {Min: 1, Max: 20, Grow: DefaultGrow, Shrink: DefaultShrink}}
	a := tr.members[0].Agent
	c := a.Config()
	c.UpdateEpochs = 2
	if err := a.SetConfig(c); err != nil {
		t.Fatal(err)
	}
	seen := map[int]int{}
	for g := 1; g <= 60; g++ {
		old := a.Config().UpdateEpochs
		b, desc, err := tr.cfg.mutate(a, 0, g)
		if err != nil {
			t.Fatal(err)
		}
		v := b.Config().UpdateEpochs
		if v == old && old != 1 && old != 20 || v < 1 || v > 20 {
			t.Fatalf("%s: update_epochs %d -> %d", desc, old, v)
		}
		seen[v]++
		a = b
	}
	if seen[1] == 0 || seen[3] == 0 {
		t.Errorf("update_epochs from 2 visited %v in 60 mutations; want 1 and 3 among them", seen)
	}
}

// TestRLHPMutationMovesGammaOnItsScale: a tournament's rl_hp mutation of gamma multiplies
// 1 − gamma by grow or shrink, as PBT's perturbation does, so 0.99 goes to 0.988 or 0.992
// (multiplying gamma itself took it to 1, the range's top, then to 0.8); and an
// [hp.gamma] table without bounds gets 1 − gamma within 4× either way.
func TestRLHPMutationMovesGammaOnItsScale(t *testing.T) {
	r := defaultRange("gamma", 0.99)
	if math.Abs(r.Min-0.96) > 1e-12 || math.Abs(r.Max-0.9975) > 1e-12 {
		t.Fatalf("default gamma range [%v, %v], want [0.96, 0.9975]", r.Min, r.Max)
	}
	tr := newTiny(t, only(MutationRLHP))
	tr.cfg.HP = map[string]HPRange{"gamma": r}
	a := tr.members[0].Agent
	seen := map[float64]bool{}
	for g := 1; g <= 20; g++ {
		old := a.Config().Gamma // mutate changes a in place
		b, _, err := tr.cfg.mutate(a, 0, g)
		if err != nil {
			t.Fatal(err)
		}
		v := b.Config().Gamma
		seen[math.Round(v*1e6)/1e6] = true
		if want1, want2 := 1-(1-old)*1.2, 1-(1-old)*0.8; math.Abs(v-want1) > 1e-12 && math.Abs(v-want2) > 1e-12 &&
			v != r.Min && v != r.Max {
			t.Fatalf("gamma %v -> %v, want %v or %v", old, v, want1, want2)
		}
		a = b
	}
	if len(seen) < 3 {
		t.Errorf("gamma took only %v in 20 mutations", seen)
	}
}

// TestRLHPMutationKeepsWholeRollouts: an rl_hp mutation of learn_step
// records a whole number of steps of each env — the rollout the agent
// trains (512 × 1.2 is 614, of which 8 envs take 76 steps each: 608) —
// in the agent's config and in the description.
func TestRLHPMutationKeepsWholeRollouts(t *testing.T) {
	tr := newTiny(t, only(MutationRLHP))
	n := tr.cfg.Env.NumEnvs
	tr.cfg.HP = map[string]HPRange{"learn_step": {Min: float64(n), Max: 8192, Grow: DefaultGrow, Shrink: DefaultShrink}}
	a := tr.members[0].Agent
	for g := 1; g <= 30; g++ {
		b, desc, err := tr.cfg.mutate(a, 0, g)
		if err != nil {
			t.Fatal(err)
		}
		v := b.Config().LearnStep
		if v%n != 0 || !strings.HasSuffix(desc, fmt.Sprintf("-> %d", v)) {
			t.Fatalf("%s: learn_step %d with %d envs", desc, v, n)
		}
		a = b
	}
}

// TestTrainerConfigIsACopy: what a caller changes in Trainer.Config() or
// Elite() never reaches the trainer (a changed copy was written to the
// run's config.toml, which Resume then refused), and ParseConfig's PPO.Net
// shares no memory with Net.
func TestTrainerConfigIsACopy(t *testing.T) {
	tr := newTiny(t, nil)
	before, err := tr.Config().Digest()
	if err != nil {
		t.Fatal(err)
	}
	c := tr.Config()
	c.HP["lr"] = HPRange{Min: 1, Max: 2}
	c.Net.MLP.Hidden[0] = 999
	c.PPO.Net.MLP.Hidden[0] = 999
	c.Env.Options["x"] = 1
	if after, _ := tr.Config().Digest(); after != before {
		t.Error("changing Trainer.Config()'s result changed the trainer's config")
	}
	tr.elite.HP = map[string]float64{"lr": 1e-3}
	tr.Elite().HP["lr"] = 5
	if tr.elite.HP["lr"] != 1e-3 {
		t.Error("changing Elite().HP changed the trainer's record")
	}
	p, err := ParseConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Net.MLP.Hidden[0]++; p.PPO.Net.MLP.Hidden[0] == p.Net.MLP.Hidden[0] {
		t.Error("ParseConfig's PPO.Net shares Net's MLP")
	}
}

// TestRunWithANilContext: Run(nil) is an error before anything is written
// (it panicked in errgroup after config.toml and the first checkpoint).
func TestRunWithANilContext(t *testing.T) {
	tr := newTiny(t, nil)
	//lint:ignore SA1012 the nil context is what is tested
	if _, err := tr.Run(nil); err == nil || !strings.Contains(err.Error(), "nil context") { //nolint:staticcheck
		t.Fatalf("Run(nil) = %v", err)
	}
	if _, err := os.Stat(tr.Dir()); err == nil {
		t.Errorf("Run(nil) made %s", tr.Dir())
	}
}

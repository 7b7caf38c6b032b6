package evo

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/internal/runtest"
	"github.com/evolverl/evolve/netconf"
)

// pbtConfig is the tiny run with PBT over eight mutable hyperparameters
// on their default scales, 4 agents so that the quantile holds one.
const pbtConfig = runtest.TinyConfig + `
[hp.lr]
min = 1e-4
max = 1e-2
[hp.gamma]
min = 0.9
max = 0.999
[hp.gae_lambda]
min = 0.8
max = 0.99
[hp.ent_coef]
min = 1e-6
max = 0.1
[hp.batch_size]
min = 8
max = 128
[hp.learn_step]
min = 32
max = 512
[hp.update_epochs]
min = 1
max = 8
[hp.clip_coef]
min = 0.1
max = 0.4
[pbt]
quantile = 0.25
`

func pbtTiny(t *testing.T, edit func(*Config)) Config {
	t.Helper()
	text := strings.Replace(pbtConfig, "[population]\n", "[population]\nselection = \"pbt\"\n", 1)
	text = strings.Replace(text, "size = 3\n", "size = 4\n", 1)
	cfg := parseTiny(t, text)
	if edit != nil {
		edit(&cfg)
	}
	return cfg
}

// rankedPBT returns a trainer of cfg (4 agents) whose members' last
// fitnesses are 10, 40, 30 and 20, each from three episodes 1 apart, so that
// agent 0 is the one PBT replaces, by a copy of agent 1.
func rankedPBT(t *testing.T, cfg Config) *Trainer {
	t.Helper()
	tr, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range tr.members {
		f := []float64{10, 40, 30, 20}[i]
		m.Fitness = []float64{f}
		m.Returns = []float64{f - 1, f + 1, f}
	}
	return tr
}

// TestWelchPMatchesStudentT checks the one-sided p-value where the
// Welch–Satterthwaite degrees of freedom are 2 (two samples of two with
// equal spread), whose Student-t tail has the closed form
// 1/2 − t/(2·sqrt(2 + t²)), and the limits of samples without spread.
func TestWelchPMatchesStudentT(t *testing.T) {
	for _, c := range []struct{ a, b, d float64 }{{5, 3, 1}, {3, 5, 1}, {10, 9.5, 2}, {0, 0, 3}} {
		x, y := []float64{c.a - c.d, c.a + c.d}, []float64{c.b - c.d, c.b + c.d}
		tv := (c.a - c.b) / math.Sqrt(c.d*c.d+c.d*c.d) // each sample's variance of the mean is d²
		want := 0.5 - tv/(2*math.Sqrt(2+tv*tv))
		if got := welchP(x, y); math.Abs(got-want) > 1e-9 {
			t.Errorf("welchP(%v, %v) = %v, want %v", x, y, got, want)
		}
	}
	if p := welchP([]float64{2, 2}, []float64{1, 1}); p != 0 {
		t.Errorf("constant samples, higher mean: p = %v, want 0", p)
	}
	if p := welchP([]float64{1, 1}, []float64{1, 1}); p != 1 {
		t.Errorf("equal constant samples: p = %v, want 1", p)
	}
}

// TestScalesSampleAndPerturb checks each scale: draws stay in the range and
// are uniform on the scale (the mean of the scale's coordinate is the
// middle of the range, within 4 standard errors), perturbations move one
// step and clip.
func TestScalesSampleAndPerturb(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n = 20000
	cases := []struct {
		name  string
		rng   HPRange
		coord func(float64) float64 // where the range is uniform
	}{
		{"lr", HPRange{Min: 1e-5, Max: 2e-3}, math.Log},
		{"gamma", HPRange{Min: 0.97, Max: 0.9999}, func(v float64) float64 { return math.Log(1 - v) }},
		{"clip_coef", HPRange{Min: 0.1, Max: 0.4}, func(v float64) float64 { return v }},
	}
	for _, c := range cases {
		lo, hi := c.coord(c.rng.Min), c.coord(c.rng.Max)
		sum := 0.0
		for range n {
			v := sampleHP(c.name, c.rng, r)
			if v < c.rng.Min || v > c.rng.Max {
				t.Fatalf("%s: drew %v outside [%v, %v]", c.name, v, c.rng.Min, c.rng.Max)
			}
			sum += c.coord(v)
		}
		se := math.Abs(hi-lo) / math.Sqrt(12*n)
		if m := sum / n; math.Abs(m-(lo+hi)/2) > 4*se {
			t.Errorf("%s: mean coordinate %v, want %v ± %v", c.name, m, (lo+hi)/2, 4*se)
		}
	}
	count := map[float64]int{}
	for range n {
		count[sampleHP("batch_size", HPRange{Min: 4, Max: 1024}, r)]++
	}
	if len(count) != 9 {
		t.Errorf("batch_size in [4, 1024] drew %d values %v, want the 9 powers of two 4..1024", len(count), count)
	}
	for v, k := range count {
		if math.Exp2(math.Round(math.Log2(v))) != v || math.Abs(float64(k)-n/9) > 4*math.Sqrt(n/9) {
			t.Errorf("batch_size drew %v %d times, want a power of two about %d times", v, k, n/9)
		}
	}
	steps := []struct {
		name     string
		rng      HPRange
		v        float64
		up       bool
		want     float64
		scaleKey string
	}{
		{"lr", HPRange{Min: 1e-5, Max: 1}, 1e-3, true, 1.2e-3, ""},
		{"lr", HPRange{Min: 1e-5, Max: 1e-3}, 1e-3, true, 1e-3, ""}, // clipped
		{"gamma", HPRange{Min: 0.9, Max: 0.9999}, 0.99, true, 1 - 0.01*1.2, ""},
		{"gamma", HPRange{Min: 0.9, Max: 0.9999}, 0.99, false, 1 - 0.01*0.8, ""},
		{"batch_size", HPRange{Min: 4, Max: 1024}, 64, true, 128, ""},
		{"batch_size", HPRange{Min: 4, Max: 1024}, 64, false, 32, ""},
		{"learn_step", HPRange{Min: 256, Max: 4096}, 4096, true, 4096, ""},
		{"update_epochs", HPRange{Min: 1, Max: 20}, 2, true, 3, ""},   // round(2.4) = 2 would not move
		{"update_epochs", HPRange{Min: 1, Max: 20}, 10, true, 12, ""}, // ×1.2
		{"update_epochs", HPRange{Min: 1, Max: 20}, 1, false, 1, ""},  // clipped
		{"clip_coef", HPRange{Min: 0.1, Max: 0.4}, 0.2, false, 0.16, ""},
	}
	for _, s := range steps {
		if got := perturbHP(s.name, s.rng, s.v, s.up, 1.2, 0.8); math.Abs(got-s.want) > 1e-12 {
			t.Errorf("perturb %s %v up=%v: %v, want %v", s.name, s.v, s.up, got, s.want)
		}
	}
}

// TestPBTExploitsTheTopAndExplores sets a population's fitness by hand and
// checks one exploit/explore step: the worst agent becomes a copy of the
// best (its weights, under a new index, with the best as parent) whose
// hyperparameters are explored inside their ranges; the others go on
// untouched; an insignificant difference is not exploited.
func TestPBTExploitsTheTopAndExplores(t *testing.T) {
	cfg := pbtTiny(t, nil)
	tr := rankedPBT(t, cfg)
	fit := []float64{10, 40, 30, 20}
	before := make([][]byte, 4)
	for i, m := range tr.members {
		before[i] = fileOf(t, m.Agent)
	}
	if err := tr.exploitExplore(1); err != nil {
		t.Fatal(err)
	}
	m := tr.members
	for _, i := range []int{1, 2, 3} {
		if m[i].Index != i || !bytes.Equal(fileOf(t, m[i].Agent), before[i]) || m[i].Mutation != "none (pbt)" {
			t.Errorf("member %d changed: index %d, mutation %q", i, m[i].Index, m[i].Mutation)
		}
	}
	c := m[0]
	if c.Index != 4 || c.Parent != 1 || tr.nextIndex != 5 {
		t.Fatalf("the worst became index %d parent %d (next %d), want a copy of agent 1 as 4", c.Index, c.Parent, tr.nextIndex)
	}
	if !strings.HasPrefix(c.Mutation, "pbt: exploit 1 (40 > 10); explore: ") {
		t.Errorf("mutation %q", c.Mutation)
	}
	// Weights are agent 1's: the same actions on the same observation.
	obs := []float32{0.01, -0.02, 0.03, 0.01}
	a1, err := m[1].Agent.Act(obs, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	a4, err := c.Agent.Act(obs, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if a1[0] != a4[0] {
		t.Errorf("the copy acts %v, agent 1 %v", a4, a1)
	}
	old, nc := m[1].Agent.Config(), c.Agent.Config()
	moved := 0
	for _, name := range cfg.mutableHPs() {
		r := cfg.HP[name]
		v := hpValue(nc, name)
		if v < r.Min || v > r.Max {
			t.Errorf("%s = %v outside [%v, %v]", name, v, r.Min, r.Max)
		}
		if v != hpValue(old, name) {
			moved++
		}
	}
	if moved < len(cfg.mutableHPs())-2 {
		t.Errorf("explore moved %d of %d hyperparameters (%s), want all but those clipped", moved, len(cfg.mutableHPs()), c.Mutation)
	}
	if nc.BatchSize > nc.LearnStep {
		t.Errorf("batch_size %d > learn_step %d", nc.BatchSize, nc.LearnStep)
	}

	// Overlapping episodes: the t-test refuses the copy.
	tr2, err := New(pbtTiny(t, nil), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, mm := range tr2.members {
		mm.Fitness = []float64{fit[i]}
		mm.Returns = []float64{fit[i] - 100, fit[i] + 100}
	}
	if err := tr2.exploitExplore(1); err != nil {
		t.Fatal(err)
	}
	if mm := tr2.members[0]; mm.Index != 0 || !strings.HasPrefix(mm.Mutation, "none (pbt: 1 better at p = ") {
		t.Errorf("insignificant difference: member 0 is %d with %q, want kept with the p-value", mm.Index, mm.Mutation)
	}
}

// TestPBTRunIsReproducibleAndResumes trains the PBT population with
// fitness from training episodes and sampled initial hyperparameters: 1
// and 2 workers give the same files, a run stopped after generation 2 and
// resumed gives them too, the initial agents' hyperparameters differ, no
// step goes to evaluation but for generations of one rollout, and
// global_steps adds the confirmation steps.
func TestPBTRunIsReproducibleAndResumes(t *testing.T) {
	edit := func(c *Config) {
		c.Population.Fitness, c.Population.Init = FitnessTrain, InitSample
		c.Population.EliteEpisodes = 3
		c.Population.MaxSteps = 4 * 4 * 256
		c.PBT.TTest = false // a few short episodes rarely differ significantly
	}
	var dirs []string
	for _, w := range []int{1, 2} {
		cfg := pbtTiny(t, edit)
		if _, err := run(t, cfg, Options{Workers: w}, nil); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, cfg.OutDir)
	}
	runtest.SameRun(t, dirs[0], dirs[1])
	cfg := pbtTiny(t, edit)
	stopAndResume(t, cfg, Options{}, 2)
	runtest.SameRun(t, dirs[0], cfg.OutDir)

	rows := readMetrics(t, dirs[0])
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	lrs := map[string]bool{}
	exploited := false
	// Each row's steps trained: its steps less those of the agent (or, for
	// a copy, its parent) in the generation before.
	steps, idles := map[[2]string]int{}, 0
	for _, r := range rows[1:] {
		steps[[2]string{r[0], r[1]}], _ = strconv.Atoi(r[col["steps"]])
	}
	for _, r := range rows[1:] {
		if r[col["generation"]] == "1" {
			lrs[r[col["lr"]]] = true
		}
		g, _ := strconv.Atoi(r[0])
		before, ok := steps[[2]string{strconv.Itoa(g - 1), r[1]}]
		if !ok {
			before = steps[[2]string{strconv.Itoa(g - 1), r[2]}]
		}
		trained := steps[[2]string{r[0], r[1]}] - before
		// A generation of one rollout is evaluated: its episodes were all
		// played before its update. An idle one is not.
		ls, _ := strconv.Atoi(r[col["learn_step"]])
		idle := r[col["loss"]] == "NaN"
		if idle {
			idles++
		}
		if idle != (trained == 0) {
			t.Errorf("generation %s agent %s: trained %d steps, loss %s", r[0], r[1], trained, r[col["loss"]])
		}
		if oneRollout := !idle && trained <= ls; (r[col["eval_steps"]] != "0") != oneRollout {
			t.Errorf("generation %s agent %s: learn_step %d, trained %d, eval_steps %s; want evaluation steps only for one rollout", r[0], r[1], ls, trained, r[col["eval_steps"]])
		}
		exploited = exploited || strings.HasPrefix(r[col["mutation"]], "pbt: exploit")
		total, _ := strconv.Atoi(r[col["total_steps"]])
		global, _ := strconv.Atoi(r[col["global_steps"]])
		if global <= total {
			t.Errorf("generation %s: global_steps %d, want more than the training steps %d (the confirmation)", r[0], global, total)
		}
	}
	if len(lrs) != 4 {
		t.Errorf("initial lr values %v: want 4 drawn values", lrs)
	}
	if idles == 0 {
		t.Error("no agent waited for the step clock: the run does not test it")
	}
	if !exploited {
		t.Error("no agent exploited another in 4 generations")
	}
}

// TestPBTConfigErrors checks that each bad [pbt] or range value is an
// error naming its key.
func TestPBTConfigErrors(t *testing.T) {
	base := strings.Replace(runtest.TinyConfig, "[population]\n", "[population]\nselection = \"pbt\"\n", 1)
	for _, c := range []struct{ add, want string }{
		{"[pbt]\nquantile = 0\n", "pbt.quantile = 0"},
		{"[pbt]\nquantile = 0.6\n", "pbt.quantile = 0.6"},
		{"[pbt]\nperturb_up = 0\n", "pbt.perturb_up = 0"},
		{"[pbt]\nperturb_down = -0.8\n", "pbt.perturb_down = -0.8"},
		{"[pbt]\nresample_probability = 1.5\n", "pbt.resample_probability = 1.5"},
		{"[pbt]\nalpha = 1\n", "pbt.alpha = 1"},
		{"[pbt]\nexplore = \"bandit\"\n", "pbt.explore = \"bandit\""},
		{"[pbt]\nexplore = \"pb2\"\npb2_region = 0\n", "pbt.pb2_region = 0"},
		{"[pbt]\nexplore = \"pb2\"\npb2_region = 1.5\n", "pbt.pb2_region = 1.5"},
		{"[pbt]\npb2_region = 0.5\n", "pbt.pb2_region = 0.5 with pbt.explore = \"perturb\""},
		{"[hp.lr]\nmin = 1e-2\nmax = 1e-4\n", "hp.lr: min = 0.01, max = 0.0001"},
		{"[hp.lr]\nmin = 0\nmax = 1e-2\n", "hp.lr: min = 0 on scale \"log\""},
		{"[hp.gamma]\nmin = 0.9\nmax = 1\n", "hp.gamma: max = 1 on scale \"log1m\""},
		{"[hp.batch_size]\nmin = 65\nmax = 100\n", "the range holds no power of two"},
		{"[hp.clip_coef]\nmin = 0.1\nmax = 0.3\nscale = \"cubic\"\n", "hp.clip_coef.scale = \"cubic\""},
		{"[hp.clip_coef]\nmin = 0.1\nmax = 0.3\nscale = \"pow2\"\n", "want an integer hyperparameter"},
	} {
		_, err := ParseConfig([]byte(base + c.add))
		if err == nil || !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err = %v, want bad input naming %q", c.add, err, c.want)
		}
	}
	for _, c := range []struct{ text, want string }{
		{runtest.TinyConfig + "[pbt]\nquantile = 0.25\n", "[pbt] given, but population.selection = \"tournament\""},
		{strings.Replace(runtest.TinyConfig, "[population]\n", "[population]\nselection = \"best\"\n", 1), "population.selection = \"best\""},
		{strings.Replace(runtest.TinyConfig, "[population]\n", "[population]\nfitness = \"mean\"\n", 1), "population.fitness = \"mean\""},
		{strings.Replace(runtest.TinyConfig, "[population]\n", "[population]\ninit = \"random\"\n", 1), "population.init = \"random\""},
	} {
		_, err := ParseConfig([]byte(c.text))
		if err == nil || !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err = %v, want bad input naming %q", err, c.want)
		}
	}
	// The defaults are stored as "", so that earlier runs keep their digests.
	cfg, err := ParseConfig([]byte(strings.Replace(runtest.TinyConfig, "[population]\n", "[population]\nselection = \"tournament\"\nfitness = \"eval\"\ninit = \"config\"\n", 1)))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := ParseConfig([]byte(runtest.TinyConfig))
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := cfg.Digest()
	d2, _ := plain.Digest()
	if d1 != d2 {
		t.Error("spelling out the default selection, fitness and init changes the digest")
	}
	// Keys added since leave the resolved configs (and so the digests) of
	// runs that do not set them as they were.
	for _, c := range []Config{plain, pbtTiny(t, nil)} {
		b, err := c.TOML()
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{"confirm_margin", "pb2_region", "explore", "kl_threshold", "kl_factor", "lr_factor", "min_lr", "max_lr"} {
			if strings.Contains(string(b), key) {
				t.Errorf("the resolved config of a run without %s writes it:\n%s", key, b)
			}
		}
	}
	// PBT's defaults are Ray Tune's.
	p, err := ParseConfig([]byte(base))
	if err != nil {
		t.Fatal(err)
	}
	if *p.PBT != DefaultPBT() {
		t.Errorf("[pbt] defaults %+v, want %+v", *p.PBT, DefaultPBT())
	}
	// TestResolvedConfigReadsBackEqual reads a resolved PBT config back.
}

// TestTournamentSizeOnlyWhereATournamentIsHeld: a single independent agent
// (a tuner's trial) and a PBT population smaller than the default
// tournament are valid configs; a tournament larger than its population is
// not.
func TestTournamentSizeOnlyWhereATournamentIsHeld(t *testing.T) {
	for _, extra := range []string{"independent = true\n", "selection = \"pbt\"\n"} {
		text := strings.Replace(runtest.TinyConfig, "size = 3\n", "size = 1\n"+extra, 1)
		if _, err := ParseConfig([]byte(text)); err != nil {
			t.Errorf("%q with 1 agent: %v", strings.TrimSpace(extra), err)
		}
	}
	// Without [tournament] size, one agent gets a tournament of one; a
	// tournament of two written out is refused.
	text := strings.Replace(runtest.TinyConfig, "size = 3\n", "size = 1\n", 1)
	if _, err := ParseConfig([]byte(text)); err != nil {
		t.Errorf("1 agent, the default tournament: %v", err)
	}
	if _, err := ParseConfig([]byte(text + "\n[tournament]\nsize = 2\n")); err == nil || !strings.Contains(err.Error(), "tournament.size = 2") {
		t.Errorf("a tournament of 2 in a population of 1: err = %v", err)
	}
}

// TestTrainFitnessFallsBackToEvaluation: an agent that finished no
// training episode in its generation (Pendulum's episodes last 200 steps,
// it trains 64) is evaluated instead, and its evaluation's steps count.
func TestTrainFitnessFallsBackToEvaluation(t *testing.T) {
	text := strings.NewReplacer("CartPole-v1", "Pendulum-v1", "evo_steps = 256", "evo_steps = 64",
		"max_steps = 3072", "max_steps = 192", "learn_step = 128", "learn_step = 64").Replace(runtest.TinyConfig)
	cfg := parseTiny(t, strings.Replace(text, "[population]\n", "[population]\nfitness = \"train\"\n", 1))
	if _, err := run(t, cfg, Options{}, nil); err != nil {
		t.Fatal(err)
	}
	rows, _ := runtest.CSV(t, filepath.Join(cfg.OutDir, "metrics.csv"))
	for _, r := range rows {
		// Two evaluation episodes of Pendulum's 200 steps.
		if r["eval_steps"] != "400" || r["train_return"] != "NaN" {
			t.Errorf("agent %s: eval_steps %s, train_return %s; want 400 and NaN", r["agent"], r["eval_steps"], r["train_return"])
		}
	}
}

// TestResumeKeepsTheMetricsColumnsARunBeganWith: a run whose metrics.csv
// was begun by a build without the measuring columns (eval_steps,
// global_steps, elite_fitness) goes on writing its own columns when
// resumed, and its rows match the new build's but for those columns.
func TestResumeKeepsTheMetricsColumnsARunBeganWith(t *testing.T) {
	for _, drop := range []int{1, 4} { // before update_lr; before the measuring columns too
		t.Run(fmt.Sprintf("without the last %d", drop), func(t *testing.T) { resumeWithFewerColumns(t, drop) })
	}
}

// resumeWithFewerColumns makes a stopped run one of an earlier build, whose
// metrics.csv lacks the last drop columns, resumes it, and holds it to the
// straight run in the columns it has.
func resumeWithFewerColumns(t *testing.T, drop int) {
	want, cfg := straightAndStopped(t, 4*3*256, 2, nil)
	path := filepath.Join(cfg.OutDir, "metrics.csv")
	rows, header := runtest.CSV(t, path)
	old := header[:len(header)-drop]
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.Write(old)
	for _, r := range rows {
		var f []string
		for _, h := range old {
			f = append(f, r[h])
		}
		w.Write(f)
	}
	w.Flush()
	writeConfig(t, cfg.OutDir, "metrics.csv", b.String())
	tr, err := Resume(cfg.OutDir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, gotHeader := runtest.CSV(t, path)
	wantRows, _ := runtest.CSV(t, filepath.Join(want.OutDir, "metrics.csv"))
	if len(gotHeader) != len(old) || len(got) != len(wantRows) {
		t.Fatalf("resumed: %d columns, %d rows; want the old %d columns and %d rows", len(gotHeader), len(got), len(old), len(wantRows))
	}
	for i := range got {
		for _, h := range old {
			if h != "wall_s" && got[i][h] != wantRows[i][h] {
				t.Errorf("row %d %s: %q, want %q", i+1, h, got[i][h], wantRows[i][h])
			}
		}
	}
}

// TestFitSizesKeepsTheConfiguredSequenceLength: a rollout that shrinks
// below max_seq_len steps per env shortens the BPTT sequences, and one that
// grows back restores the config's length (max_seq_len is not explored, so
// shortening it for good would change a lineage for the rest of the run).
func TestFitSizesKeepsTheConfiguredSequenceLength(t *testing.T) {
	c := agent.DefaultConfig()
	c.Net = netconf.DefaultSpec(netconf.EncoderLSTM)
	c.MaxSeqLen, c.BatchSize = 128, 128
	const numEnvs, configured = 8, 128
	for _, step := range []struct{ learnStep, seq, batch int }{
		{1024, 128, 128}, {256, 32, 128}, {64, 8, 64}, {4096, 128, 64}, {1024, 128, 64},
	} {
		c.LearnStep = step.learnStep
		fitSizes(&c, numEnvs, configured)
		if c.MaxSeqLen != step.seq || c.BatchSize != step.batch {
			t.Errorf("learn_step %d: max_seq_len %d, batch_size %d; want %d, %d", step.learnStep, c.MaxSeqLen, c.BatchSize, step.seq, step.batch)
		}
	}
	mlp := agent.DefaultConfig()
	mlp.MaxSeqLen, mlp.LearnStep = 16, 64
	if fitSizes(&mlp, numEnvs, 16); mlp.MaxSeqLen != 16 {
		t.Errorf("an MLP's max_seq_len became %d", mlp.MaxSeqLen)
	}
}

// TestTrainFitnessOfOneRolloutIsEvaluated: with fitness = "train" and one
// rollout per generation (evo_steps = learn_step), every training episode
// was played before the generation's only update, so the agent is
// evaluated instead: two copies of one agent that differ only in their
// hyperparameters (lr × 30, ent_coef, clip_coef, update_epochs) were
// scored alike, on their parent's work.
func TestTrainFitnessOfOneRolloutIsEvaluated(t *testing.T) {
	cfg := tiny(t)
	cfg.Population.Fitness = FitnessTrain
	cfg.Population.EvoSteps = cfg.PPO.LearnStep
	tr, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	src := tr.members[0].Agent
	a, b := src.Clone(42), src.Clone(42)
	c := b.Config()
	c.LR, c.EntCoef, c.ClipCoef, c.UpdateEpochs = c.LR*30, 0.1, 0.05, 8
	if err := b.SetConfig(c); err != nil {
		t.Fatal(err)
	}
	run := taskRunner{cfg: cfg, progress: func(int) {}}
	var fit [2]float64
	for i, ag := range []*agent.PPO{a, b} {
		r, err := run.trainOne(t.Context(), Task{Generation: 1, Agent: ag, EvalSeed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if r.GenSteps != cfg.PPO.LearnStep || len(r.Updates) != 1 || r.EvalSteps == 0 {
			t.Fatalf("copy %d: %d steps, %d updates, %d evaluation steps; want one rollout, then an evaluation", i, r.GenSteps, len(r.Updates), r.EvalSteps)
		}
		fit[i] = r.Fitness
	}
	if fit[0] == fit[1] {
		t.Errorf("both copies scored %v: the hyperparameters' update did not count", fit[0])
	}

	// Two rollouts: the second's episodes ended after an update, and count.
	cfg.Population.EvoSteps = 2 * cfg.PPO.LearnStep
	run.cfg = cfg
	r, err := run.trainOne(t.Context(), Task{Generation: 1, Agent: src.Clone(42), EvalSeed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.EvalSteps != 0 || len(r.Returns) == 0 {
		t.Errorf("two rollouts: %d evaluation steps, %d returns; want the training episodes' fitness", r.EvalSteps, len(r.Returns))
	}
}

// TestPBTStepClock: under PBT each member trains until its env steps reach
// the laggard's plus evo_steps (256), in whole rollouts; one whose rollout
// carried it past that trains nothing until the others catch up, and PBT
// leaves it out of its ranking while it is half a generation ahead or
// more. The tournament keeps AgileRL's evo_steps rounded up to each
// agent's own rollouts, every generation.
func TestPBTStepClock(t *testing.T) {
	learnSteps := []int{512, 96, 128, 128}
	for _, c := range []struct {
		selection string
		gens      [][]int // steps trained per generation
		ahead     [][]int // aheadOfClock after each generation
	}{
		{SelectPBT, [][]int{{512, 288, 256, 256}, {0, 288, 256, 256}, {512, 192, 256, 256}},
			[][]int{{256, 0, 0, 0}, {0, 0, 0, 0}, {256, 0, 0, 0}}},
		{SelectTournament, [][]int{{512, 288, 256, 256}, {512, 288, 256, 256}, {512, 288, 256, 256}}, nil},
	} {
		cfg := pbtTiny(t, nil)
		if c.selection == SelectTournament {
			cfg = tiny(t)
			cfg.Population.Size = len(learnSteps)
		}
		tr, err := New(cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range tr.members {
			ac := m.Agent.Config()
			ac.LearnStep = learnSteps[i]
			if err := m.Agent.SetConfig(ac); err != nil {
				t.Fatal(err)
			}
		}
		for g, want := range c.gens {
			reports, err := tr.trainGeneration(t.Context(), g+1)
			if err != nil {
				t.Fatal(err)
			}
			rep := tr.tally(g+1, reports)
			for i, r := range reports {
				if r.GenSteps != want[i] || r.Idle != (want[i] == 0) {
					t.Errorf("%s generation %d: agent %d (learn_step %d) trained %d steps (idle %v); want %d", c.selection, g+1, i, learnSteps[i], r.GenSteps, r.Idle, want[i])
				}
				if c.ahead != nil {
					if a := tr.aheadOfClock(tr.members[i]); a != c.ahead[g][i] {
						t.Errorf("%s generation %d: agent %d %d steps ahead of the clock, want %d", c.selection, g+1, i, a, c.ahead[g][i])
					}
				}
			}
			if reports[rep.Best].Idle {
				t.Errorf("%s generation %d: the best is idle agent %d", c.selection, g+1, rep.Best)
			}
		}
	}
}

// TestPBTLeavesMembersAheadOutOfItsRanking: a member half a generation or
// more ahead of the laggard neither copies nor is copied, however high or
// low its fitness; the others are ranked among themselves.
func TestPBTLeavesMembersAheadOutOfItsRanking(t *testing.T) {
	for _, aheadFit := range []float64{1000, -1000} {
		tr, err := New(pbtTiny(t, func(c *Config) { c.PBT.TTest = false }), Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range tr.members {
			m.Fitness = []float64{[]float64{10, 40, 30, aheadFit}[i]}
			m.Agent.Steps = 256
		}
		tr.members[3].Agent.Steps = 512
		if err := tr.exploitExplore(1); err != nil {
			t.Fatal(err)
		}
		m := tr.members
		if m[3].Index != 3 || m[3].Mutation != "none (pbt: 256 steps ahead of the laggard, not ranked)" {
			t.Errorf("fitness %v ahead: member 3 is agent %d, %q; want it left as it is", aheadFit, m[3].Index, m[3].Mutation)
		}
		// Of the other three, one quantile: the worst (agent 0) copies the best (agent 1).
		if m[0].Parent != 1 || m[1].Index != 1 || m[2].Index != 2 {
			t.Errorf("fitness %v ahead: members %d (parent %d), %d, %d; want a copy of agent 1 in place of agent 0", aheadFit, m[0].Index, m[0].Parent, m[1].Index, m[2].Index)
		}
	}
}

// TestPBTReplacesADivergedAgentAtOnce: an agent that diverges early in a
// generation (NaN weights: after one rollout) has the fewest steps, but it
// does not hold the step clock back: the others train evo_steps and rank
// with it, and PBT replaces it after its first generation.
func TestPBTReplacesADivergedAgentAtOnce(t *testing.T) {
	cfg := pbtTiny(t, func(c *Config) { c.PBT.TTest = false; c.Population.MaxSteps = 4 * 3 * 256 })
	tr, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	setNaN(tr.members[1].Agent, false)
	sum, err := tr.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	rows := readMetrics(t, cfg.OutDir)
	for _, r := range rows[1:] {
		if r[0] != "1" && r[1] == "1" {
			t.Errorf("generation %s: the diverged agent 1 is still there: %v", r[0], r[:6])
		}
		if r[1] != "1" && r[9] == "NaN" {
			t.Errorf("generation %s: agent %s waited for the diverged one", r[0], r[1])
		}
	}
	if sum.Generations > 4 {
		t.Errorf("%d generations for a budget of 3 (4 with the diverged agent's short one)", sum.Generations)
	}
}

// TestPBTBurnInIsNotRanked: an agent in burn-in takes no quantile slot (as
// in Ray Tune, whose trials in burn-in have no score yet): the worst agent
// past it is replaced, and the one in burn-in is not copied either.
func TestPBTBurnInIsNotRanked(t *testing.T) {
	// Fitness 10, 40, 30, 20; agent 1, the best, and agent 0, the worst,
	// are in burn-in (all within the step clock).
	tr := rankedPBT(t, pbtTiny(t, func(c *Config) { c.PBT.BurnIn = 1000; c.PBT.TTest = false }))
	for i, m := range tr.members {
		m.Agent.Steps = []int{999, 999, 1100, 1100}[i]
	}
	if err := tr.exploitExplore(1); err != nil {
		t.Fatal(err)
	}
	m := tr.members
	if m[0].Index != 0 || m[1].Index != 1 {
		t.Errorf("agents in burn-in replaced: members %d, %d", m[0].Index, m[1].Index)
	}
	if m[3].Index == 3 || m[3].Parent != 2 || m[2].Index != 2 {
		t.Errorf("member 3 is agent %d (parent %d), member 2 agent %d; want agent 3, the worst past burn-in, replaced by a copy of agent 2", m[3].Index, m[3].Parent, m[2].Index)
	}
}

// TestPBTReplacesADivergedAgentInBurnIn: an agent that diverged before it
// took a step is replaced, once the others are past pbt.burn_in, although
// it never trained those steps, rather than holding the bottom for ever.
func TestPBTReplacesADivergedAgentInBurnIn(t *testing.T) {
	cfg := pbtTiny(t, func(c *Config) {
		c.Env.ID = "Pendulum-v1"
		c.PBT.TTest = false
		c.PBT.BurnIn = 512
		c.Population.MaxSteps = 3 * 6 * 256
	})
	tr, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	setNaN(tr.members[1].Agent, true) // NaN actions: it never takes a step
	if _, err := tr.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if m := tr.members[1]; m.Index == 1 {
		t.Errorf("after %d generations the diverged agent 1 (%d steps) is still there: %q", len(m.Fitness), m.Agent.Steps, m.Mutation)
	}
}

// TestGenerationWithoutAStepFails: when no agent can take a step (all
// diverged, actions NaN on a continuous env), the run fails with an error
// instead of repeating the same generation for ever.
func TestGenerationWithoutAStepFails(t *testing.T) {
	for _, selection := range []string{SelectPBT, SelectTournament} {
		cfg := pbtTiny(t, func(c *Config) { c.Env.ID = "Pendulum-v1" })
		if selection == SelectTournament {
			cfg = tiny(t)
			cfg.Env.ID = "Pendulum-v1"
		}
		tr, err := New(cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range tr.members {
			setNaN(m.Agent, true)
		}
		done := make(chan error, 1)
		go func() { _, err := tr.Run(t.Context()); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "no agent took an env step") {
				t.Errorf("%s: err = %v; want one saying no agent took a step", selection, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: the run did not end in 30 s", selection)
		}
	}
}

// TestPBTBurnIn: with pbt.burn_in an agent that has trained fewer steps is
// not replaced however far behind it ranks (Ray Tune's burn_in_period); once
// it has trained them, exploit replaces it as before.
func TestPBTBurnIn(t *testing.T) {
	tr := rankedPBT(t, pbtTiny(t, func(c *Config) { c.PBT.BurnIn = 1000 }))
	for _, m := range tr.members {
		m.Agent.Steps = 999
	}
	if err := tr.exploitExplore(1); err != nil {
		t.Fatal(err)
	}
	if m := tr.members[0]; m.Index != 0 || m.Mutation != "none (pbt: burn-in, 999 of 1000 steps, not ranked)" {
		t.Fatalf("in burn-in: member 0 is %d with %q, want kept", m.Index, m.Mutation)
	}
	for _, m := range tr.members {
		m.Agent.Steps = 1000
	}
	if err := tr.exploitExplore(2); err != nil {
		t.Fatal(err)
	}
	if m := tr.members[0]; m.Index != 4 || !strings.HasPrefix(m.Mutation, "pbt: exploit 1 (40 > 10)") {
		t.Errorf("after burn-in: member 0 is %d with %q, want a copy of agent 1", m.Index, m.Mutation)
	}
}

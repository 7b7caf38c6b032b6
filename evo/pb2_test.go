package evo

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/evolverl/evolve/internal/runtest"
)

// gpData draws n points (t in 1..5, u in [0,1]^2) and y = f(u) plus noise.
func gpData(n int, noise float64, f func(u []float64) float64) (ts []float64, us [][]float64, ys []float64) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range n {
		u := []float64{r.Float64(), r.Float64()}
		ts = append(ts, float64(1+i%5))
		us = append(us, u)
		ys = append(ys, f(u)+noise*r.NormFloat64())
	}
	return ts, us, ys
}

// TestGPPosteriorMatchesTheDenseFormula holds the Cholesky posterior and
// log marginal likelihood against the textbook formulas computed another
// way (an explicit inverse and determinant): mean k*ᵀ K⁻¹ y, variance
// k** − k*ᵀ K⁻¹ k*, log p = −½ yᵀK⁻¹y − ½ log|K| − n/2 log 2π.
func TestGPPosteriorMatchesTheDenseFormula(t *testing.T) {
	ts, us, ys := gpData(12, 0.1, func(u []float64) float64 { return math.Sin(3*u[0]) + u[1] })
	k := gpKernel{Len: 0.4, Var: 1.3, Eps: 0.1, Noise: 0.05}
	g, err := newGP(k, ts, us, ys)
	if err != nil {
		t.Fatal(err)
	}
	n := len(ts)
	K := mat.NewDense(n, n, nil)
	for i := range n {
		for j := range n {
			v := k.at(ts[i], us[i], ts[j], us[j])
			if i == j {
				v += k.Noise
			}
			K.Set(i, j, v)
		}
	}
	var Kinv mat.Dense
	if err := Kinv.Inverse(K); err != nil {
		t.Fatal(err)
	}
	y := mat.NewVecDense(n, ys)
	var a mat.VecDense
	a.MulVec(&Kinv, y)
	wantLL := -0.5*mat.Dot(y, &a) - 0.5*math.Log(mat.Det(K)) - 0.5*float64(n)*math.Log(2*math.Pi)
	if got := g.logLikelihood(); math.Abs(got-wantLL) > 1e-9*math.Abs(wantLL) {
		t.Errorf("log likelihood %v, want %v", got, wantLL)
	}
	for _, x := range [][]float64{{0.5, 0.5}, {0.1, 0.9}, us[3]} {
		for _, tx := range []float64{3, 6} {
			ks := mat.NewVecDense(n, nil)
			for i := range n {
				ks.SetVec(i, k.at(tx, x, ts[i], us[i]))
			}
			var kk mat.VecDense
			kk.MulVec(&Kinv, ks)
			wm, wv := mat.Dot(ks, &a), k.Var-mat.Dot(ks, &kk)
			m, v := g.predict(tx, x)
			if math.Abs(m-wm) > 1e-9 || math.Abs(v-wv) > 1e-9 {
				t.Errorf("at t=%v u=%v: mean, var %v, %v; want %v, %v", tx, x, m, v, wm, wv)
			}
		}
	}
	// The time-varying factor: the same u one generation apart is
	// (1−ε)^½ as similar.
	if got, want := k.at(2, us[0], 3, us[0]), k.Var*math.Sqrt(1-k.Eps); math.Abs(got-want) > 1e-14*want {
		t.Errorf("k one generation apart = %v, want %v", got, want)
	}
}

// TestGPFitPredictsHeldOutPoints fits the kernel to noisy samples of a
// smooth function: the fit's likelihood is at least the start's, and it
// predicts points it did not see within a fifth of y's spread.
func TestGPFitPredictsHeldOutPoints(t *testing.T) {
	f := func(u []float64) float64 { return 2*math.Sin(4*u[0]) - math.Cos(3*u[1]) }
	ts, us, ys := gpData(60, 0.05, f)
	for i := range ts {
		ts[i] = 1 // one generation: the function does not drift
	}
	g, err := fitGP(ts, us, ys)
	if err != nil {
		t.Fatal(err)
	}
	ysd, _ := standardise(ys)
	start, err := newGP(gpFromZ(make([]float64, 4)), ts, us, ysd)
	if err != nil {
		t.Fatal(err)
	}
	if g.logLikelihood() < start.logLikelihood() {
		t.Errorf("fitted log likelihood %v below the start's %v", g.logLikelihood(), start.logLikelihood())
	}
	m, v := meanVar(ys)
	sd := math.Sqrt(v)
	r := rand.New(rand.NewPCG(9, 9))
	se := 0.0
	for range 50 {
		u := []float64{r.Float64(), r.Float64()}
		p, _ := g.predict(1, u)
		d := p*sd + m - f(u)
		se += d * d
	}
	if rmse := math.Sqrt(se / 50); rmse > sd/5 {
		t.Errorf("held-out RMSE %v, want under a fifth of y's sd %v (kernel %+v)", rmse, sd, g.k)
	}
}

// TestGPPendingPointKeepsTheMeanAndShrinksTheVariance checks GP-BUCB's
// step.
func TestGPPendingPointKeepsTheMeanAndShrinksTheVariance(t *testing.T) {
	ts, us, ys := gpData(10, 0.1, func(u []float64) float64 { return u[0] })
	g, err := newGP(gpKernel{Len: 0.3, Var: 1, Eps: 0.05, Noise: 0.01}, ts, us, ys)
	if err != nil {
		t.Fatal(err)
	}
	x := []float64{0.95, 0.05}
	m0, v0 := g.predict(6, x)
	if err := g.addPending(6, x); err != nil {
		t.Fatal(err)
	}
	m1, v1 := g.predict(6, x)
	if math.Abs(m1-m0) > 1e-6 || !(v1 < v0/5) {
		t.Errorf("after a pending point: mean %v -> %v, var %v -> %v; want the mean kept and the variance cut", m0, m1, v0, v1)
	}
	if len(us) != 10 {
		t.Error("addPending changed the caller's slices")
	}
}

// TestPB2ChoosesWhereTheFitnessRisesMost: observations of a fitness change
// that peaks at u = (0.7, 0.3) lead the acquisition there without an
// exploration bonus, and with few observations the second pick of a batch
// goes elsewhere.
func TestPB2ChoosesWhereTheFitnessRisesMost(t *testing.T) {
	peak := []float64{0.7, 0.3}
	ts, us, ys := gpData(80, 0.05, func(u []float64) float64 {
		return math.Exp(-((u[0]-peak[0])*(u[0]-peak[0]) + (u[1]-peak[1])*(u[1]-peak[1])) / 0.05)
	})
	g, err := fitGP(ts, us, ys)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	all := []float64{0, 0}
	one := []float64{1, 1}
	u, _, _ := pb2Choose(g, 6, all, one, 0, r)
	if d := math.Hypot(u[0]-peak[0], u[1]-peak[1]); d > 0.08 {
		t.Errorf("pick %v is %.3f from the peak %v", u, d, peak)
	}
	// Few observations: the bonus for what is not known matters, and the
	// pending first pick takes it away around itself.
	ts, us, ys = ts[:8], us[:8], ys[:8]
	if g, err = fitGP(ts, us, ys); err != nil {
		t.Fatal(err)
	}
	beta := pb2Beta(2, 5)
	first, _, _ := pb2Choose(g, 6, all, one, beta, rand.New(rand.NewPCG(5, 6)))
	if err := g.addPending(6, first); err != nil {
		t.Fatal(err)
	}
	second, _, _ := pb2Choose(g, 6, all, one, beta, rand.New(rand.NewPCG(5, 6)))
	if d := math.Hypot(first[0]-second[0], first[1]-second[1]); d < 0.02 {
		t.Errorf("a batch's two picks %v and %v coincide", first, second)
	}
	// A region keeps the pick in its box, even away from the peak.
	lo, hi := []float64{0.1, 0.6}, []float64{0.3, 0.9}
	in, _, _ := pb2Choose(g, 6, lo, hi, beta, rand.New(rand.NewPCG(8, 8)))
	for j := range in {
		if in[j] < lo[j] || in[j] > hi[j] {
			t.Errorf("pick %v outside the region [%v, %v]", in, lo, hi)
		}
	}
}

// TestUnitMapIsSampleHPsScale checks toUnit and fromUnit on every scale:
// fromUnit inverts toUnit on the range's values, and is monotone.
func TestUnitMapIsSampleHPsScale(t *testing.T) {
	cases := []struct {
		name string
		r    HPRange
	}{
		{"lr", HPRange{Min: 1e-5, Max: 2e-3}},
		{"gamma", HPRange{Min: 0.97, Max: 0.9999}},
		{"batch_size", HPRange{Min: 4, Max: 1024}},
		{"update_epochs", HPRange{Min: 1, Max: 20}},
		{"clip_coef", HPRange{Min: 0.1, Max: 0.4}},
		{"update_epochs", HPRange{Min: 1, Max: 30, Scale: ScaleLog}},
	}
	r := rand.New(rand.NewPCG(7, 7))
	for _, c := range cases {
		prev := math.Inf(-1)
		for i := range 101 {
			u := float64(i) / 100
			v := fromUnit(c.name, c.r, u)
			if v < c.r.Min || v > c.r.Max {
				t.Errorf("%s: fromUnit(%v) = %v outside [%v, %v]", c.name, u, v, c.r.Min, c.r.Max)
			}
			// log1m maps u = 0 to max: monotone either way.
			if c.name != "gamma" && v < prev {
				t.Errorf("%s: fromUnit not increasing at %v", c.name, u)
			}
			prev = v
		}
		for range 200 {
			v := sampleHP(c.name, c.r, r)
			if back := fromUnit(c.name, c.r, toUnit(c.name, c.r, v)); math.Abs(back-v) > 1e-12*max(1, math.Abs(v)) {
				t.Errorf("%s: fromUnit(toUnit(%v)) = %v", c.name, v, back)
			}
		}
	}
}

// TestLogScaleIntegersGiveTheEndsTheirShare: an integer on the log scale
// takes the share of the logarithm that rounds to it, [log(k − ½),
// log(k + ½)], the ends included (drawn from [log min, log max] and rounded,
// max came half as often as max − 1).
func TestLogScaleIntegersGiveTheEndsTheirShare(t *testing.T) {
	r := HPRange{Min: 1, Max: 30, Scale: ScaleLog}
	const n = 300_000
	count := map[float64]int{}
	for i := range n {
		count[fromUnit("update_epochs", r, (float64(i)+0.5)/n)]++
	}
	width := math.Log(30.5) - math.Log(0.5)
	for k := 1.0; k <= 30; k++ {
		want := n * (math.Log(k+0.5) - math.Log(k-0.5)) / width
		if got := float64(count[k]); math.Abs(got-want) > 2 {
			t.Errorf("update_epochs = %v drawn %v times of %d, want %.1f", k, got, n, want)
		}
	}
}

// pb2Tiny is pbtTiny with PB2's explore.
func pb2Tiny(t *testing.T) Config {
	return pbtTiny(t, func(c *Config) {
		c.Population.Fitness, c.Population.Init = FitnessTrain, InitSample
		c.Population.EliteEpisodes = 3
		c.Population.MaxSteps = 5 * 4 * 256
		c.Checkpoint.Keep = 0 // generation 4's is read
		c.PBT.TTest = false
		c.PBT.Explore, c.PBT.PB2Region = ExplorePB2, DefaultPB2Region
	})
}

// TestPB2RunIsReproducibleAndResumes trains a PB2 population: 1 and 2
// workers give the same files, so does a run stopped after generation 3
// and resumed (its observations come back from the checkpoint), and once
// two fitness changes are observed clones explore by the GP.
func TestPB2RunIsReproducibleAndResumes(t *testing.T) {
	dir := sameRunWhateverWorkers(t, pb2Tiny)
	cfg := pb2Tiny(t)
	gp := false
	for _, r := range readMetrics(t, dir)[1:] {
		gp = gp || strings.Contains(strings.Join(r, ","), "explore (pb2")
	}
	if !gp {
		t.Error("no clone explored by PB2's GP in 5 generations")
	}
	b, err := os.ReadFile(filepath.Join(dir, "checkpoints", "gen-000004", populationFile))
	if err != nil {
		t.Fatal(err)
	}
	var pop population
	if err := json.Unmarshal(b, &pop); err != nil {
		t.Fatal(err)
	}
	// Generations 2–4, one for each agent that trained (not idle).
	want := 0
	for _, r := range readMetrics(t, dir)[1:] {
		if g, _ := strconv.Atoi(r[0]); g >= 2 && g <= 4 && r[9] != "NaN" { // loss
			want++
		}
	}
	if want == 4*3 {
		t.Error("no agent idle in generations 2–4: the run does not test PBT's step clock")
	}
	if len(pop.PB2) != want {
		t.Errorf("checkpoint of generation 4 holds %d observations, want %d", len(pop.PB2), want)
	}
	if err := checkPB2Obs(pop.PB2, cfg, 4); err != nil {
		t.Error(err)
	}
	bad := append([]pb2Obs(nil), pop.PB2...)
	bad[0].HP = bad[0].HP[1:]
	if err := checkPB2Obs(bad, cfg, 4); err == nil || !strings.Contains(err.Error(), "pb2 observation 0") {
		t.Errorf("a short observation: err = %v", err)
	}
	if err := checkPB2Obs(pop.PB2, cfg, 3); err == nil {
		t.Error("observations of generation 4 in a checkpoint of generation 3 pass")
	}
}

// BenchmarkPB2Explore measures what PB2 adds to a generation at its
// largest: fitting the GP to pb2MaxObs observations of 9 hyperparameters
// and picking two clones' hyperparameters.
func BenchmarkPB2Explore(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	ts, us, ys := make([]float64, pb2MaxObs), make([][]float64, pb2MaxObs), make([]float64, pb2MaxObs)
	for i := range ts {
		ts[i] = float64(1 + i/8)
		us[i] = make([]float64, 9)
		for j := range us[i] {
			us[i][j] = r.Float64()
		}
		ys[i] = math.Sin(3*us[i][0]) + 0.5*r.NormFloat64()
	}
	lo, hi := make([]float64, 9), make([]float64, 9)
	for j := range hi {
		lo[j], hi[j] = 0.25, 0.75
	}
	for b.Loop() {
		g, err := fitGP(ts, us, ys)
		if err != nil {
			b.Fatal(err)
		}
		for range 2 {
			u, _, _ := pb2Choose(g, 33, lo, hi, pb2Beta(9, 32), r)
			if err := g.addPending(33, u); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// TestPB2ObservesAndFollowsTheModel checks one PB2 step by hand: each
// member adds its fitness change and its hyperparameters, and given
// observations that say a higher lr raised fitness, the copy's lr goes up,
// within pb2_region of its parent's on lr's scale.
func TestPB2ObservesAndFollowsTheModel(t *testing.T) {
	cfg := pb2Tiny(t)
	tr, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	names := cfg.mutableHPs()
	lrAt := slices.Index(names, "lr")
	r := rand.New(rand.NewPCG(4, 4))
	for i := range 60 { // earlier generations: fitness rose with lr
		hp := make([]float64, len(names))
		for j, n := range names {
			hp[j] = fromUnit(n, cfg.HP[n], r.Float64())
		}
		tr.pb2 = append(tr.pb2, pb2Obs{Gen: 1 + i%2, HP: hp, Y: 10 * toUnit("lr", cfg.HP["lr"], hp[lrAt])})
	}
	// One fitness each: this generation adds no observation.
	for i, m := range tr.members {
		f := []float64{10, 40, 30, 20}[i]
		m.Fitness, m.Returns = []float64{f}, []float64{f - 1, f + 1}
	}
	parentLR := tr.members[1].Agent.Config().LR
	if err := tr.exploitExplore(2); err != nil {
		t.Fatal(err)
	}
	if len(tr.pb2) != 60 {
		t.Fatalf("%d observations, want the 60 given", len(tr.pb2))
	}
	c := tr.members[0]
	if c.Parent != 1 || !strings.Contains(c.Mutation, "explore (pb2") {
		t.Fatalf("member 0: parent %d, mutation %q; want a PB2 copy of agent 1", c.Parent, c.Mutation)
	}
	lr := c.Agent.Config().LR
	u0, u1 := toUnit("lr", cfg.HP["lr"], parentLR), toUnit("lr", cfg.HP["lr"], lr)
	if !(u1 > u0+0.1) || u1 > u0+DefaultPB2Region+1e-9 {
		t.Errorf("lr %v -> %v (%.3f -> %.3f of its range): want up, by at most the region %v", parentLR, lr, u0, u1, DefaultPB2Region)
	}
	// The next generation's observations: the change over it (from the
	// parent's fitness for the copy) at the hyperparameters it trained with.
	for i, m := range tr.members {
		m.Fitness = append(m.Fitness, float64(50+i))
		m.genSteps = 256
	}
	tr.pb2Observe(3)
	for i, o := range tr.pb2[60:] {
		m := tr.members[i]
		if o.Gen != 3 || o.Y != m.Fitness[1]-m.Fitness[0] || o.HP[lrAt] != m.Agent.Config().LR {
			t.Errorf("observation of member %d: %+v; want generation 3, y %v, lr %v", i, o, m.Fitness[1]-m.Fitness[0], m.Agent.Config().LR)
		}
	}
	if len(tr.pb2) != 64 {
		t.Errorf("%d observations, want 64", len(tr.pb2))
	}
}

// TestPB2ObservesChangePerEvoSteps: a fitness change over a member's
// generation of 4 × evo_steps (PBT's step clock) is observed at a quarter
// of its size, one over evo_steps or over steps unknown (a checkpoint of
// an earlier build) as it is, and an idle member adds none.
func TestPB2ObservesChangePerEvoSteps(t *testing.T) {
	tr, err := New(pb2Tiny(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	evo := tr.cfg.Population.EvoSteps
	for i, m := range tr.members {
		m.Fitness = []float64{10, 10 + 3.7*float64(i+1)}
		m.genSteps = []int{evo, 4 * evo, 0, 0}[i]
		m.idle = i == 3
	}
	tr.pb2Observe(1)
	if len(tr.pb2) != 3 {
		t.Fatalf("%d observations, want 3 (none of the idle member)", len(tr.pb2))
	}
	for i, o := range tr.pb2 {
		want := tr.members[i].Fitness[1] - 10
		if i == 1 {
			want /= 4
		}
		if o.Y != want {
			t.Errorf("member %d (%d steps) observed %v, want %v", i, tr.members[i].genSteps, o.Y, want)
		}
	}
}

// TestPB2WithIdleAgentsGoesOnAsOneRun: a PB2 run whose agents wait for the
// step clock, finished early and then continued to a larger budget, is the
// run made with the larger budget from the start (the members' gen_steps
// and idle come back from population.json for PB2's observations). Its
// checkpoints record them only where they are not evo_steps.
func TestPB2WithIdleAgentsGoesOnAsOneRun(t *testing.T) {
	const budget = 8 * 4 * 256
	straight := pb2Tiny(t)
	straight.Population.MaxSteps = budget
	if _, err := run(t, straight, Options{}, nil); err != nil {
		t.Fatal(err)
	}
	idle := 0
	for _, r := range readMetrics(t, straight.OutDir)[1:] {
		if r[9] == "NaN" { // loss
			idle++
		}
	}
	if idle == 0 {
		t.Fatal("no agent waited for the step clock: the run does not test it")
	}
	for _, early := range []int{2 * 4 * 256, 4 * 4 * 256} {
		cfg := pb2Tiny(t)
		cfg.Population.MaxSteps = early
		if _, err := run(t, cfg, Options{}, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := resumeTo(t, cfg.OutDir, budget).Run(t.Context()); err != nil {
			t.Fatal(err)
		}
		runtest.SameRun(t, straight.OutDir, cfg.OutDir)
	}
	b, err := os.ReadFile(filepath.Join(straight.OutDir, "checkpoints", "latest"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := decodePopulation(readFile(t, filepath.Join(straight.OutDir, "checkpoints", strings.TrimSpace(string(b)), populationFile)))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range p.Members {
		if m.GenSteps == straight.Population.EvoSteps {
			t.Errorf("member %d: gen_steps %d recorded, want it omitted as evo_steps", m.Index, m.GenSteps)
		}
	}
	bad := p
	bad.Members = slices.Clone(p.Members)
	for _, edit := range []func(*memberJSON){
		func(m *memberJSON) { m.GenSteps = -1 },
		func(m *memberJSON) { m.GenSteps = m.Steps + 1 },
		func(m *memberJSON) { m.GenSteps, m.Idle = 128, true },
	} {
		bad.Members[0] = p.Members[0]
		edit(&bad.Members[0])
		pb, err := json.Marshal(bad)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := decodePopulation(pb); err == nil || !strings.Contains(err.Error(), "gen_steps") {
			t.Errorf("member %+v: err = %v; want one naming gen_steps", bad.Members[0], err)
		}
	}
}

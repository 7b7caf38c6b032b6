package gorgonia

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	G "gorgonia.org/gorgonia"

	"github.com/evolverl/evolve/netconf"
	"github.com/evolverl/evolve/nn"
)

// modelCase is an actor and a critic, with a batch shape to run them on.
type modelCase struct {
	name          string
	actor, critic netconf.Spec
	shared        bool
	rows, steps   int
}

// modelCases covers every encoder kind with a shared and a separate critic. Activations are
// smooth so that finite differences see no kinks; a separate LSTM critic has another size
// than the actor, so a mixed-up state layout shows.
func modelCases() []modelCase {
	var cs []modelCase
	for _, kind := range []netconf.EncoderKind{netconf.EncoderMLP, netconf.EncoderCNN, netconf.EncoderLSTM, netconf.EncoderDict} {
		for _, shared := range []bool{false, true} {
			actor := smallSpec(kind, netconf.Tanh, kind == netconf.EncoderMLP)
			critic := smallSpec(kind, netconf.GELU, false)
			critic.Output, critic.OutputGain, critic.Head.Hidden = 1, netconf.ValueGain, []int{3}
			if kind == netconf.EncoderLSTM {
				critic.LSTM.Hidden, critic.LSTM.Layers = 4, 1
			}
			c := modelCase{name: string(kind) + "/separate", actor: actor, critic: critic, shared: shared, rows: 3, steps: 1}
			if shared {
				c.name = string(kind) + "/shared"
			}
			if kind == netconf.EncoderLSTM {
				c.rows, c.steps = 2*3, 3
			}
			cs = append(cs, c)
		}
	}
	return cs
}

// modelRun is a model with random weights, observations and initial state for its case.
type modelRun struct {
	modelCase
	model  nn.Model
	pa, pc netconf.Params // the critic's head and output only when shared
	batch  nn.Batch
}

func newModelRun(t testing.TB, c modelCase, seed uint64) *modelRun {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	pa, err := netconf.Init(c.actor, rng)
	if err != nil {
		t.Fatal(err)
	}
	pc, err := netconf.Init(c.critic, rng)
	if err != nil {
		t.Fatal(err)
	}
	if c.shared {
		pc = pc.Filter("head.", "out.")
	}
	randomise(pa, rng)
	randomise(pc, rng)
	m, err := Backend{}.NewModel(c.actor, c.critic, c.shared)
	if err != nil {
		t.Fatal(err)
	}
	r := &modelRun{modelCase: c, model: m, pa: pa, pc: pc}
	r.batch = nn.Batch{Actor: pa, Critic: pc, Rows: c.rows, Steps: c.steps,
		Obs: randomInput(rng, c.rows*shapeSize(c.actor.Input))}
	if n := m.StateSize(); n > 0 {
		r.batch.State = randomInput(rng, c.rows/c.steps*n)
		r.batch.Final = make([]float32, len(r.batch.State))
	}
	return r
}

// obsShape is the input shape of rows observations for the builders.
func obsShape(s netconf.Spec, rows int) []int {
	if s.Encoder == netconf.EncoderCNN && !s.Dict() {
		return append([]int{rows}, s.Input...)
	}
	return []int{rows, s.Input[0]}
}

// direct builds the case's networks with the builders alone, runs them on the batch and
// returns the actor's output, the values and the final state, in the model's layout.
func (r *modelRun) direct(t *testing.T) (out, values, final []float32) {
	t.Helper()
	g := G.NewGraph()
	x := NewInput(g, "x", obsShape(r.actor, r.rows)...)
	copy(Data(x), r.batch.Obs)
	a, err := Build(g, r.actor, r.pa, x, Options{Name: "pi", Steps: r.steps})
	if err != nil {
		t.Fatal(err)
	}
	recs := []*Recurrent{a.Recurrent}
	var v *G.Node
	if r.shared {
		if v, _, err = BuildHead(g, r.critic, r.pc, a.Latent, Options{Name: "v"}); err != nil {
			t.Fatal(err)
		}
	} else {
		c, err := Build(g, r.critic, r.pc, x, Options{Name: "v", Steps: r.steps})
		if err != nil {
			t.Fatal(err)
		}
		v = c.Out
		recs = append(recs, c.Recurrent)
	}
	// The state of sequence s: per network with an LSTM, per layer, h then c.
	seqs, stride := r.rows/r.steps, r.model.StateSize()
	for s := range seqs {
		eachStateSlot(recs, s, stride, func(rec *Recurrent, l, off int) {
			h := rec.Hidden
			copy(Data(rec.H0[l])[s*h:(s+1)*h], r.batch.State[off:off+h])
			copy(Data(rec.C0[l])[s*h:(s+1)*h], r.batch.State[off+h:off+2*h])
		})
	}
	m := G.NewTapeMachine(g)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		t.Fatal(err)
	}
	final = make([]float32, seqs*stride)
	for s := range seqs {
		eachStateSlot(recs, s, stride, func(rec *Recurrent, l, off int) {
			h := rec.Hidden
			copy(final[off:off+h], rec.H[l][s*h:(s+1)*h])
			copy(final[off+h:off+2*h], rec.C[l][s*h:(s+1)*h])
		})
	}
	return slices.Clone(Data(a.Out)), slices.Clone(Data(v)), final
}

func TestModelForwardIsWhatTheBuildersCompute(t *testing.T) {
	for _, c := range modelCases() {
		t.Run(c.name, func(t *testing.T) {
			r := newModelRun(t, c, 3)
			out, values, err := r.model.Forward(r.batch)
			if err != nil {
				t.Fatal(err)
			}
			wantOut, wantValues, wantFinal := r.direct(t)
			if !slices.Equal(out, wantOut) {
				t.Errorf("actor output\n%v\nwant\n%v", out, wantOut)
			}
			if !slices.Equal(values, wantValues) {
				t.Errorf("values\n%v\nwant\n%v", values, wantValues)
			}
			if !slices.Equal(r.batch.Final, wantFinal) {
				t.Errorf("final state\n%v\nwant\n%v", r.batch.Final, wantFinal)
			}
			if n := r.model.StateSize(); c.actor.Recurrent() && (n == 0 || slices.Equal(r.batch.Final, r.batch.State)) {
				t.Errorf("state size %d, final state equal to the initial one", n)
			}
		})
	}
}

// loss is Σ out·R + Σ value·Q of one Forward, accumulated in float64.
func (r *modelRun) loss(t *testing.T, R, Q []float64) float64 {
	out, values, err := r.model.Forward(r.batch)
	if err != nil {
		t.Fatal(err)
	}
	l := 0.0
	for i, v := range out {
		l += float64(v) * R[i]
	}
	for i, v := range values {
		l += float64(v) * Q[i]
	}
	return l
}

func TestModelBackwardMatchesFiniteDifferences(t *testing.T) {
	for _, c := range modelCases() {
		t.Run(c.name, func(t *testing.T) {
			r := newModelRun(t, c, 4)
			rng := rand.New(rand.NewPCG(5, 6))
			R, Q := make([]float64, c.rows*c.actor.Output), make([]float64, c.rows)
			for i := range R {
				R[i] = rng.NormFloat64()
			}
			for i := range Q {
				Q[i] = rng.NormFloat64()
			}
			ga, gc := zerosLike(r.pa), zerosLike(r.pc)
			if _, _, err := r.model.Forward(r.batch); err != nil {
				t.Fatal(err)
			}
			if err := r.model.Backward(f32(R), f32(Q), ga, gc); err != nil {
				t.Fatal(err)
			}
			// Richardson's extrapolation of central differences, (4·D(h) − D(2h)) / 3, is
			// exact to O(h⁴), so h can be large: float32 rounding of the loss, divided by h,
			// still leaves differences off by up to ~5e-5, which is what tol allows relative to
			// a tensor's largest gradient (at least 1e-2). A wrong gradient is off by its size.
			const h, tol = 1e-2, 1e-2
			central := func(d []float32, j int, h float32) float64 {
				v := d[j]
				d[j] = v + h
				lp := r.loss(t, R, Q)
				d[j] = v - h
				lm := r.loss(t, R, Q)
				d[j] = v
				return (lp - lm) / float64(2*h)
			}
			worst := 0.0
			for _, side := range []struct{ p, g netconf.Params }{{r.pa, ga}, {r.pc, gc}} {
				for i, tensor := range side.p {
					fd := make([]float64, len(tensor.Data))
					for j := range tensor.Data {
						fd[j] = (4*central(tensor.Data, j, h) - central(tensor.Data, j, 2*h)) / 3
					}
					e := relErr(f64(side.g[i].Data), fd, 1e-2)
					worst = max(worst, e)
					if e > tol {
						t.Errorf("%s: Backward and central differences differ, relative error %.2g\n%v\n%v", tensor.Name, e, side.g[i].Data, fd)
					}
				}
			}
			t.Logf("worst relative error %.2g", worst)
		})
	}
}

func zerosLike(p netconf.Params) netconf.Params {
	z := p.Clone()
	for _, t := range z {
		clear(t.Data)
	}
	return z
}

func f64(d []float32) []float64 {
	o := make([]float64, len(d))
	for i, x := range d {
		o[i] = float64(x)
	}
	return o
}

// TestModelBackwardAddsOnceAndForgets: Backward adds into the caller's gradients, and the
// graph's own gradients never carry over to the next call.
func TestModelBackwardAddsOnceAndForgets(t *testing.T) {
	for _, c := range modelCases() {
		t.Run(c.name, func(t *testing.T) {
			r := newModelRun(t, c, 7)
			rng := rand.New(rand.NewPCG(8, 9))
			dOut, dValues := randomInput(rng, c.rows*c.actor.Output), randomInput(rng, c.rows)
			ga, gc := zerosLike(r.pa), zerosLike(r.pc)
			step := func() {
				if _, _, err := r.model.Forward(r.batch); err != nil {
					t.Fatal(err)
				}
				if err := r.model.Backward(dOut, dValues, ga, gc); err != nil {
					t.Fatal(err)
				}
			}
			step()
			once := []netconf.Params{ga.Clone(), gc.Clone()}
			before := []netconf.Params{r.pa.Clone(), r.pc.Clone()}
			step()
			if err := r.model.Backward(dOut, dValues, ga, gc); err != nil { // a second Backward of the same Forward
				t.Fatal(err)
			}
			for k, g := range []netconf.Params{ga, gc} {
				for i, tensor := range g {
					for j, v := range tensor.Data {
						if want := 3 * once[k][i].Data[j]; math.Abs(float64(v-want)) > 1e-5*max(1, math.Abs(float64(want))) {
							t.Fatalf("%s[%d]: %v after three Backwards, want 3 × %v", tensor.Name, j, v, once[k][i].Data[j])
						}
					}
				}
			}
			if !reflect.DeepEqual([]netconf.Params{r.pa, r.pc}, before) {
				t.Fatal("Forward or Backward wrote into the caller's weights")
			}
		})
	}
}

func TestModelReadsTheWeightsOfEveryForward(t *testing.T) {
	r := newModelRun(t, modelCases()[0], 1)
	out, values, err := r.model.Forward(r.batch)
	if err != nil {
		t.Fatal(err)
	}
	out, values = slices.Clone(out), slices.Clone(values)
	other := r.batch
	other.Actor, other.Critic = r.pa.Clone(), r.pc.Clone()
	for _, p := range []netconf.Params{other.Actor, other.Critic} {
		for i := range p.Tensor("out.bias").Data {
			p.Tensor("out.bias").Data[i] += 1
		}
	}
	out2, values2, err := r.model.Forward(other)
	if err != nil {
		t.Fatal(err)
	}
	for i := range out {
		if math.Abs(float64(out2[i]-out[i]-1)) > 1e-5 {
			t.Fatalf("output %d: %v with out.bias + 1, %v before", i, out2[i], out[i])
		}
	}
	for i := range values {
		if math.Abs(float64(values2[i]-values[i]-1)) > 1e-5 {
			t.Fatalf("value %d: %v with out.bias + 1, %v before", i, values2[i], values[i])
		}
	}
}

// TestModelSingleStepsCarryTheState: stepping an LSTM model one step at a time, with Final
// written over State, gives what one unrolled forward over all steps gives.
func TestModelSingleStepsCarryTheState(t *testing.T) {
	for _, c := range modelCases() {
		if !c.actor.Recurrent() {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			r := newModelRun(t, c, 11)
			state := slices.Clone(r.batch.State)
			out, values, err := r.model.Forward(r.batch)
			if err != nil {
				t.Fatal(err)
			}
			out, values = slices.Clone(out), slices.Clone(values)
			seqs := c.rows / c.steps
			in := shapeSize(c.actor.Input)
			for step := range c.steps {
				b := r.batch
				b.Rows, b.Steps = seqs, 1
				b.Obs = r.batch.Obs[step*seqs*in : (step+1)*seqs*in]
				b.State, b.Final = state, state
				o, v, err := r.model.Forward(b)
				if err != nil {
					t.Fatal(err)
				}
				no := seqs * c.actor.Output
				if d := maxAbsDiff(o, out[step*no:(step+1)*no]); d > 1e-6 {
					t.Fatalf("step %d: actor output differs from the unrolled forward by %g", step, d)
				}
				if d := maxAbsDiff(v, values[step*seqs:(step+1)*seqs]); d > 1e-6 {
					t.Fatalf("step %d: values differ from the unrolled forward by %g", step, d)
				}
			}
			if d := maxAbsDiff(state, r.batch.Final); d > 1e-6 {
				t.Fatalf("carried state differs from the unrolled forward's final state by %g", d)
			}
		})
	}
}

func TestModelBatchSizesShareWeights(t *testing.T) {
	r := newModelRun(t, modelCases()[2], 2) // CNN, separate critic
	big, _, err := r.model.Forward(r.batch)
	if err != nil {
		t.Fatal(err)
	}
	big = slices.Clone(big)
	one := r.batch
	one.Rows, one.Obs = 1, r.batch.Obs[:shapeSize(r.actor.Input)]
	small, _, err := r.model.Forward(one)
	if err != nil {
		t.Fatal(err)
	}
	if d := maxAbsDiff(small, big[:r.actor.Output]); d > 1e-6 {
		t.Fatalf("row 0 differs between a batch of 1 and of %d by %g", r.rows, d)
	}
}

func TestNewModelRejectsMismatchedSpecs(t *testing.T) {
	actor := smallSpec(netconf.EncoderMLP, netconf.ReLU, false)
	critic := actor.Clone()
	critic.Output = 1
	cases := []struct {
		name   string
		edit   func(a, c *netconf.Spec)
		shared bool
		want   string
	}{
		{"critic with two outputs", func(_, c *netconf.Spec) { c.Output = 2 }, false, "critic: 2 outputs, want 1"},
		{"invalid actor", func(a, _ *netconf.Spec) { a.Output = 0 }, false, "actor: output 0"},
		{"shared critic on another latent", func(_, c *netconf.Spec) { c.Latent.Size = 4 }, true, "critic head reads a latent of 4, the actor's encoder gives 3"},
		{"separate critic on other observations", func(_, c *netconf.Spec) { c.Input = []int{4} }, false, "a separate critic reads the actor's observations"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, c := actor.Clone(), critic.Clone()
			tc.edit(&a, &c)
			if _, err := (Backend{}).NewModel(a, c, tc.shared); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("NewModel: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestModelRejectsBadBatches(t *testing.T) {
	var lstm modelCase
	for _, c := range modelCases() {
		if c.actor.Recurrent() && !c.shared {
			lstm = c
		}
	}
	r := newModelRun(t, lstm, 1)
	cases := []struct {
		name string
		edit func(b *nn.Batch)
		want string
	}{
		{"short obs", func(b *nn.Batch) { b.Obs = b.Obs[1:] }, "batch obs has 17 values, want 6 rows"},
		{"rows not in steps", func(b *nn.Batch) { b.Rows = 5 }, "batch of 5 rows in 3 steps"},
		{"short state", func(b *nn.Batch) { b.State = b.State[1:] }, "batch state has 39 values and final 40, want 2 sequences × 20"},
		{"missing weight", func(b *nn.Batch) { b.Critic = b.Critic.Filter("encoder.", "latent.", "head.") }, `critic weights: param "out.weight": missing`},
		{"weight of another shape", func(b *nn.Batch) {
			b.Actor = b.Actor.Clone()
			b.Actor.Tensor("latent.bias").Shape = []int{1, 3}
		}, `actor weights: param "latent.bias": shape [1 3]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := r.batch
			tc.edit(&b)
			if _, _, err := r.model.Forward(b); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Forward: %v, want an error containing %q", err, tc.want)
			}
		})
	}
	m, _ := Backend{}.NewModel(lstm.actor, lstm.critic, false)
	ga, gc := zerosLike(r.pa), zerosLike(r.pc)
	if err := m.Backward(nil, nil, ga, gc); err == nil || !strings.Contains(err.Error(), "without a successful forward") {
		t.Fatalf("Backward before Forward: %v", err)
	}
	if _, _, err := r.model.Forward(r.batch); err != nil {
		t.Fatal(err)
	}
	dOut, dValues := make([]float32, lstm.rows*lstm.actor.Output), make([]float32, lstm.rows)
	if err := r.model.Backward(dOut[1:], dValues, ga, gc); err == nil || !strings.Contains(err.Error(), "gradients of 11 outputs") {
		t.Fatalf("Backward with a short dOut: %v", err)
	}
	if err := r.model.Backward(dOut, dValues, ga.Filter("encoder."), gc); err == nil || !strings.Contains(err.Error(), `actor gradients: param "latent.weight": missing`) {
		t.Fatalf("Backward into incomplete gradients: %v", err)
	}
}

func TestBackendIsRegistered(t *testing.T) {
	b, err := nn.Lookup(Name)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := b.(Backend); !ok {
		t.Fatalf("nn.Lookup(%q) = %T, want Backend", Name, b)
	}
}

// TestModelsBuildConcurrently builds and runs models in parallel goroutines; run with -race.
func TestModelsBuildConcurrently(t *testing.T) {
	cases := modelCases()
	var wg sync.WaitGroup
	errs := make([]error, len(cases))
	runs := make([]*modelRun, len(cases))
	for i, c := range cases {
		runs[i] = newModelRun(t, c, uint64(i))
		runs[i].model, _ = Backend{}.NewModel(c.actor, c.critic, c.shared) // no graph yet
	}
	for i := range cases {
		wg.Go(func() { _, _, errs[i] = runs[i].model.Forward(runs[i].batch) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("%s: %v", cases[i].name, err)
		}
	}
}

// eachStateSlot calls f for every LSTM layer of sequence s in the model's
// state layout (per network with an LSTM, per layer, h then c), with the
// offset of the layer's h in a state of stride floats per sequence.
func eachStateSlot(recs []*Recurrent, s, stride int, f func(rec *Recurrent, l, off int)) {
	off := s * stride
	for _, rec := range recs {
		if rec == nil {
			continue
		}
		for l := range rec.Layers {
			f(rec, l, off)
			off += 2 * rec.Hidden
		}
	}
}

package agent

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/internal/bufs"
	"github.com/evolverl/evolve/netconf"
	"github.com/evolverl/evolve/nn"
)

// Random Network Distillation (Burda, Edwards, Storkey & Klimov 2019), as
// their PPO uses it:
//
//   - observations are normalised by running statistics of their own
//     (updated with each rollout's next observations, then applied) and
//     clipped to ±5;
//   - the intrinsic reward of a transition is ½‖f̂(x') − f(x')‖² for its
//     next observation x', f a fixed random network and f̂ a predictor
//     trained to match it, so that it is large where f̂ has seen little;
//   - it is divided by the running standard deviation of the intrinsic
//     discounted returns (per env, never reset: the intrinsic return is
//     non-episodic, since a novel state is worth reaching whatever ends an
//     episode);
//   - a second critic V_int learns that return, and its GAE advantages,
//     with rnd_gamma and no episode ends, are added to the extrinsic ones:
//     A = rnd_ext_coef·A_ext + rnd_coef·A_int;
//   - after the PPO update, the predictor and V_int take update_epochs
//     passes of minibatches over the rollout with their own Adam at the
//     agent's rate, the predictor on a random rnd_update_proportion of the
//     rows.
//
// The three networks are MLPs of two hidden layers (rnd_hidden, ReLU) over
// the flat observation, built from the nn layers, whatever the agent's
// encoder; they are saved in the agent file and inherited by clones.
const rndObsClip = 5

// rndSettings are RND's settings with the defaults filled in.
type rndSettings struct {
	coef, ext, gamma, prop float64
	hidden, embed          int
}

func (c Config) rnd() rndSettings {
	or := func(x, d float64) float64 {
		if x == 0 {
			return d
		}
		return x
	}
	s := rndSettings{coef: c.RNDCoef, ext: or(c.RNDExtCoef, 2), gamma: or(c.RNDGamma, 0.99),
		prop: or(c.RNDUpdateProportion, 0.25), hidden: c.RNDHidden, embed: c.RNDEmbed}
	if s.hidden == 0 {
		s.hidden = 64
	}
	if s.embed == 0 {
		s.embed = 64
	}
	return s
}

// rndOn reports whether RND is on.
func (c Config) rndOn() bool { return c.RNDCoef > 0 }

// validateRND checks the rnd_* keys: all of them 0 (their defaults) unless
// rnd_coef turns RND on.
func (c Config) validateRND() []error {
	var errs []error
	bad := func(key string, v any, want string) {
		errs = append(errs, fmt.Errorf("%s = %v: want %s", key, v, want))
	}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	if !(c.RNDCoef >= 0) || !finite(c.RNDCoef) {
		bad("rnd_coef", c.RNDCoef, ">= 0 (0 turns RND off)")
	}
	if !(c.RNDExtCoef >= 0) || !finite(c.RNDExtCoef) {
		bad("rnd_ext_coef", c.RNDExtCoef, "> 0 (0: 2)")
	}
	if !(c.RNDGamma >= 0 && c.RNDGamma < 1) {
		bad("rnd_gamma", c.RNDGamma, "in (0, 1) (0: 0.99)")
	}
	if !(c.RNDUpdateProportion >= 0 && c.RNDUpdateProportion <= 1) {
		bad("rnd_update_proportion", c.RNDUpdateProportion, "in (0, 1] (0: 0.25)")
	}
	for _, k := range []struct {
		key string
		v   int
	}{{"rnd_hidden", c.RNDHidden}, {"rnd_embed", c.RNDEmbed}} {
		if k.v < 0 || k.v > 4096 {
			bad(k.key, k.v, "1 … 4096 (0: 64)")
		}
	}
	if c.rndOn() && c.Advantage == AdvantageVTrace {
		errs = append(errs, errors.New(`rnd_coef > 0 with advantage = "vtrace": RND's advantages are GAE's ("gae" or "mc")`))
	}
	if c.rndOn() {
		return errs
	}
	for _, k := range []struct {
		key string
		set bool
	}{{"rnd_ext_coef", c.RNDExtCoef != 0}, {"rnd_gamma", c.RNDGamma != 0}, {"rnd_hidden", c.RNDHidden != 0},
		{"rnd_embed", c.RNDEmbed != 0}, {"rnd_update_proportion", c.RNDUpdateProportion != 0}} {
		if k.set {
			errs = append(errs, fmt.Errorf("%s is set, but RND is off: set rnd_coef > 0 to turn it on", k.key))
		}
	}
	return errs
}

// rndModule is an agent's RND state: the networks, the predictor's and
// the intrinsic critic's optimizer, and the running statistics.
type rndModule struct {
	target, predictor, critic netconf.Params
	adam                      *Adam        // the predictor's tensors, then the critic's
	obs                       *RunningNorm // of raw observations
	ret                       *RunningNorm // of intrinsic discounted returns (one value)
	work                      *rndWork     // built on first use; never saved or cloned
}

// rndWork holds RND's networks and the buffers of one rollout, all reused.
type rndWork struct {
	tNet, pNet, cNet *nn.Net
	gPred, gCrit     netconf.Params
	params, grads    [][]float32
	// The rollout's raw observations and next observations [T·N·obs], and
	// the normalised forms of those and of the observations after it [N·obs].
	cur, next     []float32
	xc, xn, xa    []float32
	tOut          []float32 // f(x') of every row [T·N·embed]
	rew, val, adv []float32 // [T·N]: intrinsic rewards, V_int, advantages
	ret           []float32 // [T·N]: V_int's targets
	disc          []float64 // [T·N]: the discounted returns of the rollout
	idx           []int
	mx, mt, mr    []float32 // a minibatch's inputs and targets
	dOut, dVal    []float32 // the gradients of its outputs
	keep          []bool    // the rows the predictor learns from
}

// rndSpec is the MLP of an RND network: two hidden layers of hidden ReLU
// units over obs inputs, out outputs.
func rndSpec(obs, hidden, out int) netconf.Spec {
	mlp := netconf.MLP{Hidden: []int{hidden}, Activation: netconf.ReLU, MinLayers: 1, MaxLayers: 1, MinNodes: hidden, MaxNodes: hidden}
	head := mlp
	head.Hidden, head.MinLayers = []int{}, 0
	return netconf.Spec{Encoder: netconf.EncoderMLP, MLP: &mlp, Latent: netconf.Latent{Size: hidden, Min: hidden, Max: hidden},
		Head: head, Input: []int{obs}, Output: out, OutputGain: 1}
}

// specs returns the target's (and predictor's) spec and the critic's.
func (s rndSettings) specs(obs int) (embed, value netconf.Spec) {
	return rndSpec(obs, s.hidden, s.embed), rndSpec(obs, s.hidden, 1)
}

// RNDParamCounts returns the weights of the RND networks an agent of
// config c has for observations of obs values: the fixed target's, and the
// predictor's and the intrinsic critic's, which train (with gradients and
// Adam's moments); 0, 0 without RND.
func RNDParamCounts(c Config, obs int) (target, trained int64, err error) {
	if !c.rndOn() {
		return 0, 0, nil
	}
	es, vs := c.rnd().specs(obs)
	ne, err1 := netconf.ParamCount(es)
	nv, err2 := netconf.ParamCount(vs)
	if err := errors.Join(err1, err2); err != nil {
		return 0, 0, err
	}
	return ne, ne + nv, nil
}

// newRND returns a fresh RND module for observations of size obs, its
// weights drawn from rng.
func newRND(obs int, s rndSettings, lr float64, rng *rand.Rand) (*rndModule, error) {
	es, vs := s.specs(obs)
	m := &rndModule{obs: NewRunningNorm(obs), ret: NewRunningNorm(1)}
	var err error
	for _, p := range []struct {
		dst  *netconf.Params
		spec netconf.Spec
	}{{&m.target, es}, {&m.predictor, es}, {&m.critic, vs}} {
		if *p.dst, err = netconf.Init(p.spec, rng); err != nil {
			return nil, fmt.Errorf("rnd: %w", err)
		}
	}
	m.adam = NewAdam(lr, m.sizes())
	return m, nil
}

// eachRNDTensor calls f for every tensor of the module with its agent-file
// name: the trained ones (predictor, critic) first, in the optimizer's
// order, then the target's.
func (m *rndModule) eachTensor(f func(name string, shape []int, data *[]float32, trained bool)) {
	for _, p := range []struct {
		prefix  string
		params  netconf.Params
		trained bool
	}{{"rnd.predictor.", m.predictor, true}, {"rnd.critic.", m.critic, true}, {"rnd.target.", m.target, false}} {
		for i := range p.params {
			f(p.prefix+p.params[i].Name, p.params[i].Shape, &p.params[i].Data, p.trained)
		}
	}
}

// trained returns the trained tensors' data, in the optimizer's order.
func (m *rndModule) trained() [][]float32 {
	var out [][]float32
	m.eachTensor(func(_ string, _ []int, d *[]float32, trained bool) {
		if trained {
			out = append(out, *d)
		}
	})
	return out
}

func (m *rndModule) sizes() []int { return sizesOf(m.trained()) }

// clone returns a deep copy without the work buffers.
func (m *rndModule) clone() *rndModule {
	c := &rndModule{target: m.target.Clone(), predictor: m.predictor.Clone(), critic: m.critic.Clone(),
		obs: m.obs.clone(), ret: m.ret.clone()}
	c.adam = &Adam{LR: m.adam.LR, Beta1: m.adam.Beta1, Beta2: m.adam.Beta2, Eps: m.adam.Eps, Step: m.adam.Step,
		M: cloneSlices(m.adam.M), V: cloneSlices(m.adam.V)}
	return c
}

func (r *RunningNorm) clone() *RunningNorm {
	return &RunningNorm{Mean: slices.Clone(r.Mean), Var: slices.Clone(r.Var), Count: r.Count}
}

// nets returns the work buffers with the networks, building them first.
func (m *rndModule) nets(s rndSettings, obs int) (*rndWork, error) {
	if m.work != nil {
		return m.work, nil
	}
	es, vs := s.specs(obs)
	w := &rndWork{}
	var err error
	for _, n := range []struct {
		dst  **nn.Net
		spec netconf.Spec
	}{{&w.tNet, es}, {&w.pNet, es}, {&w.cNet, vs}} {
		if *n.dst, err = nn.New(n.spec); err != nil {
			return nil, fmt.Errorf("rnd networks: %w", err)
		}
	}
	w.gPred, w.gCrit = zerosLike(m.predictor), zerosLike(m.critic)
	w.params = m.trained()
	for _, g := range []netconf.Params{w.gPred, w.gCrit} {
		for _, t := range g {
			w.grads = append(w.grads, t.Data)
		}
	}
	m.work = w
	return w, nil
}

// rndNets returns RND's settings and its networks and buffers.
func (a *PPO) rndNets() (rndSettings, *rndWork, error) {
	s := a.cfg.rnd()
	w, err := a.rnd.nets(s, a.obsSpace.FlatSize())
	return s, w, err
}

// rndStep stores step t's raw observations and next observations (an
// ended episode's final observation where the env gives it).
func (a *PPO) rndStep(t int, cur []float32, res *envs.StepResult) error {
	_, w, err := a.rndNets()
	if err != nil {
		return err
	}
	size := a.obsSpace.FlatSize()
	n := a.roll.buf.Envs
	rows := a.roll.buf.Steps * n
	w.cur = bufs.Grow(w.cur, rows*size)
	w.next = bufs.Grow(w.next, rows*size)
	copy(w.cur[t*n*size:], cur)
	for i := range n {
		src := res.Obs[i*size : (i+1)*size]
		if res.Done(i) && res.FinalObs[i] != nil {
			src = res.FinalObs[i]
		}
		copy(w.next[(t*n+i)*size:], src)
	}
	return nil
}

// rndNormalize writes clip((x − mean)/std, ±5) of src into dst, grown.
func (m *rndModule) normalize(dst, src []float32) []float32 {
	dst = bufs.Grow(dst, len(src))
	n := len(m.obs.Mean)
	for k, x := range src {
		i := k % n
		z := (float64(x) - m.obs.Mean[i]) / math.Sqrt(m.obs.Var[i]+1e-8)
		dst[k] = float32(max(-rndObsClip, min(rndObsClip, z)))
	}
	return dst
}

// rndAdvantages computes the rollout's intrinsic rewards, V_int and their
// advantages, and adds them into the buffer's advantages (which must hold
// the extrinsic ones). after holds the raw observations that follow the
// rollout. It returns the mean normalised intrinsic reward. It is one
// function because its steps (predictor errors, the reward's running
// normalisation, V_int and GAE over the same rows) share their buffers and
// must run in this order.
func (a *PPO) rndAdvantages(after []float32) (float64, error) {
	s, w, err := a.rndNets()
	if err != nil {
		return 0, err
	}
	m, size := a.rnd, a.obsSpace.FlatSize()
	buf := a.roll.buf
	n, T := buf.Envs, buf.Steps
	rows := T * n
	m.obs.Update(w.next[:rows*size])
	w.xc = m.normalize(w.xc, w.cur[:rows*size])
	w.xn = m.normalize(w.xn, w.next[:rows*size])
	w.xa = m.normalize(w.xa, after)

	tOut, err := w.tNet.Forward(m.target, w.xn, rows, nil)
	if err != nil {
		return 0, fmt.Errorf("rnd target: %w", err)
	}
	w.tOut = append(w.tOut[:0], tOut[:rows*s.embed]...)
	pOut, err := w.pNet.Forward(m.predictor, w.xn, rows, nil)
	if err != nil {
		return 0, fmt.Errorf("rnd predictor: %w", err)
	}
	w.rew = bufs.Grow(w.rew, rows)
	for r := range rows {
		e := 0.0
		for k := range s.embed {
			d := float64(pOut[r*s.embed+k] - w.tOut[r*s.embed+k])
			e += d * d
		}
		w.rew[r] = float32(e / 2)
	}
	// Each env's intrinsic return runs on across episodes and rollouts (of
	// one vector env: a new one, as each generation's, starts from 0, so
	// that a resumed run continues exactly).
	r := a.roll
	if len(r.rndRet) != n {
		r.rndRet = make([]float64, n)
	}
	w.disc = slices.Grow(w.disc[:0], rows)
	for t := range T {
		for i := range n {
			r.rndRet[i] = r.rndRet[i]*s.gamma + float64(w.rew[t*n+i])
			w.disc = append(w.disc, r.rndRet[i])
		}
	}
	updateNorm(m.ret, w.disc)
	std := math.Sqrt(m.ret.Var[0] + 1e-8)
	mean := 0.0
	for r := range rows {
		w.rew[r] = float32(float64(w.rew[r]) / std)
		mean += float64(w.rew[r])
	}

	val, err := w.cNet.Forward(m.critic, w.xc, rows, nil)
	if err != nil {
		return 0, fmt.Errorf("rnd critic: %w", err)
	}
	w.val = append(w.val[:0], val[:rows]...)
	boot, err := w.cNet.Forward(m.critic, w.xa, n, nil)
	if err != nil {
		return 0, fmt.Errorf("rnd critic: %w", err)
	}
	// GAE without episode ends.
	w.adv, w.ret = bufs.Grow(w.adv, rows), bufs.Grow(w.ret, rows)
	lam := a.cfg.GAELambda
	for i := range n {
		last := 0.0
		for t := T - 1; t >= 0; t-- {
			j := t*n + i
			next := float64(boot[i])
			if t+1 < T {
				next = float64(w.val[j+n])
			}
			delta := float64(w.rew[j]) + s.gamma*next - float64(w.val[j])
			last = delta + s.gamma*lam*last
			w.adv[j] = float32(last)
			w.ret[j] = float32(last + float64(w.val[j]))
		}
	}
	for j := range rows {
		buf.Advantages[j] = float32(s.ext*float64(buf.Advantages[j]) + s.coef*float64(w.adv[j]))
	}
	return mean / float64(rows), nil
}

// rndLearn trains the predictor and the intrinsic critic on the rollout
// rndAdvantages last saw: update_epochs passes of shuffled minibatches of
// batch_size rows, each one Adam step on ½·mean over the chosen rows of
// the mean squared prediction error plus vf_coef·½·mean (V_int − R_int)²,
// its gradient clipped to max_grad_norm. It returns the mean loss.
func (a *PPO) rndLearn() (float64, error) {
	s, w, err := a.rndNets()
	if err != nil {
		return 0, err
	}
	m := a.rnd
	rows := a.roll.buf.Steps * a.roll.buf.Envs
	mb := min(a.cfg.BatchSize, rows)
	if cap(w.idx) < rows {
		w.idx = make([]int, rows)
	}
	w.idx = w.idx[:rows]
	m.adam.LR = a.adam.LR
	total, steps := 0.0, 0
	for range a.cfg.UpdateEpochs {
		for i := range w.idx {
			w.idx[i] = i
		}
		a.rng.Shuffle(rows, func(i, j int) { w.idx[i], w.idx[j] = w.idx[j], w.idx[i] })
		for lo := 0; lo+mb <= rows; lo += mb {
			loss, err := a.rndStepOn(w, s, w.idx[lo:lo+mb])
			if err != nil {
				return 0, err
			}
			total += loss
			steps++
		}
	}
	if steps == 0 {
		return 0, nil
	}
	return total / float64(steps), nil
}

// rndStepOn takes one optimizer step on the rows idx, the predictor
// learning from each with probability rnd_update_proportion.
func (a *PPO) rndStepOn(w *rndWork, s rndSettings, idx []int) (float64, error) {
	keep := bufs.Grow(w.keep, len(idx))
	w.keep = keep
	for k := range keep {
		keep[k] = a.rng.Float64() < s.prop
	}
	loss, err := a.rndLossGrad(w, s, idx, keep)
	if err != nil {
		return 0, err
	}
	clipGradNorm(w.grads, a.cfg.MaxGradNorm)
	a.rnd.adam.Update(w.params, w.grads)
	return loss, nil
}

// rndLossGrad returns the loss of RND's predictor and intrinsic critic on
// the rows idx (the predictor's on those with keep set) and writes its
// gradient into w.grads: ½·mean over kept rows and embedding units of
// (f̂(x') − f(x'))², plus vf_coef·½·mean (V_int(x) − R_int)².
func (a *PPO) rndLossGrad(w *rndWork, s rndSettings, idx []int, keep []bool) (float64, error) {
	m := a.rnd
	size := a.obsSpace.FlatSize()
	b := len(idx)
	w.mx = bufs.Grow(w.mx, b*size)
	w.mt = bufs.Grow(w.mt, b*s.embed)
	w.mr = bufs.Grow(w.mr, b)
	for k, j := range idx {
		copy(w.mx[k*size:(k+1)*size], w.xn[j*size:(j+1)*size])
		copy(w.mt[k*s.embed:(k+1)*s.embed], w.tOut[j*s.embed:(j+1)*s.embed])
		w.mr[k] = w.ret[j]
	}
	for _, g := range w.grads {
		clear(g)
	}
	chosen := 0
	for _, k := range keep {
		if k {
			chosen++
		}
	}
	loss := 0.0
	if chosen > 0 {
		pOut, err := w.pNet.Forward(m.predictor, w.mx, b, nil)
		if err != nil {
			return 0, err
		}
		w.dOut = bufs.Grow(w.dOut, b*s.embed)
		clear(w.dOut)
		scale := 1 / float64(chosen*s.embed)
		for k := range b {
			if !keep[k] {
				continue
			}
			for e := range s.embed {
				d := float64(pOut[k*s.embed+e] - w.mt[k*s.embed+e])
				loss += 0.5 * d * d * scale
				w.dOut[k*s.embed+e] = float32(d * scale)
			}
		}
		if err := w.pNet.Backward(m.predictor, w.gPred, w.dOut); err != nil {
			return 0, err
		}
	}
	for k, j := range idx {
		copy(w.mx[k*size:(k+1)*size], w.xc[j*size:(j+1)*size])
	}
	val, err := w.cNet.Forward(m.critic, w.mx, b, nil)
	if err != nil {
		return 0, err
	}
	w.dVal = bufs.Grow(w.dVal, b)
	vf := a.cfg.VFCoef / float64(b)
	for k := range b {
		d := float64(val[k] - w.mr[k])
		loss += vf * 0.5 * d * d
		w.dVal[k] = float32(vf * d)
	}
	if err := w.cNet.Backward(m.critic, w.gCrit, w.dVal); err != nil {
		return 0, err
	}
	return loss, nil
}

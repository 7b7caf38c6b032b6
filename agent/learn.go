package agent

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/evolverl/evolve/buffer"
	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/internal/bufs"
)

// TrainStats summarise a call to Train.
type TrainStats struct {
	Steps    int     // env steps collected
	Episodes int     // episodes finished
	Return   float64 // mean return of the finished episodes (NaN if none)
	// Returns lists the finished episodes' returns in the order they ended
	// (episodes ending on the same step in env order).
	Returns []float64
	Last    Stats // the last update
}

// rollout is the collection in progress: the vector env, its current
// observations and masks, recurrent states and the buffer.
type rollout struct {
	vec    *envs.Vector
	obs    []float32 // raw current observations [N][obs]
	masks  [][]bool  // current masks, views of copies owned here
	mbuf   [][]bool
	state  []float32 // recurrent state per env
	ret    []float64 // normalize_reward: each env's discounted return so far
	raw    []float64 // normalize_reward: one step's raw rewards
	buf    *buffer.Rollout
	out    actOut
	xfinal []float32
	fout   actOut

	// With a lagged actor (actor_lag): the weights it acts with, and for
	// V-trace the truncated episodes' preprocessed final observations with
	// their indices in the buffer, the learner's log-probabilities and the
	// log importance weights.
	lag            actorLag
	finObs         []float32
	finIdx         []int
	piLogp, logRho []float32

	// With RND: each env's intrinsic discounted return so far.
	rndRet []float64
	// With PPO+D: the replays and the demos of this vector, and the
	// critic's values of replayed rows.
	demo *demoState
	dout actOut
}

// Train collects rollouts of learn_step transitions from vec and updates
// the agent after each, until at least steps env steps have been collected
// in this call (whole rollouts). The first call resets vec with a seed drawn
// from the agent's RNG; later calls continue where the last one stopped, so
// vec must stay with this agent. ctx is checked between rollouts and
// between an update's minibatches: a cancelled update stops part-way
// (every minibatch step taken is whole) and Train returns ctx's error.
// Once ctx ends, vec is interrupted (envs.InterruptWhenDone): a step in
// progress of an env that can be interrupted fails, and vec is unusable.
func (a *PPO) Train(ctx context.Context, vec *envs.Vector, steps int) (TrainStats, error) {
	var ts TrainStats
	if vec == nil {
		return ts, errors.New("train: no env vector")
	}
	if err := a.startRollout(vec); err != nil {
		return ts, err
	}
	// An env that blocks (a gym: env's Python child) must not hold a
	// cancelled run for its timeout.
	defer envs.InterruptWhenDone(ctx, vec)()
	retSum := 0.0
	for ts.Steps < steps {
		if err := ctx.Err(); err != nil {
			return ts, err
		}
		n, eps, ret, err := a.collect(&ts.Returns)
		if err != nil {
			if cerr := ctx.Err(); cerr != nil { // interrupted, not the env's fault
				return ts, cerr
			}
			return ts, err
		}
		ts.Steps += n
		ts.Episodes += eps
		retSum += ret
		a.learnCtx = ctx
		ts.Last, err = a.Learn()
		a.learnCtx = nil
		if err != nil {
			return ts, err
		}
	}
	ts.Return = math.NaN()
	if ts.Episodes > 0 {
		ts.Return = retSum / float64(ts.Episodes)
	}
	return ts, nil
}

// startRollout binds vec to the agent, resetting it the first time.
func (a *PPO) startRollout(vec *envs.Vector) error {
	if !envs.SameSpace(vec.ObservationSpace(), a.obsSpace) || !envs.SameSpace(vec.ActionSpace(), a.actSpace) {
		return fmt.Errorf("train: env spaces %v / %v differ from the agent's %v / %v",
			vec.ObservationSpace(), vec.ActionSpace(), a.obsSpace, a.actSpace)
	}
	n := vec.Len()
	steps := max(1, a.cfg.LearnStep/n)
	r := a.roll
	if r != nil && r.vec == vec && r.buf.Steps == steps && r.buf.HiddenSize == a.stateSize() {
		return nil
	}
	maskSize, _ := envs.MaskSize(a.actSpace)
	buf, err := buffer.New(buffer.Dims{Steps: steps, Envs: n, ObsSize: a.inWidth(),
		ActSize: a.actSpace.FlatSize(), MaskSize: maskSize, HiddenSize: a.stateSize()})
	if err != nil {
		return err
	}
	r = &rollout{vec: vec, buf: buf, state: make([]float32, n*a.stateSize()),
		masks: make([][]bool, n), mbuf: make([][]bool, n)}
	if a.rewNorm != nil {
		r.ret, r.raw = make([]float64, n), make([]float64, n)
	}
	for i := range r.mbuf {
		r.mbuf[i] = make([]bool, maskSize)
	}
	res, err := vec.Reset(int64(a.rng.Uint64() >> 1))
	if err != nil {
		return err
	}
	r.obs = append([]float32(nil), res.Obs...)
	r.setMasks(res.Infos)
	if a.cfg.demosOn() {
		r.demo = a.newDemoState(n)
	}
	a.roll = r
	return nil
}

func (r *rollout) setMasks(infos []envs.Info) {
	for i, info := range infos {
		r.masks[i] = nil
		if info.ActionMask != nil {
			copy(r.mbuf[i], info.ActionMask)
			r.masks[i] = r.mbuf[i]
		}
	}
}

// collect fills the buffer with one rollout and computes advantages. It
// returns the env steps taken and the count and summed return of finished
// episodes, and appends each finished episode's return to *ended.
func (a *PPO) collect(ended *[]float64) (steps, episodes int, returns float64, err error) {
	stale := a.actWithPastWeights()
	if steps, episodes, returns, err = a.fill(stale, ended); err != nil {
		return 0, 0, 0, err
	}
	if err := a.estimate(stale); err != nil {
		return 0, 0, 0, err
	}
	if a.rnd != nil {
		if a.rndReward, err = a.rndAdvantages(a.roll.obs); err != nil {
			return 0, 0, 0, err
		}
	}
	if a.valNorm != nil {
		// skrl's order: the values, then the returns.
		a.standardizeTrain(a.roll.buf.Values)
		a.standardizeTrain(a.roll.buf.Returns)
	}
	return steps, episodes, returns, nil
}

// fill collects one rollout into the buffer and the bootstrap values of
// the observations that follow it into r.fout, acting with the weights in
// the agent's tensors, which it restores to the learner's when stale.
func (a *PPO) fill(stale bool, ended *[]float64) (steps, episodes int, returns float64, err error) {
	if stale {
		defer a.restoreWeights()
	}
	r := a.roll
	r.finObs, r.finIdx = r.finObs[:0], r.finIdx[:0]
	buf := r.buf
	n := buf.Envs
	buf.Reset()
	for t := 0; !buf.Full(); t++ {
		if a.dist.feat > 0 && (t == 0 || a.cfg.SDESampleFreq > 0 && t%a.cfg.SDESampleFreq == 0) {
			a.sdeResample(n)
		}
		slot, _ := buf.Next()
		a.preprocess(slot.Obs, r.obs, true)
		for i, m := range r.masks {
			if m != nil {
				copy(slot.Masks[i*len(m):], m)
			}
		}
		copy(slot.Hidden, r.state)
		if err := a.act(slot.Obs, r.masks, r.state, false, false, &r.out); err != nil {
			return 0, 0, 0, err
		}
		copy(slot.Actions, r.out.actions)
		copy(slot.LogProbs, r.out.logp)
		copy(slot.Values, r.out.values)
		if r.demo != nil {
			if err := a.demoRows(r.demo, slot, &r.dout); err != nil {
				return 0, 0, 0, err
			}
		}
		res, err := r.vec.Step(r.out.envActions)
		if err != nil {
			return 0, 0, 0, err
		}
		if a.rnd != nil {
			if err := a.rndStep(t, r.obs, res); err != nil {
				return 0, 0, 0, err
			}
		}
		if err := a.store(t, slot, res, &episodes, &returns, ended); err != nil {
			return 0, 0, 0, err
		}
		if r.demo != nil {
			a.demoStep(r.demo, r.obs, slot, res)
		}
		copy(r.obs, res.Obs)
		r.setMasks(res.Infos)
		steps += n
	}
	a.Steps += steps
	// Bootstrap the rollout's last step from the value of the next observation.
	x := bufs.Grow(r.xfinal, a.inLen(r.obs))
	a.preprocess(x, r.obs, false)
	if r.demo != nil {
		a.demoNextObs(r.demo, x) // a replay goes on with its demo's observation
	}
	if err := a.values(x, r.state, &r.fout); err != nil {
		return 0, 0, 0, err
	}
	return steps, episodes, returns, nil
}

// store writes step t's rewards and episode ends into slot, the bootstrap
// values of episodes truncated on it, and resets the memory of every env
// whose episode ended. It counts those episodes into *episodes, adds their
// returns to *returns one by one (the rollout's sum, in the order it has
// always been taken) and appends them to *ended.
func (a *PPO) store(t int, slot buffer.Slot, res *envs.StepResult, episodes *int, returns *float64, ended *[]float64) error {
	r := a.roll
	if a.rewNorm != nil {
		copy(r.raw, res.Rewards)
		a.scaleRewards(r.ret, r.raw, res.Done, slot.Rewards)
	}
	truncated := false
	for i := range r.buf.Envs {
		if a.rewNorm == nil {
			slot.Rewards[i] = float32(res.Rewards[i])
		}
		slot.Terminated[i], slot.Truncated[i] = res.Terminated[i], res.Truncated[i]
		if res.Done(i) {
			*episodes++
			*returns += res.EpisodeReturns[i]
			*ended = append(*ended, res.EpisodeReturns[i])
			truncated = truncated || (res.Truncated[i] && !res.Terminated[i])
		}
	}
	if truncated {
		if err := a.finalValues(res, slot.FinalValues); err != nil {
			return err
		}
		if a.keepsFinalObs() {
			a.keepFinalObs(res, t)
		}
	}
	size := a.stateSize()
	for i := range r.buf.Envs {
		if res.Done(i) {
			clear(r.state[i*size : (i+1)*size]) // a new episode starts from a zero state
		}
	}
	return nil
}

// finalValues writes V(final observation) of every episode truncated on
// this step, evaluated from the state the env's episode ended in.
func (a *PPO) finalValues(res *envs.StepResult, dst []float32) error {
	r := a.roll
	x := bufs.Grow(r.xfinal, a.inLen(r.obs))
	r.xfinal = x
	width, in := a.obsSpace.FlatSize(), a.inWidth()
	for i := range dst {
		src := res.Obs[i*width : (i+1)*width]
		if res.FinalObs[i] != nil {
			src = res.FinalObs[i]
		}
		a.preprocess(x[i*in:(i+1)*in], src, false)
	}
	if err := a.values(x, r.state, &r.fout); err != nil {
		return err
	}
	for i := range dst {
		if res.Truncated[i] && !res.Terminated[i] {
			dst[i] = r.fout.values[i]
		}
	}
	return nil
}

// keepFinalObs appends the preprocessed final observations of the
// episodes truncated at step t (in r.xfinal after finalValues) to r.finObs.
func (a *PPO) keepFinalObs(res *envs.StepResult, t int) {
	r := a.roll
	w := a.inWidth()
	for i := range res.Truncated {
		if res.Truncated[i] && !res.Terminated[i] {
			r.finObs = append(r.finObs, r.xfinal[i*w:(i+1)*w]...)
			r.finIdx = append(r.finIdx, t*r.buf.Envs+i)
		}
	}
}

// Learn runs the PPO update on the rollout just collected: update_epochs
// passes of shuffled minibatches (whole sequences for recurrent agents),
// each a clipped-surrogate step with global-norm gradient clipping and Adam;
// with target_kl set it stops after the minibatch whose approximate KL
// exceeds it; with kl_threshold the rate adapts after each epoch.
func (a *PPO) Learn() (Stats, error) {
	var st Stats
	if a.roll == nil || !a.roll.buf.Full() {
		return st, fmt.Errorf("learn: no collected rollout")
	}
	buf := a.roll.buf
	a.rememberWeights()
	switch {
	case a.cfg.klAdaptive():
		// The rate as the last epoch left it (cfg.LR at first; SetConfig
		// moves it with a changed lr).
	case a.cfg.AnnealLR && a.TotalSteps > 0:
		a.adam.LR = a.cfg.LR * max(0, 1-float64(a.Steps)/float64(a.TotalSteps))
	default:
		a.adam.LR = a.cfg.LR
	}
	st.LR = a.adam.LR
	var err error
	if a.recurrent() {
		st, err = a.learnSequences(buf, st)
	} else {
		st, err = a.learnFlat(buf, st)
	}
	if err != nil || a.rnd == nil {
		return st, err
	}
	st.IntrinsicReward = a.rndReward
	st.RNDLoss, err = a.rndLearn()
	return st, err
}

// learnFlat is Learn for feed-forward agents: shuffled minibatches of
// single steps.
func (a *PPO) learnFlat(buf *buffer.Rollout, st Stats) (Stats, error) {
	batch := buffer.NewBatch(buf.Dims, min(a.cfg.BatchSize, buf.Steps*buf.Envs))
	for range a.cfg.UpdateEpochs {
		batches, err := buf.Minibatches(a.rng, batch.Cap)
		if err != nil {
			return st, err
		}
		epoch := a.startEpoch(&st)
		for _, idx := range batches {
			buf.Gather(idx, batch)
			if stop, err := a.learnStep(&st, flatBatch(batch)); err != nil || stop {
				if err != nil {
					return st, err
				}
				break
			}
		}
		if a.endEpoch(&st, epoch) {
			break
		}
	}
	st.finish(buf)
	return st, nil
}

// epochStart is where an epoch's minibatches begin in an update's Stats.
type epochStart struct {
	kl float64
	n  int
}

// startEpoch notes where an epoch begins; Stats.LR becomes its rate.
func (a *PPO) startEpoch(st *Stats) epochStart {
	st.LR = a.adam.LR
	return epochStart{st.ApproxKL, st.Minibatches}
}

// endEpoch adapts the learning rate to the epoch's mean approximate KL
// (with kl_threshold; skrl steps its scheduler once per epoch, after an
// early stop too) and reports whether the target KL ended the update.
func (a *PPO) endEpoch(st *Stats, e epochStart) (stop bool) {
	if n := st.Minibatches - e.n; n > 0 && a.cfg.klAdaptive() {
		a.adam.LR = a.cfg.KLAdaptLR(a.adam.LR, (st.ApproxKL-e.kl)/float64(n))
	}
	return st.EarlyStop
}

// learnSequences is Learn for recurrent agents: backpropagation through
// time over sequences cut by the bptt mode (never across an episode end),
// each started from the LSTM state stored when it was collected. A
// minibatch holds max(1, batch_size/max_seq_len) sequences, padded to
// max_seq_len; padding has weight 0 in every mean.
func (a *PPO) learnSequences(buf *buffer.Rollout, st Stats) (Stats, error) {
	L := a.cfg.MaxSeqLen
	seqs, err := buf.Sequences(a.mode(), L)
	if err != nil {
		return st, err
	}
	per := max(1, a.cfg.BatchSize/L)
	sb := buffer.NewSeqBatch(buf.Dims, L, per)
	// The last minibatch of an epoch is padded with empty sequences (weight
	// 0 everywhere) to the full size: one batch shape per agent, so buffers
	// (and the reference backend's graphs) are sized once, not for every
	// tail size a rollout happens to give.
	group := make([]buffer.Sequence, per)
	for range a.cfg.UpdateEpochs {
		buffer.ShuffleSequences(a.rng, seqs)
		epoch := a.startEpoch(&st)
		for lo := 0; lo < len(seqs); lo += per {
			n := copy(group, seqs[lo:min(lo+per, len(seqs))])
			clear(group[n:])
			buf.GatherSequences(group, sb)
			if stop, err := a.learnStep(&st, seqBatch(sb, L)); err != nil || stop {
				if err != nil {
					return st, err
				}
				break
			}
		}
		if a.endEpoch(&st, epoch) {
			break
		}
	}
	st.finish(buf)
	return st, nil
}

// learnStep updates on one minibatch, adds its statistics to st and
// reports whether the target KL ends the update.
func (a *PPO) learnStep(st *Stats, mb minibatch) (stop bool, err error) {
	if a.learnCtx != nil {
		if err := a.learnCtx.Err(); err != nil {
			return true, fmt.Errorf("update stopped after %d minibatches: %w", st.Minibatches, err)
		}
	}
	res, err := a.update(mb)
	if err != nil {
		return false, err
	}
	st.add(res)
	if a.cfg.TargetKL > 0 && res.ApproxKL > a.cfg.TargetKL {
		st.EarlyStop = true
		return true, nil
	}
	return false, nil
}

func (st *Stats) add(mb Stats) {
	st.PolicyLoss += mb.PolicyLoss
	st.ValueLoss += mb.ValueLoss
	st.Entropy += mb.Entropy
	st.Loss += mb.Loss
	st.ApproxKL += mb.ApproxKL
	st.ClipFrac += mb.ClipFrac
	st.GradNorm += mb.GradNorm
	st.Minibatches++
}

func (st *Stats) finish(buf *buffer.Rollout) {
	if k := float64(st.Minibatches); k > 0 {
		st.PolicyLoss /= k
		st.ValueLoss /= k
		st.Entropy /= k
		st.Loss /= k
		st.ApproxKL /= k
		st.ClipFrac /= k
		st.GradNorm /= k
	}
	st.ExplainedVariance = explainedVariance(buf.Values, buf.Returns)
}

// explainedVariance is 1 − Var(R − V)/Var(R) (NaN when Var(R) = 0).
func explainedVariance(values, returns []float32) float64 {
	var mr, md float64
	n := float64(len(returns))
	for i := range returns {
		mr += float64(returns[i])
		md += float64(returns[i] - values[i])
	}
	mr, md = mr/n, md/n
	var vr, vd float64
	for i := range returns {
		r, d := float64(returns[i])-mr, float64(returns[i]-values[i])-md
		vr += r * r
		vd += d * d
	}
	if vr == 0 {
		return math.NaN()
	}
	return 1 - vd/vr
}

// seqBatch is the minibatch of sequences of L steps in sb, time-major.
func seqBatch(sb *buffer.SeqBatch, L int) minibatch {
	return minibatch{rows: L * sb.Size, steps: L, obs: sb.Obs, actions: sb.Actions, logp: sb.LogProbs,
		values: sb.Values, adv: sb.Advantages, ret: sb.Returns, wts: sb.Valid, masks: sb.Masks, hidden: sb.Hidden}
}

func flatBatch(b *buffer.Batch) minibatch {
	return minibatch{rows: b.Size, steps: 1, obs: b.Obs, actions: b.Actions, logp: b.LogProbs,
		values: b.Values, adv: b.Advantages, ret: b.Returns, masks: b.Masks}
}

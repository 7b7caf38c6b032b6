package agent

// actorLag holds the weights a lagged actor acts with (Config.ActorLag):
// copies of every tensor, in the order of eachTensor, taken before each of
// the last ActorLag updates, oldest first.
type actorLag struct {
	past    [][]float32
	learner []float32 // the current weights while the actor acts
}

// actWithPastWeights puts the oldest kept weights in the agent's tensors,
// keeping the current ones, and reports whether it did: not before the
// first update on this vector env, nor without actor_lag.
func (a *PPO) actWithPastWeights() bool {
	l := &a.roll.lag
	if a.cfg.ActorLag == 0 || len(l.past) == 0 {
		return false
	}
	l.learner = a.flatWeights(l.learner)
	a.setFlatWeights(l.past[0])
	return true
}

// restoreWeights puts back the weights actWithPastWeights kept.
func (a *PPO) restoreWeights() { a.setFlatWeights(a.roll.lag.learner) }

// rememberWeights keeps a copy of the current weights for the actor, as
// the last of at most ActorLag, before an update changes them.
func (a *PPO) rememberWeights() {
	l := &a.roll.lag
	if a.cfg.ActorLag == 0 {
		l.past = nil
		return
	}
	var spare []float32
	for len(l.past) >= a.cfg.ActorLag {
		spare = l.past[0]
		l.past = append(l.past[:0], l.past[1:]...)
	}
	l.past = append(l.past, a.flatWeights(spare[:0]))
}

// flatWeights appends every tensor's data to dst[:0], in the order of
// eachTensor.
func (a *PPO) flatWeights(dst []float32) []float32 {
	dst = dst[:0]
	for _, t := range a.tensors() {
		dst = append(dst, t...)
	}
	return dst
}

// setFlatWeights copies src, as flatWeights wrote it, into the tensors.
func (a *PPO) setFlatWeights(src []float32) {
	for _, t := range a.tensors() {
		src = src[copy(t, src):]
	}
}

package agent

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/evolverl/evolve/buffer"
	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/record"
)

// PPO with demonstrations (PPO+D; Libardi, De Fabritiis & Dittert 2021),
// as pytorchrl's PPOD storage has it:
//
//   - When an env's episode ends, its next "episode" in the rollout is,
//     with probability demo_rho, a replay of a reward demonstration (the
//     given ones, and the agent's own episodes whose return reaches the
//     lowest return among them), with probability demo_phi a replay of a
//     value demonstration (the agent's own episodes with the highest
//     value predictions, drawn ∝ max value^demo_alpha), else the env's own.
//     A replay ends by drawing again.
//   - A replayed step enters the rollout as the demo recorded it
//     (observation, action, reward), with the critic's value of it and the
//     log-probability 0 of a demonstrated action: PPO's ratio is then π(a),
//     so a positive advantage raises the demonstrated action's probability
//     (up to the clip). The demo's last step ends its episode as recorded
//     (terminated, else truncated with the value of its last observation).
//   - Meanwhile the env itself runs on with the agent's own actions,
//     unrecorded: its steps are counted, its finished episodes are the
//     agent's own returns, and after the replay the rollout continues from
//     where the env is.
//   - Each time a reward demo is added, demo_rho grows and demo_phi shrinks
//     by demo_phi₀ / (value demos held), within [0, demo_rho₀ + demo_phi₀].
//   - At most demo_capacity demos are held: value demos with the lowest
//     max value go first, then the oldest own reward demos; given demos
//     stay.
//
// The agent's own demos, the annealed probabilities and the replays in
// progress belong to a training vector (a generation in a run): a new one
// starts from the given demos, so that runs stay reproducible and
// resumable without storing episodes in agent files.

// Demo is one demonstrated episode: observations (raw, as the env gave
// them), the actions taken and the rewards, row i being step i, and
// whether it ended terminated (else it was cut: truncated). Masks holds a
// masked env's action mask of each step (nil, or a nil row, where every
// action was legal): a replayed step is learnt under its mask, as the
// env's own steps are.
type Demo struct {
	Obs, Actions [][]float32
	Rewards      []float64
	Terminated   bool
	Masks        [][]bool
}

// DemosFrom splits a recorded trajectory (record.Read of a file that
// `evolve play -record` or `evolve sample` wrote, or a user's own) into
// demos, one per episode, with the recording's action masks when it has
// them. The recording's spaces must be obs and act: otherwise the error
// names the field ("observation space", "action space") and both spaces;
// an action outside act, or one its step's mask forbids, is an error
// naming its step.
func DemosFrom(t *record.Trajectory, obs, act envs.Space) ([]Demo, error) {
	for _, s := range []struct {
		field     string
		got, want envs.Space
	}{{"observation space", t.ObservationSpace, obs}, {"action space", t.ActionSpace, act}} {
		if !envs.SameSpace(s.got, s.want) {
			return nil, fmt.Errorf("%s %v, the env's is %v", s.field, s.got, s.want)
		}
	}
	var out []Demo
	for i := range t.Len() {
		if !act.Contains(t.Actions[i]) {
			return nil, fmt.Errorf("step %d: action %v is not in the action space %v", i, t.Actions[i], act)
		}
		if t.ActionMasks != nil && !legal(act, t.Actions[i], t.ActionMasks[i]) {
			return nil, fmt.Errorf("step %d: action %v is not legal under the step's action mask", i, t.Actions[i])
		}
		if t.EpisodeStarts[i] || len(out) == 0 {
			out = append(out, Demo{})
		}
		d := &out[len(out)-1]
		d.Obs = append(d.Obs, t.Observations[i])
		d.Actions = append(d.Actions, t.Actions[i])
		d.Rewards = append(d.Rewards, t.Rewards[i])
		d.Terminated = t.Terminated[i]
		if t.ActionMasks != nil {
			d.Masks = append(d.Masks, t.ActionMasks[i])
		}
	}
	return out, nil
}

// SetDemos gives the agent the demonstrations it replays with demo_rho >
// 0 (shared, never modified); they take effect with the next training
// vector. Each must fit the agent's spaces.
func (a *PPO) SetDemos(demos []Demo) error {
	n, m := a.obsSpace.FlatSize(), a.actSpace.FlatSize()
	for k, d := range demos {
		if len(d.Obs) == 0 || len(d.Actions) != len(d.Obs) || len(d.Rewards) != len(d.Obs) {
			return fmt.Errorf("agent: demo %d: %d observations, %d actions, %d rewards: want as many of each, at least one", k, len(d.Obs), len(d.Actions), len(d.Rewards))
		}
		if d.Masks != nil && len(d.Masks) != len(d.Obs) {
			return fmt.Errorf("agent: demo %d: %d masks for %d steps: want one per step, or none", k, len(d.Masks), len(d.Obs))
		}
		for i := range d.Obs {
			if len(d.Obs[i]) != n || len(d.Actions[i]) != m || !a.actSpace.Contains(d.Actions[i]) {
				return fmt.Errorf("agent: demo %d step %d: an observation of %d values (want %d) or an action %v outside %v",
					k, i, len(d.Obs[i]), n, d.Actions[i], a.actSpace)
			}
			if d.Masks == nil || d.Masks[i] == nil {
				continue
			}
			if ms, ok := envs.MaskSize(a.actSpace); !ok || len(d.Masks[i]) != ms {
				return fmt.Errorf("agent: demo %d step %d: an action mask of %d entries for %v (want %d)", k, i, len(d.Masks[i]), a.actSpace, ms)
			}
			if !legal(a.actSpace, d.Actions[i], d.Masks[i]) {
				return fmt.Errorf("agent: demo %d step %d: action %v is not legal under its mask", k, i, d.Actions[i])
			}
		}
	}
	a.demos = demos
	return nil
}

// demosOn reports whether PPO+D is on.
func (c Config) demosOn() bool { return c.DemoRho > 0 || c.DemoPhi > 0 }

// demoSettings returns demo_alpha and demo_capacity with defaults filled.
func (c Config) demoSettings() (alpha float64, capacity int) {
	alpha, capacity = c.DemoAlpha, c.DemoCapacity
	if alpha == 0 {
		alpha = 10
	}
	if capacity == 0 {
		capacity = 51
	}
	return alpha, capacity
}

// validateDemos checks the demo_* keys.
func (c Config) validateDemos() []error {
	var errs []error
	bad := func(key string, v any, want string) {
		errs = append(errs, fmt.Errorf("%s = %v: want %s", key, v, want))
	}
	for _, p := range []struct {
		key string
		v   float64
	}{{"demo_rho", c.DemoRho}, {"demo_phi", c.DemoPhi}} {
		if !(p.v >= 0 && p.v <= 1) {
			bad(p.key, p.v, "a probability in [0, 1]")
		}
	}
	if c.DemoRho+c.DemoPhi > 1 {
		bad("demo_rho + demo_phi", c.DemoRho+c.DemoPhi, "<= 1")
	}
	if !(c.DemoAlpha >= 0) || math.IsInf(c.DemoAlpha, 0) {
		bad("demo_alpha", c.DemoAlpha, ">= 0 (0: 10)")
	}
	if c.DemoCapacity < 0 || c.DemoCapacity > 10000 {
		bad("demo_capacity", c.DemoCapacity, "1 … 10000 (0: 51)")
	}
	if !c.demosOn() {
		if c.DemoAlpha != 0 || c.DemoCapacity != 0 {
			errs = append(errs, errors.New("demo_alpha or demo_capacity is set, but PPO+D is off: set demo_rho or demo_phi > 0"))
		}
		return errs
	}
	for _, x := range []struct {
		on  bool
		why string
	}{
		{c.Net.Encoder.Recurrent(), fmt.Sprintf("net.encoder = %q (a replay has no recurrent state)", c.Net.Encoder)},
		{c.Advantage == AdvantageVTrace, `advantage = "vtrace"`},
		{c.ActorLag != 0, "actor_lag"},
		{c.rndOn(), "rnd_coef > 0"},
		{c.NormalizeReward, "normalize_reward (demo rewards are not the env's)"},
		{c.TargetKL > 0 || c.KLThreshold > 0, "target_kl or kl_threshold (a demonstrated action's log-probability 0 is no policy's, so the KL estimate would see the demos)"},
	} {
		if x.on {
			errs = append(errs, fmt.Errorf("demo_rho/demo_phi > 0 (PPO+D) does not go with %s", x.why))
		}
	}
	return errs
}

// ownDemo is a demo the agent replays: a given one, or its own episode.
type ownDemo struct {
	*Demo
	ret      float64 // the return
	maxValue float64 // value demos: the highest value the critic gave it
	given    bool
}

// demoEnv is one env's replay and its own episode in progress.
type demoEnv struct {
	replay *ownDemo // nil: the env's own steps are recorded
	k      int      // the replay's next step
	maxV   float64  // the highest value seen in this replay
	// The env's own episode so far, and whether all of it was recorded
	// (an episode that ran during a replay is not a candidate demo).
	ep    Demo
	epMax float64
	clean bool
}

// demoState is PPO+D's state for one training vector.
type demoState struct {
	reward, value []*ownDemo
	rho, phi      float64
	rho0, phi0    float64
	envs          []demoEnv
}

// newDemoState starts PPO+D on a vector of n envs from the given demos,
// each env drawing its first episode's source.
func (a *PPO) newDemoState(n int) *demoState {
	s := &demoState{rho: a.cfg.DemoRho, phi: a.cfg.DemoPhi, rho0: a.cfg.DemoRho, phi0: a.cfg.DemoPhi,
		envs: make([]demoEnv, n)}
	for k := range a.demos {
		d := &a.demos[k]
		ret := 0.0
		for _, r := range d.Rewards {
			ret += r
		}
		s.reward = append(s.reward, &ownDemo{Demo: d, ret: ret, given: true})
	}
	for i := range s.envs {
		s.envs[i].clean, s.envs[i].epMax = true, math.Inf(-1) // a fresh vector: every episode starts now
		a.drawSource(s, i)
	}
	return s
}

// drawSource draws env i's next episode: a reward demo (rho), a value demo
// (phi) or its own.
func (a *PPO) drawSource(s *demoState, i int) {
	e := &s.envs[i]
	e.replay, e.k, e.maxV = nil, 0, math.Inf(-1)
	u := a.rng.Float64()
	switch {
	case u < s.rho && len(s.reward) > 0:
		e.replay = s.reward[a.rng.IntN(len(s.reward))]
	case u >= s.rho && u < s.rho+s.phi && len(s.value) > 0:
		alpha, _ := a.cfg.demoSettings()
		w := make([]float64, len(s.value))
		total := 0.0
		for k, d := range s.value {
			// pytorchrl draws ∝ max value^alpha, for positive values;
			// here the values are shifted to start at 0 first.
			w[k] = math.Pow(d.maxValue-s.minValue()+1e-8, alpha)
			total += w[k]
		}
		u2, acc := a.rng.Float64()*total, 0.0
		for k := range w {
			if acc += w[k]; u2 < acc || k == len(w)-1 {
				e.replay = s.value[k]
				break
			}
		}
	}
	if e.replay != nil {
		e.clean = false // the env's episode runs on unrecorded
	}
}

func (s *demoState) minValue() float64 {
	m := math.Inf(1)
	for _, d := range s.value {
		m = min(m, d.maxValue)
	}
	return m
}

// demoRows puts the replayed steps into the slot, which holds the
// env's step as acted on (the env's actions come from its own
// observations): a replaying env's row gets its demo's observation
// (preprocessed without updating the statistics), all actions legal, the
// demo's action with log-probability 0 and the critic's value of it.
func (a *PPO) demoRows(s *demoState, slot buffer.Slot, out *actOut) error {
	n, m := a.inWidth(), a.actSpace.FlatSize()
	any := false
	for i := range s.envs {
		e := &s.envs[i]
		if e.replay == nil {
			continue
		}
		any = true
		a.preprocess(slot.Obs[i*n:(i+1)*n], e.replay.Obs[e.k], false)
		copy(slot.Actions[i*m:(i+1)*m], e.replay.Actions[e.k])
		slot.LogProbs[i] = 0
		if ms := len(slot.Masks) / len(s.envs); ms > 0 {
			row := slot.Masks[i*ms : (i+1)*ms]
			if d := e.replay; d.Masks != nil && d.Masks[e.k] != nil {
				copy(row, d.Masks[e.k])
			} else {
				for j := range row {
					row[j] = true
				}
			}
		}
	}
	if !any {
		return nil
	}
	if err := a.values(slot.Obs, nil, out); err != nil {
		return err
	}
	for i := range s.envs {
		if e := &s.envs[i]; e.replay != nil {
			slot.Values[i] = out.values[i]
			e.maxV = max(e.maxV, float64(out.values[i]))
		}
	}
	return nil
}

// demoNextObs puts into x, the preprocessed observations that follow a
// rollout, each replaying env's next demo observation.
func (a *PPO) demoNextObs(s *demoState, x []float32) {
	n := a.inWidth()
	for i := range s.envs {
		if e := &s.envs[i]; e.replay != nil {
			a.preprocess(x[i*n:(i+1)*n], e.replay.Obs[e.k], false)
		}
	}
}

// demoStep finishes a step of the rollout: replayed rows get the demo's
// reward and episode end (a truncated end bootstraps from the value of its
// last observation), replays advance and, when they end, draw again;
// the env's own recorded episodes are followed and, when they end,
// considered as demos; an env whose own episode ended draws its next
// source. raw holds the step's raw observations (the env's where it was
// recorded), env actions and rewards come from the env's step res.
func (a *PPO) demoStep(s *demoState, raw []float32, slot buffer.Slot, res *envs.StepResult) {
	n, m := a.obsSpace.FlatSize(), a.actSpace.FlatSize()
	for i := range s.envs {
		e := &s.envs[i]
		if d := e.replay; d != nil {
			last := e.k == len(d.Obs)-1
			slot.Rewards[i] = float32(d.Rewards[e.k])
			slot.Terminated[i] = last && d.Terminated
			slot.Truncated[i] = last && !d.Terminated
			slot.FinalValues[i] = 0
			if slot.Truncated[i] {
				slot.FinalValues[i] = slot.Values[i]
			}
			e.k++
			if last {
				if slices.Contains(s.value, d) {
					d.maxValue = e.maxV // a value demo's worth, as the critic sees it now
				}
				a.drawSource(s, i)
			}
			if res.Done(i) && e.replay == nil {
				e.clean, e.ep, e.epMax = true, Demo{}, math.Inf(-1)
			}
			continue
		}
		if e.clean {
			e.ep.Obs = append(e.ep.Obs, slices.Clone(raw[i*n:(i+1)*n]))
			e.ep.Actions = append(e.ep.Actions, slices.Clone(slot.Actions[i*m:(i+1)*m]))
			e.ep.Rewards = append(e.ep.Rewards, res.Rewards[i])
			if ms := len(slot.Masks) / len(s.envs); ms > 0 {
				e.ep.Masks = append(e.ep.Masks, slices.Clone(slot.Masks[i*ms:(i+1)*ms]))
			}
			e.epMax = max(e.epMax, float64(slot.Values[i]))
		}
		if !res.Done(i) {
			continue
		}
		if e.clean {
			e.ep.Terminated = res.Terminated[i]
			a.considerDemo(s, e.ep, e.epMax)
		}
		e.clean, e.ep, e.epMax = true, Demo{}, math.Inf(-1)
		a.drawSource(s, i)
	}
}

// considerDemo keeps an own episode as a reward demo when its return
// reaches the lowest reward demo's (annealing rho and phi), else as a
// value demo when its highest value is above the lowest value demo's or
// there is room.
func (a *PPO) considerDemo(s *demoState, ep Demo, maxV float64) {
	_, capacity := a.cfg.demoSettings()
	ret := 0.0
	for _, r := range ep.Rewards {
		ret += r
	}
	d := &ownDemo{Demo: &ep, ret: ret, maxValue: maxV}
	threshold := math.Inf(-1) // with no reward demo yet, any episode is one
	for k, r := range s.reward {
		if k == 0 || r.ret < threshold {
			threshold = r.ret
		}
	}
	if ret >= threshold {
		s.reward = append(s.reward, d)
		if nv := len(s.value); nv > 0 {
			step := s.phi0 / float64(nv)
			hi := s.rho0 + s.phi0
			s.rho = min(hi, max(0, s.rho+step))
			s.phi = min(hi, max(0, s.phi-step))
		}
	} else if len(s.reward)+len(s.value) < capacity || len(s.value) > 0 && maxV >= s.minValue() {
		s.value = append(s.value, d)
	}
	// Over capacity: the lowest value demos go, then the oldest own reward demos.
	for len(s.reward)+len(s.value) > capacity && len(s.value) > 0 {
		k := 0
		for j, v := range s.value {
			if v.maxValue < s.value[k].maxValue {
				k = j
			}
		}
		s.value = slices.Delete(s.value, k, k+1)
	}
	for len(s.reward) > capacity {
		k := slices.IndexFunc(s.reward, func(r *ownDemo) bool { return !r.given })
		if k < 0 {
			break
		}
		s.reward = slices.Delete(s.reward, k, k+1)
	}
}

// legal reports whether the Discrete or MultiDiscrete action is allowed by
// mask (one entry per choice of each component, in order); any action is
// under a nil mask.
func legal(space envs.Space, action []float32, mask []bool) bool {
	if mask == nil {
		return true
	}
	var nvec []int
	start := 0
	switch s := space.(type) {
	case envs.Discrete:
		nvec, start = []int{s.N}, s.Start
	case envs.MultiDiscrete:
		nvec = s.Nvec
	default:
		return true
	}
	off := 0
	for c, n := range nvec {
		j := int(action[c]) - start
		if j < 0 || j >= n || off+j >= len(mask) || !mask[off+j] {
			return false
		}
		off += n
	}
	return true
}

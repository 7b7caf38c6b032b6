package envs

import (
	"errors"
	"fmt"
	"io"
	"math"
)

// Vector steps N environments of the same spaces in lock step, with
// same-step auto-reset: when env i's episode ends, the step returns the
// first observation of its next episode and keeps the last observation of
// the finished one in FinalObs[i].
//
// The slices of a StepResult are owned by the Vector and overwritten by the
// next Step or Reset. Step allocates nothing (beyond what the envs do).
type Vector struct {
	envs     []Env
	obsSpace Space
	actSpace Space
	obsSize  int
	actSize  int
	maskSize int // 0 when the action space takes no mask

	res        StepResult
	finalBufs  [][]float32 // per-env storage behind res.FinalObs
	finalMasks [][]bool    // per-env storage behind res.FinalInfos' masks
	epReturn   []float64   // running return of each env's current episode
	epLength   []int

	ready  bool // Reset has succeeded since creation or the last error
	seeded bool // some Reset has seeded the envs

	// gym is the Python child that hosts all of envs, in order, when it
	// does: then a Reset or Step is one exchange with it.
	gym   *gymHost
	seeds []int64
}

// StepResult is the outcome of one Vector step for all N envs.
type StepResult struct {
	// Obs holds the N observations, env i's at [i*obsSize, (i+1)*obsSize).
	// Where an episode ended, it is the first observation of the next one.
	Obs []float32
	// Rewards, Terminated and Truncated are those of the step just taken.
	Rewards    []float64
	Terminated []bool
	Truncated  []bool
	// Infos belong to Obs: after an auto-reset, env i's entry is the new
	// episode's reset info, so its ActionMask is the one for Obs.
	Infos []Info
	// FinalObs[i] is non-nil exactly when env i's episode ended on this step:
	// its last observation, for bootstrapping a truncated episode.
	FinalObs [][]float32
	// FinalInfos[i] is the info of that last step.
	FinalInfos []Info
	// EpisodeReturns[i] and EpisodeLengths[i] are the undiscounted return
	// and the length of the episode that ended on this step (zero elsewhere).
	EpisodeReturns []float64
	EpisodeLengths []int
}

// Done reports whether env i's episode ended on this step.
func (r *StepResult) Done(i int) bool { return r.FinalObs[i] != nil }

// NewVector steps the given envs, which must all have the same observation
// and action spaces.
func NewVector(list []Env) (*Vector, error) {
	if len(list) == 0 {
		return nil, errors.New("envs: vector of no envs")
	}
	for i, e := range list {
		if e == nil {
			return nil, fmt.Errorf("envs: vector env %d is nil", i)
		}
		if err := e.ObservationSpace().Validate(); err != nil {
			return nil, fmt.Errorf("envs: vector env %d (%s): observation space: %w", i, envName{Unwrapped(e)}, err)
		}
		if err := e.ActionSpace().Validate(); err != nil {
			return nil, fmt.Errorf("envs: vector env %d (%s): action space: %w", i, envName{Unwrapped(e)}, err)
		}
	}
	obsSpace, actSpace := list[0].ObservationSpace(), list[0].ActionSpace()
	for i, e := range list[1:] {
		if o := e.ObservationSpace(); o.String() != obsSpace.String() {
			return nil, fmt.Errorf("envs: vector env %d observes %v, env 0 %v", i+1, o, obsSpace)
		}
		if a := e.ActionSpace(); a.String() != actSpace.String() {
			return nil, fmt.Errorf("envs: vector env %d acts in %v, env 0 in %v", i+1, a, actSpace)
		}
	}
	n := len(list)
	v := &Vector{
		envs:     list,
		obsSpace: obsSpace,
		actSpace: actSpace,
		obsSize:  obsSpace.FlatSize(),
		actSize:  actSpace.FlatSize(),
		epReturn: make([]float64, n),
		epLength: make([]int, n),
	}
	v.maskSize, _ = MaskSize(actSpace)
	v.res = StepResult{
		Obs:            make([]float32, n*v.obsSize),
		Rewards:        make([]float64, n),
		Terminated:     make([]bool, n),
		Truncated:      make([]bool, n),
		Infos:          make([]Info, n),
		FinalObs:       make([][]float32, n),
		FinalInfos:     make([]Info, n),
		EpisodeReturns: make([]float64, n),
		EpisodeLengths: make([]int, n),
	}
	v.gym = sharedGymHost(list)
	v.seeds = make([]int64, n)
	v.finalBufs = make([][]float32, n)
	v.finalMasks = make([][]bool, n)
	for i := range v.finalBufs {
		v.finalBufs[i] = make([]float32, v.obsSize)
		v.finalMasks[i] = make([]bool, v.maskSize)
	}
	return v, nil
}

// Len returns the number of envs.
func (v *Vector) Len() int { return len(v.envs) }

// Env returns env i.
func (v *Vector) Env(i int) Env { return v.envs[i] }

// ObservationSpace is the space of one env's observation.
func (v *Vector) ObservationSpace() Space { return v.obsSpace }

// ActionSpace is the space of one env's action.
func (v *Vector) ActionSpace() Space { return v.actSpace }

// Reset resets every env. With seed >= 0, env i is seeded with
// SubSeed(seed, i); with NoSeed every env continues its stream, except on a
// vector never seeded before, whose envs get SubSeed(0, i) so that they do
// not all replay the same episodes. Reset must come before the first Step
// and after any error.
func (v *Vector) Reset(seed int64) (*StepResult, error) {
	if seed < 0 && !v.seeded {
		seed = 0
	}
	v.seeded = true
	v.ready = false
	r := &v.res
	for i := range v.seeds {
		v.seeds[i] = NoSeed
		if seed >= 0 {
			v.seeds[i] = SubSeed(seed, i)
		}
	}
	if v.gym != nil {
		if err := v.gym.resetAll(v.seeds); err != nil {
			return nil, v.gymError("reset", err)
		}
	}
	for i, e := range v.envs {
		var obs []float32
		var info Info
		if v.gym != nil {
			obs, info = v.gym.res[i].now.obs, v.gym.res[i].now.info()
		} else {
			obs, info = e.Reset(v.seeds[i])
		}
		if err := v.accept(i, "reset", 0, obs, 0, info); err != nil {
			return nil, err
		}
		copy(r.Obs[i*v.obsSize:], obs)
		r.Infos[i] = info
		r.Rewards[i], r.Terminated[i], r.Truncated[i] = 0, false, false
		r.FinalObs[i], r.FinalInfos[i] = nil, Info{}
		r.EpisodeReturns[i], r.EpisodeLengths[i] = 0, 0
		v.epReturn[i], v.epLength[i] = 0, 0
	}
	v.ready = true
	return r, nil
}

// Step applies actions (N actions in flat form, env i's at
// [i*actSize, (i+1)*actSize)) and auto-resets envs whose episode ended.
//
// An action outside the action space (a Box action only needs to be finite:
// envs clip it), or an env that returns an observation of the wrong size, a
// non-finite value or a mask of the wrong length, makes Step fail with an
// error naming the env. Envs before it have already stepped, so after an
// error the vector refuses to step until Reset.
func (v *Vector) Step(actions []float32) (*StepResult, error) {
	if !v.ready {
		return nil, errors.New("envs: vector step before Reset (or after an error): call Reset first")
	}
	if len(actions) != len(v.envs)*v.actSize {
		return nil, fmt.Errorf("envs: vector step: %d action values for %d envs of action size %d", len(actions), len(v.envs), v.actSize)
	}
	r := &v.res
	if v.gym != nil {
		// The child steps every env at once: check every action first.
		for i := range v.envs {
			if a := actions[i*v.actSize : (i+1)*v.actSize]; !v.validAction(a) {
				v.ready = false
				return nil, fmt.Errorf("envs: vector env %d (%s): action %v is not in %v", i, v.gym.id, a, v.actSpace)
			}
		}
		if err := v.gym.stepAll(actions); err != nil {
			v.ready = false
			return nil, v.gymError("step", err)
		}
	}
	for i, e := range v.envs {
		var obs []float32
		var reward float64
		var term, trunc bool
		var info Info
		if v.gym != nil {
			g := &v.gym.res[i]
			obs, reward, term, trunc, info = g.now.obs, g.reward, g.term, g.trunc, g.now.info()
		} else {
			a := actions[i*v.actSize : (i+1)*v.actSize]
			if !v.validAction(a) {
				v.ready = false
				return nil, fmt.Errorf("envs: vector env %d (%s) at step %d of its episode: action %v is not in %v", i, envName{Unwrapped(e)}, v.epLength[i]+1, a, v.actSpace)
			}
			obs, reward, term, trunc, info = e.Step(a)
		}
		if err := v.accept(i, "step", v.epLength[i]+1, obs, reward, info); err != nil {
			v.ready = false
			return nil, err
		}
		r.Rewards[i], r.Terminated[i], r.Truncated[i] = reward, term, trunc
		v.epReturn[i] += reward
		v.epLength[i]++
		if !term && !trunc {
			copy(r.Obs[i*v.obsSize:], obs)
			r.Infos[i] = info
			r.FinalObs[i], r.FinalInfos[i] = nil, Info{}
			r.EpisodeReturns[i], r.EpisodeLengths[i] = 0, 0
			continue
		}
		r.FinalObs[i] = v.finalBufs[i]
		copy(r.FinalObs[i], obs)
		// The env may reuse its mask buffer on Reset: keep a copy.
		if info.ActionMask != nil {
			copy(v.finalMasks[i], info.ActionMask)
			info.ActionMask = v.finalMasks[i]
		}
		r.FinalInfos[i] = info
		r.EpisodeReturns[i], r.EpisodeLengths[i] = v.epReturn[i], v.epLength[i]
		v.epReturn[i], v.epLength[i] = 0, 0
		if v.gym != nil {
			// The child has reset it already, in the same exchange.
			obs, info = v.gym.res[i].next.obs, v.gym.res[i].next.info()
		} else {
			obs, info = e.Reset(NoSeed)
		}
		if err := v.accept(i, "reset", 0, obs, 0, info); err != nil {
			v.ready = false
			return nil, err
		}
		copy(r.Obs[i*v.obsSize:], obs)
		r.Infos[i] = info
	}
	return r, nil
}

// sharedGymHost returns the Python child that hosts exactly list, env i
// as its env i, or nil.
func sharedGymHost(list []Env) *gymHost {
	g0, ok := list[0].(*GymEnv)
	if !ok || len(g0.h.res) != len(list) {
		return nil
	}
	for i, e := range list {
		if g, ok := e.(*GymEnv); !ok || g.h != g0.h || g.i != i || g.closed {
			return nil
		}
	}
	return g0.h
}

// gymError names the env and the cause of a failed exchange with the
// vector's Python child.
//
// It matches ErrBadOutput, as the same failure of a single gym env does
// (CheckOutput refuses its missing observation): the env raised, died,
// did not answer or was interrupted (which a stopped program tells apart
// by its context first).
func (v *Vector) gymError(call string, err error) error {
	err = fmt.Errorf("%w%w", err, quiet{ErrBadOutput})
	if e, ok := errors.AsType[*gymEnvError](err); ok {
		return fmt.Errorf("envs: vector env %d %s: %s: %s: %w", e.env, call, v.gym.id, call, err)
	}
	return fmt.Errorf("envs: vector of %d %s envs %s: %w", len(v.envs), v.gym.id, call, err)
}

// validAction reports whether a is a valid action: in the space, or for a
// Box of the right length and finite (envs clip Box actions themselves).
func (v *Vector) validAction(a []float32) bool {
	if _, ok := v.actSpace.(Box); !ok {
		return v.actSpace.Contains(a)
	}
	for _, x := range a {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return false
		}
	}
	return true
}

// accept checks what env i returned (CheckOutput) at step of its episode
// (0: its reset).
func (v *Vector) accept(i int, call string, step int, obs []float32, reward float64, info Info) error {
	if err := CheckOutput(v.envs[i], v.obsSpace, v.actSpace, call, obs, reward, info); err != nil {
		if step > 0 {
			return fmt.Errorf("envs: vector env %d at step %d of its episode: %w", i, step, err)
		}
		return fmt.Errorf("envs: vector env %d: %w", i, err)
	}
	return nil
}

// Close closes every env that implements io.Closer and returns their errors
// joined.
func (v *Vector) Close() error {
	var errs []error
	for _, e := range v.envs {
		if c, ok := e.(io.Closer); ok {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}

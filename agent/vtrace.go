package agent

import (
	"cmp"
	"fmt"
	"math"

	"github.com/evolverl/evolve/buffer"
	"github.com/evolverl/evolve/internal/bufs"
)

// The estimators of Config.Advantage.
const (
	AdvantageGAE    = "gae"
	AdvantageMC     = "mc"
	AdvantageVTrace = "vtrace"
)

// maxActorLag bounds actor_lag: every update of lag keeps a copy of the
// weights.
const maxActorLag = 64

// validateAdvantage checks advantage, the V-trace clips and actor_lag.
func (c Config) validateAdvantage() []error {
	var errs []error
	bad := func(key string, v any, want string) {
		errs = append(errs, fmt.Errorf("%s = %v: want %s", key, v, want))
	}
	switch c.Advantage {
	case "", AdvantageGAE, AdvantageMC:
		for _, f := range []struct {
			key string
			v   float64
		}{{"vtrace_rho_clip", c.VTraceRhoClip}, {"vtrace_c_clip", c.VTraceCClip}} {
			if f.v != 0 { // only the clips that were set: 0 is their absence
				errs = append(errs, fmt.Errorf(`%s = %v: set only with advantage = "vtrace" (advantage = %q)`, f.key, f.v, cmp.Or(c.Advantage, AdvantageGAE)))
			}
		}
	case AdvantageVTrace:
		for _, f := range []struct {
			key string
			v   float64
		}{{"vtrace_rho_clip", c.VTraceRhoClip}, {"vtrace_c_clip", c.VTraceCClip}} {
			if !(f.v > 0) || math.IsInf(f.v, 0) {
				bad(f.key, f.v, `> 0 with advantage = "vtrace" (IMPALA's is 1)`)
			}
		}
		if c.Net.Encoder.Recurrent() {
			errs = append(errs, fmt.Errorf(`advantage = "vtrace": not with net.encoder = %q (the learner's log-probabilities would need the rollout replayed through the recurrent encoder); use "gae"`, c.Net.Encoder))
		}
	default:
		bad("advantage", fmt.Sprintf("%q", c.Advantage), `"gae", "mc" or "vtrace"`)
	}
	if c.ActorLag < 0 || c.ActorLag > maxActorLag {
		bad("actor_lag", c.ActorLag, fmt.Sprintf("0 to %d updates", maxActorLag))
	}
	return errs
}

// estimate fills the rollout's advantages and value targets with the
// configured estimator. stale says that a lagged actor collected it: V-trace
// then recomputes what the learner's policy and critic make of it.
func (a *PPO) estimate(stale bool) error {
	r := a.roll
	buf := r.buf
	switch a.cfg.Advantage {
	case AdvantageVTrace:
		var logRhos []float32
		if stale {
			if err := a.relabel(); err != nil {
				return err
			}
			r.logRho = bufs.Grow(r.logRho, len(buf.LogProbs))
			for i, lp := range r.piLogp {
				r.logRho[i] = lp - buf.LogProbs[i]
			}
			logRhos = r.logRho
		}
		p := buffer.VTrace{Gamma: a.cfg.Gamma, Lambda: a.cfg.GAELambda, RhoClip: a.cfg.VTraceRhoClip, TraceClip: a.cfg.VTraceCClip}
		// The advantages carry no importance weight: PPO's ratio, taken
		// against the actor's log-probabilities kept in the buffer, is it.
		// (Taking the ratio against the learner's policy with IMPALA's
		// weighted advantages instead learnt far worse from stale data:
		// docs/benchmarks.md#v-trace.)
		return buf.ComputeVTrace(p, logRhos, r.fout.values)
	case AdvantageMC:
		return buf.ComputeReturns(a.cfg.Gamma, r.fout.values)
	}
	return buf.ComputeGAE(a.cfg.Gamma, a.cfg.GAELambda, r.fout.values)
}

// keepsFinalObs reports whether the rollout keeps the truncated episodes'
// final observations, for relabel.
func (a *PPO) keepsFinalObs() bool {
	return a.cfg.Advantage == AdvantageVTrace && a.cfg.ActorLag > 0
}

// relabel recomputes with the learner's (current) weights what a lagged
// actor's rollout holds of its own: the log-probabilities of the stored
// actions (into r.piLogp; the buffer keeps the actor's), the values of the
// stored observations (into the buffer), the values of the truncated episodes' final observations (kept
// in r.finObs) and the bootstrap values of the next observations (into
// r.fout). Agents that V-trace serves are not recurrent: every row is
// computed from its observation alone.
func (a *PPO) relabel() error {
	r := a.roll
	buf := r.buf
	n, err := a.nets()
	if err != nil {
		return err
	}
	rows, w := buf.Envs, buf.ObsSize
	r.piLogp = bufs.Grow(r.piLogp, len(buf.LogProbs))
	for t := range buf.Steps {
		lo, hi := t*rows, (t+1)*rows
		n.resize(a.dist, rows)
		mu, values, err := a.forward(n, buf.Obs[lo*w:hi*w], rows, 1, nil, false)
		if err != nil {
			return fmt.Errorf("v-trace: learner's forward pass: %w", err)
		}
		var masks []bool
		if buf.Masks != nil {
			masks = buf.Masks[lo*buf.MaskSize : hi*buf.MaskSize]
		}
		if err := a.logProbs(n, mu, buf.Actions[lo*buf.ActSize:hi*buf.ActSize], masks, rows); err != nil {
			return err
		}
		copy(r.piLogp[lo:hi], n.dist.logp[:rows])
		copy(buf.Values[lo:hi], values)
		if a.valNorm != nil {
			a.destandardize(buf.Values[lo:hi])
		}
	}
	if len(r.finIdx) > 0 {
		if err := a.values(r.finObs, nil, &r.fout); err != nil {
			return err
		}
		for k, i := range r.finIdx {
			buf.FinalValues[i] = r.fout.values[k]
		}
	}
	x := bufs.Grow(r.xfinal, a.inLen(r.obs))
	r.xfinal = x
	a.preprocess(x, r.obs, false)
	return a.values(x, nil, &r.fout)
}

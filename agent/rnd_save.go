package agent

import (
	"errors"
	"fmt"
	"math"

	"github.com/evolverl/evolve/internal/jsonfloat"
	"github.com/evolverl/evolve/netconf"
)

// In an agent file, an RND agent (rnd_coef > 0) also holds the tensors
//
//	rnd.predictor.<name>, rnd.critic.<name>, rnd.target.<name>   the three networks
//	rnd.adam.m.<tensor>, rnd.adam.v.<tensor>                     the moments of the predictor's
//	                                                             and the critic's tensors
//
// and its description the key "rnd": {adam, obs, ret} — the optimizer's
// settings and step, the observation statistics ({count, mean, var},
// exact) and the intrinsic returns' ({count, mean, var} of one value).

// rndJSON is the description's "rnd" entry.
type rndJSON struct {
	Adam adamJSON `json:"adam"`
	Obs  normJSON `json:"obs"`
	Ret  normJSON `json:"ret"`
}

// rndFile returns the RND module's tensors and description entry (none
// without RND).
func (a *PPO) rndFile() ([]namedTensor, *rndJSON) {
	m := a.rnd
	if m == nil {
		return nil, nil
	}
	var tensors, moments []namedTensor
	k := 0
	m.eachTensor(func(name string, shape []int, data *[]float32, trained bool) {
		tensors = append(tensors, namedTensor{Name: name, Shape: shape, Data: *data})
		if trained {
			moments = append(moments, namedTensor{Name: "rnd.adam.m." + name, Shape: shape, Data: m.adam.M[k]},
				namedTensor{Name: "rnd.adam.v." + name, Shape: shape, Data: m.adam.V[k]})
			k++
		}
	})
	d := &rndJSON{Adam: adamJSON{LR: m.adam.LR, Beta1: m.adam.Beta1, Beta2: m.adam.Beta2, Eps: m.adam.Eps, Step: m.adam.Step},
		Obs: *scalarNormJSON(m.obs), Ret: *scalarNormJSON(m.ret)}
	return append(tensors, moments...), d
}

// rndAllocate gives the agent zeroed RND networks of its config's specs
// and registers every RND tensor the file must hold with add.
func (a *PPO) rndAllocate(add func(name string, shape []int, dst *[]float32)) error {
	if !a.cfg.rndOn() {
		return nil
	}
	es, vs := a.cfg.rnd().specs(a.obsSpace.FlatSize())
	m := &rndModule{}
	var err error
	for _, p := range []struct {
		dst  *netconf.Params
		spec netconf.Spec
	}{{&m.target, es}, {&m.predictor, es}, {&m.critic, vs}} {
		if *p.dst, err = netconf.Zeros(p.spec); err != nil {
			return fmt.Errorf("rnd: %w", err)
		}
	}
	m.adam = &Adam{}
	m.eachTensor(func(name string, shape []int, data *[]float32, _ bool) { add(name, shape, data) })
	n := len(m.sizes())
	m.adam.M, m.adam.V = make([][]float32, n), make([][]float32, n)
	k := 0
	m.eachTensor(func(name string, shape []int, _ *[]float32, trained bool) {
		if trained {
			add("rnd.adam.m."+name, shape, &m.adam.M[k])
			add("rnd.adam.v."+name, shape, &m.adam.V[k])
			k++
		}
	})
	a.rnd = m
	return nil
}

// rndRestore checks the description's "rnd" entry against the config and
// restores the optimizer's settings and the statistics.
func (a *PPO) rndRestore(d *rndJSON) error {
	switch {
	case a.rnd == nil && d != nil:
		return errors.New("rnd: statistics given, but config.rnd_coef is 0")
	case a.rnd == nil:
		return nil
	case d == nil:
		return errors.New("rnd: missing, but config.rnd_coef > 0")
	}
	if err := checkAdam(d.Adam); err != nil {
		return fmt.Errorf("rnd: adam: %w", err)
	}
	m := a.rnd
	m.adam.LR, m.adam.Beta1, m.adam.Beta2, m.adam.Eps, m.adam.Step = d.Adam.LR, d.Adam.Beta1, d.Adam.Beta2, d.Adam.Eps, d.Adam.Step
	var err error
	if m.ret, err = loadScalarNorm(&d.Ret, "rnd_coef", true, "the intrinsic returns"); err != nil {
		return fmt.Errorf("rnd: ret: %w", err)
	}
	n := a.obsSpace.FlatSize()
	if len(d.Obs.Mean) != n || len(d.Obs.Var) != n {
		return fmt.Errorf("rnd: obs: %d means and %d variances for observations of size %d", len(d.Obs.Mean), len(d.Obs.Var), n)
	}
	if c := float64(d.Obs.Count); !(c > 0) || math.IsInf(c, 0) {
		return fmt.Errorf("rnd: obs: count = %v: want > 0", c)
	}
	for i := range n {
		if v, mu := float64(d.Obs.Var[i]), float64(d.Obs.Mean[i]); !(v >= 0) || math.IsInf(v, 0) || math.IsNaN(mu) || math.IsInf(mu, 0) {
			return fmt.Errorf("rnd: obs: mean[%d] = %v, var[%d] = %v: want finite, var >= 0", i, mu, i, v)
		}
	}
	m.obs = &RunningNorm{Mean: jsonfloat.Convert[float64](d.Obs.Mean), Var: jsonfloat.Convert[float64](d.Obs.Var), Count: float64(d.Obs.Count)}
	return nil
}

package agent

import "github.com/evolverl/evolve/envs"

// oneHot is how an agent reads Discrete and MultiDiscrete observations, as
// Stable-Baselines3's preprocess_obs does: each component becomes a one-hot
// vector of its number of values, concatenated in order, so the network's
// input is sum(nvec) wide while the env, the agent file and Act keep the
// raw values.
type oneHot struct {
	nvec  []int     // values per component
	start []float32 // the value of index 0 per component (Discrete's Start)
	width int       // the network's input width, sum(nvec)
}

func newOneHot(s envs.Space) *oneHot {
	h := &oneHot{}
	switch s := s.(type) {
	case envs.Discrete:
		h.nvec, h.start = []int{s.N}, []float32{float32(s.Start)}
	case envs.MultiDiscrete:
		h.nvec, h.start = s.Nvec, make([]float32, len(s.Nvec))
	}
	for _, n := range h.nvec {
		h.width += n
	}
	return h
}

// encode writes the one-hot rows of the raw observations raw (rows of
// len(nvec) values) into dst (rows of width). A value outside its
// component's range (which envs.Vector refuses before it gets here) sets
// no unit.
func (h *oneHot) encode(dst, raw []float32) {
	k := len(h.nvec)
	for r := 0; (r+1)*k <= len(raw); r++ {
		row := dst[r*h.width : (r+1)*h.width]
		clear(row)
		off := 0
		for j, n := range h.nvec {
			if i := int(raw[r*k+j] - h.start[j]); i >= 0 && i < n {
				row[off+i] = 1
			}
			off += n
		}
	}
}

// inWidth is the width of a preprocessed observation row, the networks'
// input: the one-hot width of a discrete observation, else its flat size.
func (a *PPO) inWidth() int {
	if a.oneHot != nil {
		return a.oneHot.width
	}
	return a.obsSpace.FlatSize()
}

// inLen is the length of the preprocessed rows of the raw observations raw.
func (a *PPO) inLen(raw []float32) int {
	return len(raw) / a.obsSpace.FlatSize() * a.inWidth()
}

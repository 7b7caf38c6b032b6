package agent

import (
	"slices"
	"strings"
	"testing"

	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/netconf"
)

// TestOneHotEncoding writes the one-hot rows of Discrete (with a Start) and
// MultiDiscrete observations by hand: each component its own block, in order,
// and a value outside its range no unit.
func TestOneHotEncoding(t *testing.T) {
	for _, c := range []struct {
		space envs.Space
		raw   []float32
		want  []float32
	}{
		{envs.Discrete{N: 3, Start: 1}, []float32{1, 3, 2}, []float32{1, 0, 0, 0, 0, 1, 0, 1, 0}},
		{envs.MultiDiscrete{Nvec: []int{3, 2}}, []float32{2, 0, 0, 1}, []float32{0, 0, 1, 1, 0, 1, 0, 0, 0, 1}},
		{envs.Discrete{N: 2}, []float32{5}, []float32{0, 0}},
	} {
		h := newOneHot(c.space)
		dst := slices.Repeat([]float32{7}, len(c.want)) // stale values are cleared
		h.encode(dst, c.raw)
		if !slices.Equal(dst, c.want) {
			t.Errorf("%v of %v: %v, want %v", c.space, c.raw, dst, c.want)
		}
	}
}

// TestDiscreteObservationsAreOneHot: an agent on Discrete(3) observations
// starting at 1 acts, values and saves exactly as an agent of the same seed
// on Box(3) observations given the one-hot vectors: the same network, whose
// input is the encoding. normalize_obs is refused for such an agent.
func TestDiscreteObservationsAreOneHot(t *testing.T) {
	for _, kind := range []netconf.EncoderKind{netconf.EncoderMLP, netconf.EncoderGRU} {
		t.Run(string(kind), func(t *testing.T) {
			cfg := probeConfig(kind)
			disc, err := New(envs.Discrete{N: 3, Start: 1}, envs.Discrete{N: 2}, cfg, 5)
			if err != nil {
				t.Fatal(err)
			}
			box, err := New(envs.NewBox(0, 1, 3), envs.Discrete{N: 2}, cfg, 5)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range []float32{2, 1, 3, 3} { // steps: the recurrent state carries
				hot := make([]float32, 3)
				hot[int(v)-1] = 1
				pd, err := disc.Policy([]float32{v}, nil)
				if err != nil {
					t.Fatal(err)
				}
				pb, err := box.Policy(hot, nil)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(pd.Probs[0], pb.Probs[0]) || !slices.Equal(pd.Values, pb.Values) {
					t.Fatalf("observation %v: probabilities %v and value %v, one-hot Box agent %v and %v", v, pd.Probs[0], pd.Values, pb.Probs[0], pb.Values)
				}
			}
			cfg.NormalizeObs = true
			if _, err := New(envs.Discrete{N: 3}, envs.Discrete{N: 2}, cfg, 5); err == nil || !strings.Contains(err.Error(), "normalize_obs") {
				t.Fatalf("normalize_obs with discrete observations: %v, want an error naming it", err)
			}
		})
	}
}

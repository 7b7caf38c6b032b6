package cli

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/envs"
)

// TestSampleMethodsDrawFromTheirDistributions draws many actions from a
// fixed policy and holds the frequencies against each method's
// distribution, written out by hand (four standard errors), and the
// behaviour log-probabilities against the exact ones.
func TestSampleMethodsDrawFromTheirDistributions(t *testing.T) {
	const draws = 40000
	p := []float32{0.6, 0.3, 0.1, 0} // the last choice masked
	pol := &agent.PolicyOutput{Probs: [][]float32{p}, Values: []float32{0}}
	space := envs.Discrete{N: 4, Start: 1}
	t2 := []float64{0.36, 0.09, 0.01, 0} // p² normalised: T = 1/2
	for i := range t2 {
		t2[i] /= 0.46
	}
	for _, tc := range []struct {
		m    sampleMethod
		want []float64
	}{
		{sampleMethod{name: "greedy", temperature: 1}, []float64{1, 0, 0, 0}},
		{sampleMethod{name: "stochastic", temperature: 1}, []float64{0.6, 0.3, 0.1, 0}},
		{sampleMethod{name: "temperature", temperature: 0.5}, t2},
		// ε = 0.3 over the three legal choices: 0.1 each, plus 0.7 on the greedy one.
		{sampleMethod{name: "epsilon", temperature: 1, epsilon: 0.3}, []float64{0.8, 0.1, 0.1, 0}},
	} {
		rng := rand.New(rand.NewPCG(1, 2))
		counts := make([]float64, 4)
		for range draws {
			c := tc.m.pick(pol, space, nil, rng)
			k := int(c.action[0]) - space.Start
			counts[k]++
			if got, want := float64(c.logProb), math.Log(float64(p[k])); math.Abs(got-want) > 1e-6 {
				t.Fatalf("%s: log π of choice %d is %g, want %g", tc.m.name, k, got, want)
			}
			if got, want := float64(c.behaviorProb), math.Log(tc.want[k]); math.Abs(got-want) > 1e-6 {
				t.Fatalf("%s: behaviour log-probability of choice %d is %g, want %g", tc.m.name, k, got, want)
			}
		}
		for k, q := range tc.want {
			f := counts[k] / draws
			if se := math.Sqrt(q * (1 - q) / draws); math.Abs(f-q) > 4*se+1e-12 {
				t.Errorf("%s: choice %d drawn %.4f of the time, want %.4f ± %.4f", tc.m.name, k, f, q, se)
			}
		}
	}
}

// TestSampleMethodsOnBitsAndBoxes checks the MultiBinary and Box cases:
// tempered bit probabilities σ(logit(p)/T), Gaussian spread std × T, and
// clipping to the bounds with the unclipped action's log π.
func TestSampleMethodsOnBitsAndBoxes(t *testing.T) {
	const draws = 40000
	rng := rand.New(rand.NewPCG(3, 4))
	bits := &agent.PolicyOutput{BitProbs: []float32{0.8, 0.1}, Values: []float32{0}}
	m := sampleMethod{name: "temperature", temperature: 2}
	ones := make([]float64, 2)
	for range draws {
		c := m.pick(bits, envs.MultiBinary{N: 2}, nil, rng)
		ones[0] += float64(c.action[0])
		ones[1] += float64(c.action[1])
	}
	for i, p := range []float64{0.8, 0.1} {
		q := 1 / (1 + math.Exp(-math.Log(p/(1-p))/2))
		if f, se := ones[i]/draws, math.Sqrt(q*(1-q)/draws); math.Abs(f-q) > 4*se {
			t.Errorf("bit %d is 1 in %.4f of draws, want σ(logit(%g)/2) = %.4f", i, f, p, q)
		}
	}

	box := envs.Box{Dims: []int{1}, Low: []float32{-5}, High: []float32{5}}
	gauss := &agent.PolicyOutput{Mean: []float32{0.2}, Std: []float32{0.1}, Values: []float32{0}}
	var sum, sq float64
	for range draws {
		c := m.pick(gauss, box, nil, rng)
		a := float64(c.action[0])
		sum, sq = sum+a, sq+a*a
		z := (a - 0.2) / 0.1
		if want := -0.5*z*z - math.Log(0.1) - 0.5*math.Log(2*math.Pi); math.Abs(float64(c.logProb)-want) > 1e-3 {
			t.Fatalf("log π(%g) = %g, want %g", a, c.logProb, want)
		}
		if want := -0.5*z*z/4 - math.Log(0.2) - 0.5*math.Log(2*math.Pi); math.Abs(float64(c.behaviorProb)-want) > 1e-3 {
			t.Fatalf("behaviour log-probability of %g = %g, want %g (std 0.2)", a, c.behaviorProb, want)
		}
	}
	mean := sum / draws
	std := math.Sqrt(sq/draws - mean*mean)
	if math.Abs(mean-0.2) > 4*0.2/math.Sqrt(draws) || math.Abs(std-0.2) > 0.01 {
		t.Errorf("tempered Gaussian: mean %.4f std %.4f, want 0.2 and 0.1 × 2", mean, std)
	}

	far := &agent.PolicyOutput{Mean: []float32{6}, Std: []float32{0.5}, Values: []float32{0}}
	c := sampleMethod{name: "greedy", temperature: 1}.pick(far, box, nil, rng)
	if c.action[0] != 5 || !math.IsNaN(float64(c.behaviorProb)) || math.Abs(float64(c.logProb)-(-math.Log(0.5)-0.5*math.Log(2*math.Pi))) > 1e-5 {
		t.Errorf("greedy beyond the bound: action %v, log π %g, behaviour %g; want 5 (clipped), log π of the mean, NaN",
			c.action, c.logProb, c.behaviorProb)
	}
}

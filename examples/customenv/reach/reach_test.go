package reach

import (
	"slices"
	"testing"

	"github.com/evolverl/evolve/envs"
)

// TestUnseededIsSeedZero: an env that was never seeded plays as seeded
// with 0, as the envs package asks of every env (the example's generator
// differed: its first episode unseeded was not Reset(0)'s).
func TestUnseededIsSeedZero(t *testing.T) {
	a, err := newReach(envs.Options{"size": 20})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := newReach(envs.Options{"size": 20})
	for ep := range 5 {
		x, _ := a.Reset(envs.NoSeed)
		seed := envs.NoSeed
		if ep == 0 {
			seed = 0
		}
		y, _ := b.Reset(seed)
		if !slices.Equal(x, y) {
			t.Fatalf("episode %d: unseeded %v, seeded with 0 %v", ep, x, y)
		}
	}
}

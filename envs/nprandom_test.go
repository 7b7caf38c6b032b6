package envs

import (
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"testing"
)

// numpyReference is testdata/numpy_pcg64.json, written by
// testdata/gen_numpy_pcg64.py with NumPy.
type numpyReference struct {
	NumPyVersion string `json:"numpy_version"`
	Cases        []struct {
		Seed              uint64    `json:"seed"`
		SeedSequenceState []string  `json:"seed_sequence_state"`
		Raw               []string  `json:"raw"`
		Random            []float64 `json:"random"`
		UniformPM005      []float64 `json:"uniform_pm005"`
		// IntegersAndRandom holds integers(-9999, 9999), integers(-9999,
		// 9999), random(), integers(-9999, 9999), random(), in this order.
		IntegersAndRandom []float64 `json:"integers_and_random"`
		// Shuffles holds shuffle(arange(52)) then shuffle(arange(104))
		// from one generator, and RandomAfterShuffles the random() after
		// them.
		Shuffles            [][]int `json:"shuffles"`
		RandomAfterShuffles float64 `json:"random_after_shuffles"`
	} `json:"cases"`
}

func readNumpyReference(t *testing.T) numpyReference {
	t.Helper()
	data, err := os.ReadFile("testdata/numpy_pcg64.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref numpyReference
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatalf("testdata/numpy_pcg64.json: %v", err)
	}
	if len(ref.Cases) == 0 {
		t.Fatal("testdata/numpy_pcg64.json has no cases")
	}
	return ref
}

func parseHex64(t *testing.T, s string) uint64 {
	t.Helper()
	x, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// TestNpRandomMatchesNumPy holds the port to NumPy's own numbers, bit for
// bit: the SeedSequence state, PCG64's raw output, Generator.random,
// Generator.uniform, Generator.integers interleaved with doubles (the
// 32-bit draws share 64-bit outputs) and Generator.shuffle.
func TestNpRandomMatchesNumPy(t *testing.T) {
	ref := readNumpyReference(t)
	for _, c := range ref.Cases {
		w := seedSequenceState(c.Seed)
		for i, s := range c.SeedSequenceState {
			if want := parseHex64(t, s); w[i] != want {
				t.Errorf("seed %d: SeedSequence word %d = %#x, want %#x", c.Seed, i, w[i], want)
			}
		}
		var g npRandom
		g.Seed(c.Seed)
		for i, s := range c.Raw {
			if got, want := g.Uint64(), parseHex64(t, s); got != want {
				t.Fatalf("seed %d: raw output %d = %#x, want %#x", c.Seed, i, got, want)
			}
		}
		g.Seed(c.Seed)
		for i, want := range c.Random {
			if got := g.Float64(); got != want {
				t.Fatalf("seed %d: random %d = %v, want %v", c.Seed, i, got, want)
			}
		}
		g.Seed(c.Seed)
		for i, want := range c.UniformPM005 {
			if got := g.Uniform(-0.05, 0.05); got != want {
				t.Fatalf("seed %d: uniform %d = %v, want %v", c.Seed, i, got, want)
			}
		}
		g.Seed(c.Seed)
		for i, want := range c.IntegersAndRandom {
			var got float64
			if i == 2 || i == 4 {
				got = g.Float64()
			} else {
				got = float64(g.Integers(-9999, 9999))
			}
			if got != want {
				t.Fatalf("seed %d: draw %d of integers/random = %v, want %v", c.Seed, i, got, want)
			}
		}
		g.Seed(c.Seed)
		for _, want := range c.Shuffles {
			got := make([]int, len(want))
			for i := range got {
				got[i] = i
			}
			g.Shuffle(got)
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d: shuffle of %d = %v, want %v", c.Seed, len(want), got, want)
			}
		}
		if got := g.Float64(); got != c.RandomAfterShuffles {
			t.Errorf("seed %d: random after the shuffles = %v, want %v", c.Seed, got, c.RandomAfterShuffles)
		}
	}
}

// TestNpRandomAllocatesNothing: re-seeding and every kind of draw are free
// of allocations, so an env's Reset stays so.
func TestNpRandomAllocatesNothing(t *testing.T) {
	var g npRandom
	seed := uint64(0)
	allocs := testing.AllocsPerRun(100, func() {
		seed += 1 << 31
		g.Seed(seed)
		g.Uniform(-1, 1)
		g.Integers(-9999, 9999)
		g.Uint64()
	})
	if allocs != 0 {
		t.Errorf("%v allocations per seed and draws, want 0", allocs)
	}
}

func TestNpRandomIntegersStayInRange(t *testing.T) {
	var g npRandom
	g.Seed(3)
	for _, span := range []int64{1, 2, 3, 7, 19998, 1<<31 + 1, 1<<32 - 1} {
		for range 1000 {
			if x := g.Integers(-5, -5+span); x < -5 || x >= -5+span {
				t.Fatalf("Integers(-5, %d) = %d", -5+span, x)
			}
		}
	}
}

func BenchmarkNpRandom(b *testing.B) {
	var g npRandom
	b.Run("Seed", func(b *testing.B) {
		for i := range b.N {
			g.Seed(uint64(i))
		}
	})
	b.Run("Uniform", func(b *testing.B) {
		g.Seed(1)
		for range b.N {
			g.Uniform(-0.05, 0.05)
		}
	})
}

package envs

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// popgymStep is one step of an episode: the observation it led to (the
// first one is Reset's, with no reward), its reward and flags.
type popgymStep struct {
	obs         []float32
	reward      float64
	term, trunc bool
}

// recordEpisode plays one episode of env from Reset(seed), choosing each
// action with policy(observations so far), and returns its steps (steps[0]
// holds the first observation). It fails the test past 10,000 steps or on
// a step after the end.
func recordEpisode(t *testing.T, env Env, seed int64, policy func(seen [][]float32) int) []popgymStep {
	t.Helper()
	obs, _ := env.Reset(seed)
	steps := []popgymStep{{obs: slices.Clone(obs)}}
	seen := [][]float32{steps[0].obs}
	for len(steps) <= 10_000 {
		obs, r, term, trunc, _ := env.Step([]float32{float32(policy(seen))})
		s := popgymStep{slices.Clone(obs), r, term, trunc}
		steps = append(steps, s)
		seen = append(seen, s.obs)
		if term || trunc {
			return steps
		}
	}
	t.Fatal("no end after 10,000 steps")
	return nil
}

// returnOf sums an episode's rewards.
func returnOf(steps []popgymStep) float64 {
	ret := 0.0
	for _, s := range steps[1:] {
		ret += s.reward
	}
	return ret
}

func mustMake(t *testing.T, id string, opts Options) Env {
	t.Helper()
	env, err := Make(id, opts)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// TestPOPGymIDsAndSpaces: every id POPGym registers for the five tasks
// builds, with POPGym's spaces; the difficulty ids take no options, the
// base ids take POPGym's and refuse bad values naming them.
func TestPOPGymIDsAndSpaces(t *testing.T) {
	cart, _ := NewBoxBounds([]float32{-4.8, float32(-cpThetaThreshold * 2)}, []float32{4.8, float32(cpThetaThreshold * 2)})
	suit := Discrete{N: 4}
	for _, c := range []struct {
		id       string
		obs, act Space
	}{
		{"popgym-RepeatPrevious-v0", suit, suit},
		{"popgym-RepeatPreviousEasy-v0", suit, suit},
		{"popgym-RepeatPreviousMedium-v0", suit, suit},
		{"popgym-RepeatPreviousHard-v0", suit, suit},
		{"popgym-CountRecall-v0", MultiDiscrete{Nvec: []int{2, 2}}, Discrete{N: 27}},
		{"popgym-CountRecallEasy-v0", MultiDiscrete{Nvec: []int{2, 2}}, Discrete{N: 27}},
		{"popgym-CountRecallMedium-v0", MultiDiscrete{Nvec: []int{4, 4}}, Discrete{N: 27}},
		{"popgym-CountRecallHard-v0", MultiDiscrete{Nvec: []int{13, 13}}, Discrete{N: 17}},
		{"popgym-Autoencode-v0", MultiDiscrete{Nvec: []int{2, 4}}, suit},
		{"popgym-AutoencodeEasy-v0", MultiDiscrete{Nvec: []int{2, 4}}, suit},
		{"popgym-AutoencodeMedium-v0", MultiDiscrete{Nvec: []int{2, 4}}, suit},
		{"popgym-AutoencodeHard-v0", MultiDiscrete{Nvec: []int{2, 4}}, suit},
		{"popgym-PositionOnlyCartPole-v0", cart, Discrete{N: 2}},
		{"popgym-PositionOnlyCartPoleEasy-v0", cart, Discrete{N: 2}},
		{"popgym-PositionOnlyCartPoleMedium-v0", cart, Discrete{N: 2}},
		{"popgym-PositionOnlyCartPoleHard-v0", cart, Discrete{N: 2}},
		{"popgym-NoisyPositionOnlyCartPole-v0", cart, Discrete{N: 2}},
		{"popgym-NoisyPositionOnlyCartPoleEasy-v0", cart, Discrete{N: 2}},
		{"popgym-NoisyPositionOnlyCartPoleMedium-v0", cart, Discrete{N: 2}},
		{"popgym-NoisyPositionOnlyCartPoleHard-v0", cart, Discrete{N: 2}},
	} {
		env := mustMake(t, c.id, nil)
		if _, limited := env.(*TimeLimit); limited {
			t.Errorf("%s: wrapped in a time limit; POPGym's envs end their episodes themselves", c.id)
		}
		if got := env.ObservationSpace(); !SameSpace(got, c.obs) {
			t.Errorf("%s: observation space %v, want %v", c.id, got, c.obs)
		}
		if got := env.ActionSpace(); !SameSpace(got, c.act) {
			t.Errorf("%s: action space %v, want %v", c.id, got, c.act)
		}
		if !strings.HasSuffix(c.id, "Easy-v0") && !strings.HasSuffix(c.id, "Medium-v0") && !strings.HasSuffix(c.id, "Hard-v0") {
			continue
		}
		if _, err := Make(c.id, Options{"num_decks": 2}); err == nil || !strings.Contains(err.Error(), "num_decks") {
			t.Errorf("%s with num_decks: %v, want an error naming the option", c.id, err)
		}
	}
	for _, c := range []struct {
		id   string
		opts Options
		want string
	}{
		{"popgym-RepeatPrevious-v0", Options{"k": 52}, "k = 52"},
		{"popgym-RepeatPrevious-v0", Options{"k": 0}, "k = 0"},
		{"popgym-RepeatPrevious-v0", Options{"num_decks": 0}, "num_decks = 0"},
		{"popgym-CountRecall-v0", Options{"deck_type": "jokers"}, `"deck_type" = jokers`},
		{"popgym-CountRecall-v0", Options{"error_clamp": 0.5}, "error_clamp"},
		{"popgym-Autoencode-v0", Options{"num_decks": 1001}, "num_decks = 1001"},
		{"popgym-PositionOnlyCartPole-v0", Options{"max_episode_length": 0}, "max_episode_length = 0"},
		{"popgym-NoisyPositionOnlyCartPole-v0", Options{"noise_sigma": -0.1}, "noise_sigma = -0.1"},
	} {
		if _, err := Make(c.id, c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: %v, want an error containing %q", c.id, c.opts, err, c.want)
		}
	}
	// Options change the base ids' tasks.
	if env := mustMake(t, "popgym-CountRecall-v0", Options{"num_decks": 4, "deck_type": "ranks"}); !SameSpace(env.ActionSpace(), Discrete{N: 17}) {
		t.Errorf("CountRecall with 4 decks of ranks: action space %v, want Discrete(17)", env.ActionSpace())
	}
}

// TestCardDeckHoldsEveryCard: a deck of d decks deals each card number
// once, in an order the seed decides, with 13d cards of each suit, 26d of
// each colour and 4d of each rank, colours following suits (spades and
// clubs black).
func TestCardDeckHoldsEveryCard(t *testing.T) {
	var rng npRandom
	rng.Seed(3)
	deck := newCardDeck(2)
	deck.shuffle(&rng)
	first := slices.Clone(deck.order)
	var suits [4]int
	var colors [2]int
	var ranks [13]int
	seen := make([]bool, deck.size())
	for deck.left() > 0 {
		c := deck.deal()
		if seen[c] {
			t.Fatalf("card %d dealt twice", c)
		}
		seen[c] = true
		suits[cardSuit(c)]++
		colors[cardColor(c)]++
		ranks[cardRank(c)]++
		if cardColor(c) != cardSuit(c)%2 {
			t.Fatalf("card %d: colour %d, suit %d", c, cardColor(c), cardSuit(c))
		}
	}
	if suits != [4]int{26, 26, 26, 26} || colors != [2]int{52, 52} || ranks != [13]int{8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8} {
		t.Errorf("suits %v, colours %v, ranks %v", suits, colors, ranks)
	}
	deck.shuffle(&rng)
	if slices.Equal(deck.order, first) {
		t.Error("the second shuffle dealt the first's order")
	}
	rng.Seed(3)
	deck.shuffle(&rng)
	if !slices.Equal(deck.order, first) {
		t.Error("the same seed shuffled another order")
	}
}

// repeatAnswer is RepeatPrevious's right answer to the next step, from the
// suits seen so far (0 where the step is not scored).
func repeatAnswer(seen [][]float32, k int) int {
	if s := len(seen); s >= k {
		return int(seen[s-k][0])
	}
	return 0
}

// TestRepeatPreviousRules: at every level the observation is the dealt
// card's suit; answering the suit shown k steps before earns exactly 1 in
// N − 1 steps, terminated only on the last; the first k − 1 steps earn 0
// whatever the action, every later one ±1/(N − k); repeating the suit just
// shown, which is the answer only when k = 1, earns about chance.
func TestRepeatPreviousRules(t *testing.T) {
	for _, c := range []struct{ decks, k int }{{1, 4}, {2, 32}, {3, 64}, {1, 1}} {
		r, err := NewRepeatPrevious(RepeatPreviousConfig{Decks: c.decks, K: c.k})
		if err != nil {
			t.Fatal(err)
		}
		n := 52 * c.decks
		scale := 1 / float64(n-c.k)
		right := func(seen [][]float32) int { return repeatAnswer(seen, c.k) }
		steps := recordEpisode(t, r, 7, right)
		if len(steps)-1 != n-1 || math.Abs(returnOf(steps)-1) > 1e-9 {
			t.Errorf("decks %d, k %d, right answers: return %v in %d steps, want 1 in %d", c.decks, c.k, returnOf(steps), len(steps)-1, n-1)
		}
		for s, st := range steps {
			if want := cardSuit(r.deck.order[n-1-s]); st.obs[0] != float32(want) {
				t.Fatalf("observation %d is %v, the dealt card's suit %d", s, st.obs[0], want)
			}
			if s == 0 {
				continue
			}
			if st.term != (s == n-1) || st.trunc {
				t.Fatalf("step %d of %d: terminated %v, truncated %v", s, n-1, st.term, st.trunc)
			}
			want := scale
			if s < c.k {
				want = 0 // not scored
			}
			if st.reward != want {
				t.Fatalf("step %d, right answer: reward %v, want %v", s, st.reward, want)
			}
		}
		// At step k each of the 4 actions: only the first suit shown earns;
		// before it, none counts.
		for a := range 4 {
			r.Reset(7)
			for s := 1; s < c.k; s++ {
				if _, rew, _, _, _ := r.Step([]float32{float32(a)}); rew != 0 {
					t.Fatalf("step %d < k: reward %v for action %d, want 0", s, rew, a)
				}
			}
			want := -scale
			if a == int(r.shown[0]) {
				want = scale
			}
			if _, rew, _, _, _ := r.Step([]float32{float32(a)}); rew != want {
				t.Errorf("decks %d, k %d, step k, action %d (answer %d): reward %v, want %v", c.decks, c.k, a, r.shown[0], rew, want)
			}
		}
		copyLast := func(seen [][]float32) int { return int(seen[len(seen)-1][0]) }
		mean := 0.0
		for ep := range 200 {
			mean += returnOf(recordEpisode(t, r, int64(ep), copyLast)) / 200
		}
		if c.k == 1 && math.Abs(mean-1) > 1e-9 {
			t.Errorf("k = 1: repeating the last suit returned %v, want 1", mean)
		}
		if c.k > 1 && (mean < -0.65 || mean > -0.35) {
			t.Errorf("decks %d, k %d: repeating the last suit returned %v on average, want about chance (−0.5)", c.decks, c.k, mean)
		}
	}
}

// countAnswer is CountRecall's right answer: the count, among the values
// observed so far with the current one, of the current query's kind.
func countAnswer(seen [][]float32) int {
	q, n := seen[len(seen)-1][1], 0
	for _, o := range seen {
		if o[0] == q {
			n++
		}
	}
	return n
}

// TestCountRecallRules: at every level, counting the values dealt so far,
// the current one included, earns exactly 1 in N − 1 steps, every step
// ±1/(N − 1); leaving the current card out of the count loses whenever the
// current value is of the queried kind; the values dealt over an episode
// are N/K of each kind, so the last count reaches the action space's top.
func TestCountRecallRules(t *testing.T) {
	for _, c := range []struct {
		decks int
		count string
		kinds int
	}{{1, CountColors, 2}, {2, CountSuits, 4}, {4, CountRanks, 13}} {
		env, err := NewCountRecall(CountRecallConfig{Decks: c.decks, Count: c.count})
		if err != nil {
			t.Fatal(err)
		}
		n := 52 * c.decks
		scale := 1 / float64(n-1)
		steps := recordEpisode(t, env, 11, countAnswer)
		if len(steps)-1 != n-1 || math.Abs(returnOf(steps)-1) > 1e-9 || !steps[len(steps)-1].term {
			t.Errorf("%s, right counts: return %v in %d steps, want 1 in %d, terminated", c.count, returnOf(steps), len(steps)-1, n-1)
		}
		perKind := make([]int, c.kinds)
		for _, st := range steps {
			perKind[int(st.obs[0])]++
		}
		for k, got := range perKind {
			if got != n/c.kinds || got != env.ActionSpace().(Discrete).N-1 {
				t.Errorf("%s: %d values of kind %d dealt, want %d", c.count, got, k, n/c.kinds)
			}
		}
		// Leaving out the current card.
		before := func(seen [][]float32) int {
			last := seen[len(seen)-1]
			if last[0] == last[1] {
				return countAnswer(seen) - 1
			}
			return countAnswer(seen)
		}
		steps = recordEpisode(t, env, 12, before)
		for s := 1; s < len(steps); s++ {
			prev := steps[s-1].obs
			want := scale
			if prev[0] == prev[1] {
				want = -scale
			}
			if steps[s].reward != want {
				t.Fatalf("%s, step %d after [%v %v], count without it: reward %v, want %v", c.count, s, prev[0], prev[1], steps[s].reward, want)
			}
		}
	}
}

// TestAutoencodeRules: at every level the first N − 1 observations carry
// flag 1 and the dealt card's suit, the N-th (after N − 1 steps) flag 0
// and the last card's suit, then [0, 0]; watch steps earn 0 whatever the
// action; naming the suits in reverse order earns exactly 1 in 2N − 1
// steps, every answer +1/N; naming them in the order shown earns about
// chance.
func TestAutoencodeRules(t *testing.T) {
	for _, decks := range []int{1, 2, 3} {
		e, err := NewAutoencode(decks)
		if err != nil {
			t.Fatal(err)
		}
		n := 52 * decks
		shown := func(seen [][]float32) []int {
			var suits []int
			for i, o := range seen {
				if i < n {
					suits = append(suits, int(o[1]))
				}
			}
			return suits
		}
		rng := rand.New(rand.NewPCG(uint64(decks), 0))
		reverse := func(seen [][]float32) int {
			if s := len(seen); s >= n {
				return shown(seen)[2*n-1-s]
			}
			return rng.IntN(4) // ignored while watching
		}
		steps := recordEpisode(t, e, 5, reverse)
		if len(steps)-1 != 2*n-1 || math.Abs(returnOf(steps)-1) > 1e-9 {
			t.Errorf("%d decks, reversed: return %v in %d steps, want 1 in %d", decks, returnOf(steps), len(steps)-1, 2*n-1)
		}
		for s, st := range steps {
			flag, suit := st.obs[0], st.obs[1]
			switch {
			case s < n-1 && (flag != 1 || suit != float32(cardSuit(e.deck.order[n-1-s]))):
				t.Fatalf("watch observation %d is %v, want [1 %d]", s, st.obs, cardSuit(e.deck.order[n-1-s]))
			case s == n-1 && (flag != 0 || suit != float32(cardSuit(e.deck.order[0]))):
				t.Fatalf("last watch observation %v, want [0 %d]", st.obs, cardSuit(e.deck.order[0]))
			case s >= n && (flag != 0 || suit != 0):
				t.Fatalf("play observation %d is %v, want [0 0]", s, st.obs)
			case s > 0 && s < n && st.reward != 0:
				t.Fatalf("watch step %d earned %v", s, st.reward)
			case s >= n && st.reward != 1/float64(n):
				t.Fatalf("play step %d, right answer: reward %v, want %v", s, st.reward, 1/float64(n))
			case s > 0 && st.term != (s == 2*n-1):
				t.Fatalf("step %d of %d: terminated %v", s, 2*n-1, st.term)
			}
		}
		inOrder := func(seen [][]float32) int {
			if s := len(seen); s >= n {
				return shown(seen)[s-n]
			}
			return 0
		}
		mean := 0.0
		for ep := range 100 {
			mean += returnOf(recordEpisode(t, e, int64(ep), inOrder)) / 100
		}
		if mean < -0.7 || mean > -0.3 {
			t.Errorf("%d decks: naming the suits in the order shown returned %v on average, want about chance (−0.5)", decks, mean)
		}
	}
}

// TestPositionOnlyCartPoleIsCartPole: beside a CartPole seeded alike and
// given the same actions, every observation is CartPole's [x, θ], every
// reward 1/L, and the episode ends where CartPole's does, or truncated
// after L steps; a step past the end (CartPole's reward 0) costs −1, as
// in POPGym.
func TestPositionOnlyCartPoleIsCartPole(t *testing.T) {
	for _, limit := range []int{200, 400, 600, 7} {
		p, err := NewPositionOnlyCartPole(PositionOnlyCartPoleConfig{MaxEpisodeLength: limit})
		if err != nil {
			t.Fatal(err)
		}
		cart := NewCartPole()
		rng := rand.New(rand.NewPCG(uint64(limit), 1))
		for ep := range 20 {
			obs, _ := p.Reset(int64(ep))
			full, _ := cart.Reset(int64(ep))
			for step := 1; ; step++ {
				if obs[0] != full[0] || obs[1] != full[2] {
					t.Fatalf("L %d, episode %d, step %d: observation %v, CartPole's %v", limit, ep, step-1, obs, full)
				}
				a := []float32{float32(rng.IntN(2))}
				var r float64
				var term, trunc bool
				obs, r, term, trunc, _ = p.Step(a)
				var cartTerm bool
				full, _, cartTerm, _, _ = cart.Step(a)
				if r != 1/float64(limit) || term != cartTerm || trunc != (step >= limit) {
					t.Fatalf("L %d, step %d: reward %v, terminated %v, truncated %v; want %v, %v, %v",
						limit, step, r, term, trunc, 1/float64(limit), cartTerm, step >= limit)
				}
				if term || trunc {
					if term {
						if _, r, _, _, _ := p.Step(a); r != -1 {
							t.Errorf("a step past the end earned %v, want POPGym's −1", r)
						}
					}
					break
				}
			}
		}
	}
}

// TestNoisyPositionOnlyCartPoleNoise measures the noise at every level
// against the true state: mean 0 and standard deviation noise_sigma
// (within 5 standard errors over 20,000 values of x, which the bounds
// never clip), every θ within the observation space; the start state is
// the noiseless env's from the same seed.
func TestNoisyPositionOnlyCartPoleNoise(t *testing.T) {
	for _, std := range []float64{0.1, 0.2, 0.3} {
		env := mustMake(t, "popgym-NoisyPositionOnlyCartPole-v0", Options{"noise_sigma": std})
		p := env.(*PositionOnlyCartPole)
		quiet, _ := NewPositionOnlyCartPole(PositionOnlyCartPoleConfig{MaxEpisodeLength: 200})
		var noise []float64
		rng := rand.New(rand.NewPCG(2, 3))
		for ep := int64(0); len(noise) < 20_000; ep++ {
			obs, _ := p.Reset(ep)
			quiet.Reset(ep)
			if p.cart.state != quiet.cart.state {
				t.Fatalf("seed %d: start state %v, the noiseless env's %v", ep, p.cart.state, quiet.cart.state)
			}
			for {
				noise = append(noise, float64(obs[0])-float64(float32(p.cart.state[0])))
				if !p.ObservationSpace().Contains(obs) {
					t.Fatalf("observation %v outside %v", obs, p.ObservationSpace())
				}
				var term, trunc bool
				obs, _, term, trunc, _ = p.Step([]float32{float32(rng.IntN(2))})
				if term || trunc {
					break
				}
			}
		}
		mean, sd := meanStd(noise)
		k := float64(len(noise))
		if math.Abs(mean) > 5*std/math.Sqrt(k) || math.Abs(sd-std) > 5*std/math.Sqrt(2*k) {
			t.Errorf("noise_sigma %v: the noise on x has mean %.5f and sd %.5f over %v values", std, mean, sd, k)
		}
	}
}

// popgymLevelIDs lists the ids of POPGym's difficulties (the ids that end
// in Easy-v0, Medium-v0 or Hard-v0).
func popgymLevelIDs() []string {
	var ids []string
	for _, id := range IDs() {
		for _, l := range []string{"Easy-v0", "Medium-v0", "Hard-v0"} {
			if strings.HasPrefix(id, "popgym-") && strings.HasSuffix(id, l) {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// TestPOPGymLevels: each difficulty id builds POPGym's parameters.
func TestPOPGymLevels(t *testing.T) {
	want := map[string]string{
		"RepeatPreviousEasy": "1 4", "RepeatPreviousMedium": "2 32", "RepeatPreviousHard": "3 64",
		"CountRecallEasy": "1 2", "CountRecallMedium": "2 4", "CountRecallHard": "4 13",
		"AutoencodeEasy": "1", "AutoencodeMedium": "2", "AutoencodeHard": "3",
		"PositionOnlyCartPoleEasy": "200 0", "PositionOnlyCartPoleMedium": "400 0", "PositionOnlyCartPoleHard": "600 0",
		"NoisyPositionOnlyCartPoleEasy": "200 0.1", "NoisyPositionOnlyCartPoleMedium": "200 0.2", "NoisyPositionOnlyCartPoleHard": "200 0.3",
	}
	ids := popgymLevelIDs()
	if len(ids) != len(want) {
		t.Errorf("%d difficulty ids %v, want %d", len(ids), ids, len(want))
	}
	for _, id := range ids {
		var got string
		switch e := mustMake(t, id, nil).(type) {
		case *RepeatPrevious:
			got = fmt.Sprint(e.deck.size()/52, e.k)
		case *CountRecall:
			got = fmt.Sprint(e.values.size()/52, len(e.counts))
		case *Autoencode:
			got = fmt.Sprint(e.deck.size() / 52)
		case *PositionOnlyCartPole:
			got = fmt.Sprint(e.limit, e.noiseStd)
		}
		name := strings.TrimSuffix(strings.TrimPrefix(id, "popgym-"), "-v0")
		if got != want[name] {
			t.Errorf("%s: parameters %q, want %q", id, got, want[name])
		}
	}
}

// TestPOPGymSeeding: for every difficulty id, the same seed gives the same
// episode under the same actions, and another seed, or the reset after it
// that continues the stream, another.
func TestPOPGymSeeding(t *testing.T) {
	for _, id := range popgymLevelIDs() {
		env := mustMake(t, id, nil)
		n := env.ActionSpace().(Discrete).N
		play := func(seed int64) []popgymStep {
			rng := rand.New(rand.NewPCG(9, 9))
			return recordEpisode(t, env, seed, func([][]float32) int { return rng.IntN(n) })
		}
		a, b := play(4), play(4)
		next, other := play(NoSeed), play(5)
		if !sameSteps(a, b) {
			t.Errorf("%s: two episodes from seed 4 differ", id)
		}
		if sameSteps(a, other) || sameSteps(a, next) {
			t.Errorf("%s: seed 5, or the reset after seed 4, replayed seed 4's episode", id)
		}
	}
}

func sameSteps(a, b []popgymStep) bool {
	return slices.EqualFunc(a, b, func(x, y popgymStep) bool {
		return slices.Equal(x.obs, y.obs) && x.reward == y.reward && x.term == y.term && x.trunc == y.trunc
	})
}

// TestPOPGymAllocatesNothing: steps and resets (the shuffles included)
// allocate nothing, so that a vector of them steps without garbage.
func TestPOPGymAllocatesNothing(t *testing.T) {
	for _, id := range popgymLevelIDs() {
		env := mustMake(t, id, nil)
		env.Reset(1)
		action := []float32{1}
		allocs := testing.AllocsPerRun(500, func() {
			if _, _, term, trunc, _ := env.Step(action); term || trunc {
				env.Reset(NoSeed)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per step", id, allocs)
		}
	}
}

// BenchmarkPOPGymStep measures one step of each task's Hard level under a
// constant action, the resets (a shuffle for the card games) included.
func BenchmarkPOPGymStep(b *testing.B) {
	for _, task := range []string{"RepeatPrevious", "CountRecall", "Autoencode", "PositionOnlyCartPole", "NoisyPositionOnlyCartPole"} {
		b.Run(task, func(b *testing.B) {
			env, err := Make("popgym-"+task+"Hard-v0", nil)
			if err != nil {
				b.Fatal(err)
			}
			env.Reset(1)
			action := []float32{1}
			b.ReportAllocs()
			for b.Loop() {
				if _, _, term, trunc, _ := env.Step(action); term || trunc {
					env.Reset(NoSeed)
				}
			}
		})
	}
}

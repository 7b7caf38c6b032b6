package envs

import (
	"errors"
	"fmt"
)

// RepeatPrevious is POPGym's Repeat Previous: the agent is shown the suit
// of one card of a shuffled pile of decks × 52 cards per step and must
// name the suit shown k steps before. Observation o₀ is the first card's
// suit (Reset), o_s the card dealt by step s; action s (s = 1, 2, …, the
// s-th Step) is scored against o_{s−k}, so with k = 1 the agent repeats
// the suit it was just shown, and it must hold k suits in memory. The
// first k − 1 actions are not scored; every later one earns +1/(N − k)
// when right and −1/(N − k) when wrong, N = 52·decks, so an episode's
// return lies in [−1, 1]. The episode terminates after N − 1 steps, when
// the last card is dealt.
//
// Observation Discrete(4), the suit (0 spades, 1 diamonds, 2 clubs,
// 3 hearts); action Discrete(4). POPGym's levels: Easy 1 deck, k = 4;
// Medium 2 decks, k = 32; Hard 3 decks, k = 64. The deck is shuffled with
// NumPy's shuffle from the env's generator, so Reset(seed) deals what
// POPGym's reset(seed=seed) deals, and a NoSeed reset what its unseeded
// reset() deals next.
type RepeatPrevious struct {
	k      int
	scale  float64 // 1/(N − k)
	deck   cardDeck
	shown  []int8 // o₀, o₁, …: the suits shown this episode
	stream stream
	obs    [1]float32
}

// RepeatPreviousConfig holds RepeatPrevious's parameters, POPGym's
// num_decks and k.
type RepeatPreviousConfig struct {
	Decks int // the decks shuffled together, 1 to 1000
	K     int // how many steps back the answer lies, 1 to 52·Decks − 1
}

// NewRepeatPrevious returns a RepeatPrevious; call Reset before Step.
func NewRepeatPrevious(c RepeatPreviousConfig) (*RepeatPrevious, error) {
	if err := checkDecks("RepeatPrevious", c.Decks); err != nil {
		return nil, err
	}
	n := c.Decks * cardsPerDeck
	// POPGym asserts k < N; k = 0 would index its hand with -0, the first
	// card, which is another task (its RepeatFirst).
	if c.K < 1 || c.K >= n {
		return nil, fmt.Errorf("RepeatPrevious: k = %d: want 1 to %d (fewer than the %d cards)", c.K, n-1, n)
	}
	return &RepeatPrevious{k: c.K, scale: 1 / float64(n-c.K), deck: newCardDeck(c.Decks), shown: make([]int8, 0, n)}, nil
}

// ObservationSpace returns Discrete(4), the suit shown.
func (r *RepeatPrevious) ObservationSpace() Space { return Discrete{N: 4} }

// ActionSpace returns Discrete(4), a suit.
func (r *RepeatPrevious) ActionSpace() Space { return Discrete{N: 4} }

// Reset shuffles the decks and shows the first card.
func (r *RepeatPrevious) Reset(seed int64) ([]float32, Info) {
	r.deck.shuffle(r.stream.resetNumPy(seed))
	r.shown = r.shown[:0]
	return r.show(), Info{}
}

// Step scores the action against the suit shown k steps before and shows
// the next card.
func (r *RepeatPrevious) Step(action []float32) ([]float32, float64, bool, bool, Info) {
	if len(r.shown) == 0 || r.deck.left() == 0 {
		panic("envs: RepeatPrevious: Step before Reset or after the episode ended")
	}
	a := discreteAction("RepeatPrevious", action, 4)
	s := len(r.shown) // this is step s: o₀ … o_{s−1} have been shown
	reward := 0.0
	if s >= r.k {
		reward = r.scale
		if a != int(r.shown[s-r.k]) {
			reward = -r.scale
		}
	}
	terminated := r.deck.left() == 1
	return r.show(), reward, terminated, false, Info{}
}

// show deals the next card and returns its suit as the observation.
func (r *RepeatPrevious) show() []float32 {
	suit := cardSuit(r.deck.deal())
	r.shown = append(r.shown, int8(suit))
	r.obs[0] = float32(suit)
	return r.obs[:]
}

func init() {
	level := func(name string, decks, k int) popgymLevel {
		return popgymLevel{name: name, summary: fmt.Sprintf("%s, name the suit shown %d steps before", decksText(decks), k),
			make: func() (Env, error) { return NewRepeatPrevious(RepeatPreviousConfig{Decks: decks, K: k}) }}
	}
	registerPOPGym("RepeatPrevious", "name the suit of the card shown k steps before", []string{"num_decks", "k"},
		func(o Options) (Env, error) {
			decks, errDecks := o.Int("num_decks", 1)
			k, errK := o.Int("k", 4)
			if err := errors.Join(errDecks, errK); err != nil {
				return nil, err
			}
			return NewRepeatPrevious(RepeatPreviousConfig{Decks: decks, K: k})
		},
		level("Easy", 1, 4), level("Medium", 2, 32), level("Hard", 3, 64))
}

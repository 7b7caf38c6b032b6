package envs

import "fmt"

// Autoencode is POPGym's Autoencode, Simon backwards: in a watch phase
// the agent is shown the suits of a shuffled pile of decks × 52 cards, one
// per step, and in the play phase that follows it must name them back in
// reverse order, the last card shown first. The observation is a pair
// [flag, suit]: flag 1 while cards are still to come, 0 from the
// observation that shows the last card on, which tells the agent that its
// next action is scored; in the play phase it is [0, 0]. Actions during
// the watch phase are ignored (reward 0); each of the N play steps, N =
// 52·decks, earns +1/N when it names the right suit and −1/N otherwise, so
// an episode's return lies in [−1, 1]. The episode terminates after the
// N-th answer, 2N − 1 steps in all.
//
// POPGym's observation space is Tuple(Discrete(2), Discrete(4)). evolve
// has no Tuple space; its flat form is that of MultiDiscrete([2, 4]) (one
// value per component, in order), so that is the observation space here.
// Action Discrete(4), a suit. POPGym's levels: Easy 1 deck, Medium 2,
// Hard 3. The deck is shuffled with NumPy's shuffle from the env's
// generator, so Reset(seed) deals what POPGym's reset(seed=seed) deals.
type Autoencode struct {
	deck     cardDeck
	shown    []int8 // the suits shown this episode, in order
	answered int    // play steps taken
	scale    float64
	stream   stream
	obs      [2]float32
}

// NewAutoencode returns an Autoencode over decks decks (POPGym's
// num_decks, 1 to 1000); call Reset before Step.
func NewAutoencode(decks int) (*Autoencode, error) {
	if err := checkDecks("Autoencode", decks); err != nil {
		return nil, err
	}
	n := decks * cardsPerDeck
	return &Autoencode{deck: newCardDeck(decks), shown: make([]int8, 0, n), scale: 1 / float64(n)}, nil
}

// ObservationSpace returns MultiDiscrete([2, 4]), POPGym's
// Tuple(Discrete(2), Discrete(4)): the watch flag, then a suit.
func (e *Autoencode) ObservationSpace() Space { return MultiDiscrete{Nvec: []int{2, 4}} }

// ActionSpace returns Discrete(4), a suit.
func (e *Autoencode) ActionSpace() Space { return Discrete{N: 4} }

// Reset shuffles the deck and shows the first card.
func (e *Autoencode) Reset(seed int64) ([]float32, Info) {
	e.deck.shuffle(e.stream.resetNumPy(seed))
	e.shown = e.shown[:0]
	e.answered = 0
	return e.show(), Info{}
}

// Step shows the next card while any is left; after that it scores the
// action against the suits shown, last first.
func (e *Autoencode) Step(action []float32) ([]float32, float64, bool, bool, Info) {
	if len(e.shown) == 0 || e.answered == len(e.shown) {
		panic("envs: Autoencode: Step before Reset or after the episode ended")
	}
	a := discreteAction("Autoencode", action, 4)
	if e.deck.left() > 0 {
		return e.show(), 0, false, false, Info{}
	}
	e.answered++
	reward := e.scale
	if a != int(e.shown[len(e.shown)-e.answered]) {
		reward = -e.scale
	}
	e.obs[0], e.obs[1] = 0, 0
	return e.obs[:], reward, e.answered == len(e.shown), false, Info{}
}

// show deals the next card and returns [flag, suit], the flag 0 once the
// deck is empty.
func (e *Autoencode) show() []float32 {
	suit := cardSuit(e.deck.deal())
	e.shown = append(e.shown, int8(suit))
	e.obs[0], e.obs[1] = 0, float32(suit)
	if e.deck.left() > 0 {
		e.obs[0] = 1
	}
	return e.obs[:]
}

func init() {
	level := func(name string, decks int) popgymLevel {
		return popgymLevel{name: name, summary: fmt.Sprintf("%s: watch %d suits, then name them in reverse order", decksText(decks), decks*cardsPerDeck),
			make: func() (Env, error) { return NewAutoencode(decks) }}
	}
	registerPOPGym("Autoencode", "watch the suits of a deck, then name them in reverse order", []string{"num_decks"},
		func(o Options) (Env, error) {
			decks, err := o.Int("num_decks", 1)
			if err != nil {
				return nil, err
			}
			return NewAutoencode(decks)
		},
		level("Easy", 1), level("Medium", 2), level("Hard", 3))
}

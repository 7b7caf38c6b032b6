package envs

import (
	"errors"
	"fmt"
	"slices"
)

// CountRecall is POPGym's Count Recall: two piles of decks × 52 cards are
// shuffled, and every step deals one card of each: a value card, to be
// counted, and a query card. The observation is the pair [value, query],
// each reduced to the attribute counted (its colour, suit or rank), and
// the agent must answer how many value cards of the query's kind have
// been dealt so far, the one shown with the query included: the answer to
// observation [v, q] is the count of q among the values up to and with v.
// Each Step scores the answer to the observation before it: +1/(N − 1)
// when right, −1/(N − 1) when wrong, N = 52·decks, so an episode's return
// lies in [−1, 1]; the episode terminates after N − 1 steps, when both
// piles are dealt out.
//
// Observation MultiDiscrete([K, K]) (POPGym's [dealt card, query card]),
// K = 2 colours, 4 suits or 13 ranks; action Discrete(N/K + 1), a count.
// POPGym's levels: Easy 1 deck counting colours (K = 2, Discrete(27)),
// Medium 2 decks counting suits (K = 4, Discrete(27)), Hard 4 decks
// counting ranks (K = 13, Discrete(17)). Both piles are shuffled with
// NumPy's shuffle from the env's generator, value pile first, so
// Reset(seed) deals what POPGym's reset(seed=seed) deals. POPGym's
// error_clamp parameter is not taken: its reward never reads it.
type CountRecall struct {
	attr            func(card int) int // the attribute counted
	values, queries cardDeck
	counts          []int // per kind: value cards dealt so far
	query           int   // the kind asked about by the current observation
	maxCount        int
	scale           float64 // 1/(N − 1)
	stream          stream
	obs             [2]float32
	obsSpace        MultiDiscrete
}

// Attributes CountRecall can count, POPGym's deck_type values.
const (
	CountColors = "colors"
	CountSuits  = "suits"
	CountRanks  = "ranks"
)

// CountRecallConfig holds CountRecall's parameters, POPGym's num_decks and
// deck_type.
type CountRecallConfig struct {
	Decks int    // the decks in each pile, 1 to 1000
	Count string // what is counted: CountColors, CountSuits or CountRanks
}

// NewCountRecall returns a CountRecall; call Reset before Step.
func NewCountRecall(c CountRecallConfig) (*CountRecall, error) {
	if err := checkDecks("CountRecall", c.Decks); err != nil {
		return nil, err
	}
	var attr func(int) int
	var kinds int
	switch c.Count {
	case CountColors:
		attr, kinds = cardColor, 2
	case CountSuits:
		attr, kinds = cardSuit, 4
	case CountRanks:
		attr, kinds = cardRank, 13
	default:
		return nil, fmt.Errorf("CountRecall: deck_type = %q: want %q, %q or %q", c.Count, CountColors, CountSuits, CountRanks)
	}
	n := c.Decks * cardsPerDeck
	return &CountRecall{attr: attr, values: newCardDeck(c.Decks), queries: newCardDeck(c.Decks),
		counts: make([]int, kinds), maxCount: n / kinds, scale: 1 / float64(n-1),
		obsSpace: MultiDiscrete{Nvec: []int{kinds, kinds}}}, nil
}

// ObservationSpace returns MultiDiscrete([K, K]): the value card's kind,
// then the query card's.
func (c *CountRecall) ObservationSpace() Space { return c.obsSpace }

// ActionSpace returns Discrete(N/K + 1): a count from 0 to the cards of a
// kind in the pile.
func (c *CountRecall) ActionSpace() Space { return Discrete{N: c.maxCount + 1} }

// Reset shuffles both piles and deals the first pair.
func (c *CountRecall) Reset(seed int64) ([]float32, Info) {
	rng := c.stream.resetNumPy(seed)
	c.values.shuffle(rng)
	c.queries.shuffle(rng)
	clear(c.counts)
	return c.deal(), Info{}
}

// Step scores the count given for the last observation's query and deals
// the next pair.
func (c *CountRecall) Step(action []float32) ([]float32, float64, bool, bool, Info) {
	if c.values.dealt == 0 || c.values.left() == 0 {
		panic("envs: CountRecall: Step before Reset or after the episode ended")
	}
	a := discreteAction("CountRecall", action, c.maxCount+1)
	reward := c.scale
	if a != c.counts[c.query] {
		reward = -c.scale
	}
	obs := c.deal()
	return obs, reward, c.values.left() == 0, false, Info{}
}

// deal deals a value and a query card, counts the value and returns the
// pair's kinds as the observation.
func (c *CountRecall) deal() []float32 {
	v := c.attr(c.values.deal())
	c.query = c.attr(c.queries.deal())
	c.counts[v]++
	c.obs[0], c.obs[1] = float32(v), float32(c.query)
	return c.obs[:]
}

func init() {
	level := func(name string, decks int, count string) popgymLevel {
		return popgymLevel{name: name, summary: fmt.Sprintf("%s, count the %s dealt", decksText(decks), count),
			make: func() (Env, error) { return NewCountRecall(CountRecallConfig{Decks: decks, Count: count}) }}
	}
	registerPOPGym("CountRecall", "say how many cards of the queried kind have been dealt", []string{"num_decks", "deck_type"},
		func(o Options) (Env, error) {
			decks, err := o.Int("num_decks", 1)
			count := CountColors
			if v, ok := o["deck_type"]; ok {
				s, isString := v.(string)
				if !isString || !slices.Contains([]string{CountColors, CountSuits, CountRanks}, s) {
					err = errors.Join(err, fmt.Errorf("option \"deck_type\" = %v (%T): want %q, %q or %q", v, v, CountColors, CountSuits, CountRanks))
				}
				count = s
			}
			if err != nil {
				return nil, err
			}
			return NewCountRecall(CountRecallConfig{Decks: decks, Count: count})
		},
		level("Easy", 1, CountColors), level("Medium", 2, CountSuits), level("Hard", 4, CountRanks))
}

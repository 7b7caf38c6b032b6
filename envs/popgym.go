package envs

import (
	"fmt"
	"strings"
)

// This file holds what the POPGym ports share: the deck of playing cards
// the card games deal from and their registration by difficulty.
//
// POPGym (Morad et al., "POPGym: Benchmarking Partially Observable
// Reinforcement Learning", ICLR 2023) is a benchmark of memory: every task
// hides what the agent must remember from the current observation. Its
// rewards are scaled so that an episode's return lies in [−1, 1], a perfect
// episode returning 1, whatever the difficulty; the ports keep those
// scales. Each task is registered under POPGym's own Gymnasium ids: the
// base id (popgym-RepeatPrevious-v0) with POPGym's default parameters,
// which options change, and one id per difficulty (…Easy-v0, …Medium-v0,
// …Hard-v0), which take no options, as POPGym's difficulty classes take
// none.

// cardsPerDeck is a standard deck's size.
const cardsPerDeck = 52

// maxPOPGymDecks bounds the decks a card game shuffles together (POPGym's
// hardest setting uses 4): each reset shuffles them all.
const maxPOPGymDecks = 1000

// The attributes of card i of a POPGym deck (decks × 52 cards, numbered
// from 0 in every deck alike): its suit cycles fastest (i mod 4; spades,
// diamonds, clubs, hearts), its colour with it (i mod 2; black, red) and
// its rank changes every four cards (ace first).
func cardSuit(i int) int  { return i % 4 }
func cardColor(i int) int { return i % 2 }
func cardRank(i int) int  { return i % cardsPerDeck / 4 }

// cardDeck is a shuffled pile of decks × 52 cards, dealt one at a time
// from the end of its order, as POPGym deals.
type cardDeck struct {
	order []int // card numbers; order[len−1−k] is the k-th card dealt
	dealt int
}

func newCardDeck(decks int) cardDeck {
	return cardDeck{order: make([]int, decks*cardsPerDeck)}
}

// shuffle gathers every card and shuffles them from the unshuffled order,
// as POPGym's reset does (so one reset's order never depends on the
// last), with NumPy's shuffle from the env's generator: a seed deals what
// POPGym's reset(seed=seed) deals.
func (d *cardDeck) shuffle(rng *npRandom) {
	for i := range d.order {
		d.order[i] = i
	}
	rng.Shuffle(d.order)
	d.dealt = 0
}

// deal returns the next card's number; dealing from an empty deck is a
// caller's bug (a step after the episode's end).
func (d *cardDeck) deal() int {
	if d.dealt == len(d.order) {
		panic("envs: POPGym deck: dealing from an empty deck; call Reset after the episode ends")
	}
	d.dealt++
	return d.order[len(d.order)-d.dealt]
}

// left is the number of cards not dealt yet.
func (d *cardDeck) left() int { return len(d.order) - d.dealt }

// size is the number of cards in the deck.
func (d *cardDeck) size() int { return len(d.order) }

// decksText says "1 deck" or "n decks".
func decksText(n int) string {
	if n == 1 {
		return "1 deck"
	}
	return fmt.Sprintf("%d decks", n)
}

// checkDecks validates a number of decks.
func checkDecks(env string, decks int) error {
	if decks < 1 || decks > maxPOPGymDecks {
		return fmt.Errorf("%s: num_decks = %d: want 1 to %d", env, decks, maxPOPGymDecks)
	}
	return nil
}

// popgymLevel is one difficulty of a POPGym task: its id's suffix, a
// summary of its parameters and its constructor.
type popgymLevel struct {
	name    string // Easy, Medium or Hard
	summary string
	make    func() (Env, error)
}

// registerPOPGym registers POPGym's ids of one task: the base id
// popgym-<task>-v0 built by base from its options, and popgym-<task><level>-v0
// for every level, which takes no options.
func registerPOPGym(task, summary string, options []string, base func(Options) (Env, error), levels ...popgymLevel) {
	mustRegister(Spec{ID: "popgym-" + task + "-v0",
		Summary: fmt.Sprintf("POPGym's %s: %s (options %s)", task, summary, strings.Join(options, ", ")),
		New: func(o Options) (Env, error) {
			if err := o.Only(options...); err != nil {
				return nil, err
			}
			return base(o)
		}})
	for _, l := range levels {
		mustRegister(Spec{ID: "popgym-" + task + l.name + "-v0",
			Summary: fmt.Sprintf("POPGym's %s, %s: %s", task, l.name, l.summary),
			New: func(o Options) (Env, error) {
				if err := o.Only(); err != nil {
					return nil, err
				}
				return l.make()
			}})
	}
}

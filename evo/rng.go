package evo

import "math/rand/v2"

// purpose names what a random stream is used for, so that two uses with the
// same (seed, agent, generation) never share numbers.
type purpose uint64

const (
	purposeInit       purpose = iota + 1 // an initial agent's weights and RNG
	purposeClone                         // a clone's own RNG (agent.Clone's seed)
	purposeMutation                      // the choice and parameters of a mutation
	purposeTournament                    // the tournament draws of a generation
	purposeEval                          // the evaluation env's seed of a generation
	purposeConfirm                       // the elite confirmation episodes of a run
	purposeExploit                       // PBT's choice of whom each bottom agent copies
	purposeExplore                       // PBT's explore of one clone's hyperparameters
	purposeSample                        // an initial agent's hyperparameters drawn from the ranges
)

// mix is the SplitMix64 finaliser (Steele, Lea and Flood), a bijection of
// 64 bits whose outputs look independent for neighbouring inputs.
func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// deriveSeed hashes (seed, agent index, generation, purpose) into one
// 64-bit seed. Each part is folded in through mix, so changing any part
// gives an unrelated seed; agent = -1 names streams shared by the whole
// population (the tournament, the evaluation episodes).
func deriveSeed(seed int64, agent, generation int, p purpose) uint64 {
	z := mix(uint64(seed))
	z = mix(z ^ uint64(int64(agent)))
	z = mix(z ^ uint64(int64(generation)) ^ 0x6a09e667f3bcc909)
	return mix(z ^ uint64(p)*0xd1b54a32d192ed03)
}

// newRNG returns a generator for the stream (seed, agent, generation,
// purpose); nothing in evo draws from any other source.
func newRNG(seed int64, agent, generation int, p purpose) *rand.Rand {
	s := deriveSeed(seed, agent, generation, p)
	return rand.New(rand.NewPCG(s, mix(s)))
}

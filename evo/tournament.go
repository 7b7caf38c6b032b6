package evo

import "math/rand/v2"

// AgileRL's tournament selection (population.selection = "tournament"):
// the picks, and the population they make.

// evolve replaces the population by the tournament's picks: the elite as
// it is (mutated only with mutate_elite), the others cloned with new
// indices; then each gets its mutation.
func (t *Trainer) evolve(g int) error {
	fitness := make([]float64, len(t.members))
	for i, m := range t.members {
		fitness[i] = m.Fitness[len(m.Fitness)-1]
	}
	picks := tournament(fitness, len(t.members), t.cfg.Tournament.Size, t.cfg.Tournament.Elitism,
		newRNG(t.cfg.Seed, -1, g, purposeTournament))
	next := make([]*Member, len(picks))
	for i, p := range picks {
		src := t.members[p]
		if i == 0 && t.cfg.Tournament.Elitism {
			next[i] = src
			continue
		}
		idx := t.nextIndex
		t.nextIndex++
		next[i] = &Member{Index: idx, Parent: src.Index, Fitness: append([]float64(nil), src.Fitness...),
			Agent: src.Agent.Clone(deriveSeed(t.cfg.Seed, idx, g, purposeClone))}
	}
	// Mutate only once every clone is taken, so that no clone copies a
	// mutated elite.
	for i, m := range next {
		if i == 0 && t.cfg.Tournament.Elitism && !t.cfg.Mutation.MutateElite {
			m.Mutation = "none (elite)"
			continue
		}
		a, desc, err := t.cfg.mutate(m.Agent, m.Index, g)
		if err != nil {
			return err
		}
		m.Agent, m.Mutation = a, desc
	}
	t.members = next
	return nil
}

// tournament selects the next population from this generation's fitness
// (one value per position): with elitism the best position first (the
// first of equals), then winners of tournaments of size positions drawn
// with replacement (the first drawn of equal fitness wins), until n are
// chosen. It returns positions into fitness.
func tournament(fitness []float64, n, size int, elitism bool, r *rand.Rand) []int {
	picks := make([]int, 0, n)
	if elitism {
		best := 0
		for i, f := range fitness {
			if f > fitness[best] {
				best = i
			}
		}
		picks = append(picks, best)
	}
	for len(picks) < n {
		win := r.IntN(len(fitness))
		for range size - 1 {
			if c := r.IntN(len(fitness)); fitness[c] > fitness[win] {
				win = c
			}
		}
		picks = append(picks, win)
	}
	return picks
}

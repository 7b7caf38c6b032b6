package buffer

import (
	"fmt"
	"math/rand/v2"
)

// Mode is how a recurrent rollout is cut into training sequences.
type Mode string

// The sequence modes. Each first splits every env's column at episode ends
// (a sequence never spans two episodes), then cuts each episode segment of
// length S into windows of at most L = max_seq_len steps:
const (
	// Chunked: consecutive, non-overlapping windows [0, L), [L, 2L), …;
	// the tail is kept as a shorter, padded sequence. Every step is
	// trained on once per epoch.
	Chunked Mode = "chunked"
	// Maximum: a window at every start, [k, k+L) for k = 0 … S−L (one
	// shorter window when S < L). Most sequences, most compute.
	Maximum Mode = "maximum"
	// Overlap50: windows at stride L/2, the last one reaching the end of
	// the segment (shorter, padded, if it must).
	Overlap50 Mode = "overlap50"
)

// ParseMode returns the Mode named s.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case Chunked, Maximum, Overlap50:
		return m, nil
	}
	return "", fmt.Errorf("buffer: bptt mode %q: want %q, %q or %q", s, Chunked, Maximum, Overlap50)
}

// Sequence is a run of consecutive steps of one env within one episode:
// steps Start … Start+Len−1 of env Env.
type Sequence struct {
	Env, Start, Len int
}

// Sequences cuts the rollout into sequences of at most maxLen steps by mode
// (see Mode). The result is backed by storage the next call reuses.
func (r *Rollout) Sequences(mode Mode, maxLen int) ([]Sequence, error) {
	if maxLen <= 0 {
		return nil, fmt.Errorf("buffer: max sequence length %d must be positive", maxLen)
	}
	if _, err := ParseMode(string(mode)); err != nil {
		return nil, err
	}
	r.seqs = r.seqs[:0]
	for e := range r.Envs {
		start := 0
		for t := range r.pos {
			i := t*r.Envs + e
			if r.Terminated[i] || r.Truncated[i] || t == r.pos-1 {
				r.cutSegment(mode, maxLen, e, start, t+1-start)
				start = t + 1
			}
		}
	}
	return r.seqs, nil
}

// cutSegment appends the windows of one episode segment [start, start+n).
func (r *Rollout) cutSegment(mode Mode, maxLen, env, start, n int) {
	add := func(off, length int) {
		r.seqs = append(r.seqs, Sequence{Env: env, Start: start + off, Len: length})
	}
	switch mode {
	case Chunked:
		for off := 0; off < n; off += maxLen {
			add(off, min(maxLen, n-off))
		}
	case Maximum:
		if n <= maxLen {
			add(0, n)
			return
		}
		for off := 0; off+maxLen <= n; off++ {
			add(off, maxLen)
		}
	case Overlap50:
		stride := max(1, maxLen/2)
		for off := 0; ; off += stride {
			add(off, min(maxLen, n-off))
			if off+maxLen >= n {
				return
			}
		}
	}
}

// ShuffleSequences shuffles seqs in place with rng.
func ShuffleSequences(rng *rand.Rand, seqs []Sequence) {
	rng.Shuffle(len(seqs), func(i, j int) { seqs[i], seqs[j] = seqs[j], seqs[i] })
}

// SeqBatch is a gathered minibatch of sequences, time-major: step k of
// sequence b is at row k*Size + b, so its Steps are [L][B][...]. Steps past
// a sequence's length are padding: zero data, all-legal masks, Valid = 0.
type SeqBatch struct {
	MaxLen    int // L, the padded length
	Cap, Size int // capacity and filled number of sequences (B)
	Steps
	Valid  []float32 // [L][B]: 1 for a real step, 0 for padding
	Hidden []float32 // [B][HiddenSize]: state fed to the network at each sequence's first step
}

// NewSeqBatch allocates a SeqBatch for up to size sequences of maxLen steps.
func NewSeqBatch(d Dims, maxLen, size int) *SeqBatch {
	rows := maxLen * size
	return &SeqBatch{MaxLen: maxLen, Cap: size, Steps: newSteps(d, rows),
		Valid: make([]float32, rows), Hidden: make([]float32, size*d.HiddenSize)}
}

// GatherSequences copies seqs into b, time-major and padded to b.MaxLen,
// with each sequence's initial hidden state. It allocates nothing.
func (r *Rollout) GatherSequences(seqs []Sequence, b *SeqBatch) {
	if len(seqs) > b.Cap {
		panic(fmt.Sprintf("buffer: gather of %d sequences into a batch of capacity %d", len(seqs), b.Cap))
	}
	B, L := len(seqs), b.MaxLen
	rows := L * B
	b.Size = B
	b.resize(r.Dims, rows)
	b.Valid, b.Hidden = b.Valid[:rows], b.Hidden[:B*r.HiddenSize]
	for _, f := range [][]float32{b.Obs, b.Actions, b.LogProbs, b.Values, b.Advantages, b.Returns, b.Valid} {
		clear(f)
	}
	for i := range b.Masks {
		b.Masks[i] = true
	}
	for j, s := range seqs {
		if s.Len > L {
			panic(fmt.Sprintf("buffer: sequence of %d steps in a batch padded to %d", s.Len, L))
		}
		h := (s.Start*r.Envs + s.Env) * r.HiddenSize
		copy(b.Hidden[j*r.HiddenSize:(j+1)*r.HiddenSize], r.Hidden[h:h+r.HiddenSize])
		for k := range s.Len {
			row := k*B + j
			b.copyStep(r, (s.Start+k)*r.Envs+s.Env, row)
			b.Valid[row] = 1
		}
	}
}

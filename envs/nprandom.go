package envs

import "math/bits"

// npRandom is the generator gymnasium.utils.seeding.np_random(seed) returns:
// NumPy's Generator over a PCG64 bit generator seeded through a SeedSequence
// of the seed. Seeded with the same seed, it produces the same bits, doubles,
// uniforms and bounded integers as NumPy (>= 1.17), so an env that draws in
// Gymnasium's order starts where Gymnasium's does. Its zero value is not a
// seeded generator: call Seed first. Seeding and drawing allocate nothing.
//
// PCG64 (O'Neill 2014, "PCG: A family of simple fast space-efficient
// statistically good algorithms for random number generation") is a 128-bit
// linear congruential generator
//
//	state ← state·M + inc  (mod 2¹²⁸),  M = 0x2360ed051fc65da4_4385df649fccf645,
//
// whose output is XSL-RR: the two 64-bit halves of the new state xor-ed and
// rotated right by the state's top 6 bits. inc is odd.
type npRandom struct {
	hi, lo       uint64 // the LCG state
	incHi, incLo uint64 // the LCG increment
	// NumPy's next_uint32 returns the low half of a fresh 64-bit output and
	// keeps the high half for the next call; 64-bit draws bypass it.
	half    uint32
	hasHalf bool
}

// pcgMulHi and pcgMulLo are the halves of PCG64's multiplier M.
const (
	pcgMulHi = 0x2360ed051fc65da4
	pcgMulLo = 0x4385df649fccf645
)

// Seed re-seeds g as np_random(seed) does: the SeedSequence's first four
// 64-bit words w0..w3 give the initial state w0·2⁶⁴ + w1 and the stream
// w2·2⁶⁴ + w3, and PCG's set-seed routine runs state ← 0, inc ← 2·stream + 1,
// one step, state += initial state, one step.
func (g *npRandom) Seed(seed uint64) {
	w := seedSequenceState(seed)
	g.incHi = w[2]<<1 | w[3]>>63
	g.incLo = w[3]<<1 | 1
	g.hi, g.lo = 0, 0
	g.step()
	var carry uint64
	g.lo, carry = bits.Add64(g.lo, w[1], 0)
	g.hi += w[0] + carry
	g.step()
	g.half, g.hasHalf = 0, false
}

// step advances the LCG by one: state ← state·M + inc (mod 2¹²⁸).
func (g *npRandom) step() {
	hi, lo := bits.Mul64(g.lo, pcgMulLo)
	hi += g.hi*pcgMulLo + g.lo*pcgMulHi
	var carry uint64
	g.lo, carry = bits.Add64(lo, g.incLo, 0)
	g.hi = hi + g.incHi + carry
}

// Uint64 returns the next 64-bit output (NumPy's next_uint64, and
// random_raw): step, then XSL-RR of the new state. It makes g a
// math/rand/v2 Source.
func (g *npRandom) Uint64() uint64 {
	g.step()
	return bits.RotateLeft64(g.hi^g.lo, -int(g.hi>>58))
}

// uint32 is NumPy's next_uint32: the low half of a 64-bit output, then its
// high half on the next call.
func (g *npRandom) uint32() uint32 {
	if g.hasHalf {
		g.hasHalf = false
		return g.half
	}
	x := g.Uint64()
	g.half, g.hasHalf = uint32(x>>32), true
	return uint32(x)
}

// Float64 returns a double in [0, 1) as NumPy's next_double and
// Generator.random: the top 53 bits of a 64-bit output times 2⁻⁵³. (Go's
// rand.Float64 takes the low 53 bits, so it differs.)
func (g *npRandom) Float64() float64 {
	return float64(g.Uint64()>>11) * 0x1p-53
}

// Uniform returns Generator.uniform(lo, hi): lo + (hi − lo)·u with u from
// Float64, both operations rounded (the explicit conversion keeps the
// compiler from fusing them into one multiply-add, which NumPy does not do).
func (g *npRandom) Uniform(lo, hi float64) float64 {
	return lo + float64((hi-lo)*g.Float64())
}

// Integers returns Generator.integers(lo, hi) for int64 (NumPy's default
// dtype), an integer in [lo, hi). For n = hi − lo values up to 2³² − 1, the
// only case implemented, NumPy uses Lemire's multiply-and-reject method
// (arXiv:1805.10941) on 32-bit draws: m = x·n for a 32-bit x, x drawn again
// while the low 32 bits of m fall below 2³² mod n; the result is
// lo + ⌊m/2³²⌋. A single value (n = 1) draws nothing. It panics when n is
// not in [1, 2³² − 1].
func (g *npRandom) Integers(lo, hi int64) int64 {
	n := uint64(hi - lo)
	if hi <= lo || n >= 1<<32 {
		panic("envs: npRandom.Integers: span outside [1, 2^32-1]")
	}
	if n == 1 {
		return lo // NumPy draws nothing for a single value
	}
	m := uint64(g.uint32()) * n
	if uint32(m) < uint32(n) {
		threshold := uint32(-n) % uint32(n) // 2³² mod n
		for uint32(m) < threshold {
			m = uint64(g.uint32()) * n
		}
	}
	return lo + int64(m>>32)
}

// interval is NumPy's random_interval(max): an integer in [0, max] drawn by
// masking a raw draw to the smallest all-ones mask that covers max and
// drawing again while it exceeds max. Draws are 32-bit (next_uint32, so
// they share 64-bit outputs) when max fits in 32 bits, 64-bit otherwise;
// max = 0 draws nothing.
func (g *npRandom) interval(max uint64) uint64 {
	if max == 0 {
		return 0
	}
	mask := ^uint64(0) >> bits.LeadingZeros64(max)
	if max <= 1<<32-1 {
		for {
			if v := uint64(g.uint32()) & mask; v <= max {
				return v
			}
		}
	}
	for {
		if v := g.Uint64() & mask; v <= max {
			return v
		}
	}
}

// Shuffle permutes x in place as Generator.shuffle does a one-dimensional
// array: Fisher–Yates from the last element down, element i swapped with
// element interval(i). (Go's rand.Shuffle uses other draws, so it differs.)
func (g *npRandom) Shuffle(x []int) {
	for i := len(x) - 1; i > 0; i-- {
		j := g.interval(uint64(i))
		x[i], x[j] = x[j], x[i]
	}
}

// SeedSequence constants (NumPy's bit_generator.pyx, after O'Neill's
// seed_seq_fe): the hash multipliers and their start values, the mixing
// multipliers and the xor-shift of half a 32-bit word.
const (
	ssInitA   uint32 = 0x43b0d7e5
	ssMultA   uint32 = 0x931e8875
	ssInitB   uint32 = 0x8b51f9dd
	ssMultB   uint32 = 0x58f38ded
	ssMixMulL uint32 = 0xca01f9dd
	ssMixMulR uint32 = 0x4973f715
	ssXShift         = 16
	ssPool           = 4
)

// seedSequenceState returns SeedSequence(seed).generate_state(4, uint64).
//
// The seed becomes its 32-bit words, least significant first (one word
// below 2³², two above; 0 is the single word 0). Mixing fills a pool of
// four words: word i is hash(entropy[i]) (hash(0) past the entropy), then
// every pool word is mixed with the hash of every other, where, with a
// multiplier h that starts at INIT_A and is multiplied by MULT_A on every
// call,
//
//	hash(v) = ((v ^ h) · (h·MULT_A)) ^ ((…) >> 16),   mix(x, y) = (L·x − R·y) ^ (… >> 16).
//
// Generating cycles through the pool: output word i is
// ((pool[i mod 4] ^ k) · (k·MULT_B)) xor-shifted by 16, with k starting at
// INIT_B and multiplied by MULT_B each word; two 32-bit words, low first,
// make one 64-bit word. (More than four entropy words would be mixed in
// afterwards; a 64-bit seed has at most two.)
func seedSequenceState(seed uint64) [4]uint64 {
	entropy := [2]uint32{uint32(seed), uint32(seed >> 32)}
	n := 1
	if seed>>32 != 0 {
		n = 2
	}
	var pool [ssPool]uint32
	h := ssInitA
	for i := range pool {
		var v uint32
		if i < n {
			v = entropy[i]
		}
		pool[i] = ssHash(v, &h)
	}
	for src := range pool {
		for dst := range pool {
			if src != dst {
				pool[dst] = ssMix(pool[dst], ssHash(pool[src], &h))
			}
		}
	}
	var out [4]uint64
	k := ssInitB
	for i := range 2 * len(out) {
		v := pool[i%ssPool] ^ k
		k *= ssMultB
		v *= k
		v ^= v >> ssXShift
		out[i/2] |= uint64(v) << (32 * (i % 2))
	}
	return out
}

// ssHash is SeedSequence's hashmix; it advances the multiplier *h.
func ssHash(v uint32, h *uint32) uint32 {
	v ^= *h
	*h *= ssMultA
	v *= *h
	return v ^ v>>ssXShift
}

// ssMix is SeedSequence's mix of two pool words.
func ssMix(x, y uint32) uint32 {
	r := ssMixMulL*x - ssMixMulR*y
	return r ^ r>>ssXShift
}

// Package window assembles the windows of past inputs a Transformer encoder reads, from a
// batch's time-major rows and each sequence's carried state, for both network backends.
//
// A sequence's state is the Context − 1 inputs before its first step, oldest first, then
// how many of them belong to the episode (a float; a zero state has none). Position j of
// the window of step t holds the input of step t − (K − 1) + j; positions before the
// episode's start (an episode start inside the batch, or beyond what the state holds) are
// zeros and come before the window's first valid position.
package window

// Fill writes the windows win [rows, k, in] and their first valid positions first [rows]
// of steps·batch time-major rows x [rows, in] (step t of sequence s is row t·batch + s).
// state, if not nil, holds each sequence's state stride floats apart (a nil state has no
// past inputs); starts, if not nil, marks the rows where an episode starts.
func Fill(win []float32, first []int, x, state []float32, stride int, starts []float32, k, in, steps, batch int) {
	for s := range batch {
		var past []float32 // the k − 1 inputs before the sequence, oldest first
		pastN := 0
		if state != nil {
			past = state[s*stride : s*stride+(k-1)*in]
			pastN = min(max(int(state[s*stride+(k-1)*in]), 0), k-1)
		}
		start := -pastN // the earliest step of the episode a window may read
		for t := range steps {
			r := t*batch + s
			if starts != nil && starts[r] != 0 {
				start = t
			}
			w := win[r*k*in : (r+1)*k*in]
			f := max(start-(t-(k-1)), 0)
			first[r] = f
			clear(w[:f*in])
			for j := f; j < k; j++ {
				var src []float32
				if tau := t - (k - 1) + j; tau >= 0 {
					src = x[(tau*batch+s)*in:]
				} else { // before the sequence: an input from the state
					src = past[(k-1+tau)*in:]
				}
				copy(w[j*in:(j+1)*in], src[:in])
			}
		}
	}
}

// Final writes each sequence's state after the batch's last step into final (stride floats
// apart): the last k − 1 inputs of its last row's window and how many of them are valid. It
// reads only the windows, so final may be the state Fill read.
func Final(final []float32, stride int, win []float32, first []int, k, in, steps, batch int) {
	for s := range batch {
		r := (steps-1)*batch + s
		dst := final[s*stride : s*stride+(k-1)*in+1]
		copy(dst[:(k-1)*in], win[(r*k+1)*in:(r+1)*k*in])
		dst[(k-1)*in] = float32(k - max(first[r], 1))
	}
}

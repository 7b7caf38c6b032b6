// Package nearest finds the known name a mistyped one was meant to be, for
// the "did you mean" of error messages: a config key, an env id, an env
// option.
package nearest

import "strings"

// Name returns the candidate closest to word — first one equal to it but
// for case, else one at most maxEdits edits (Levenshtein, in bytes) away,
// and no more than a third of word's length (at least 1: "nope" is not a
// typo of "pop"), the closest and on a tie the first in candidates' order —
// or "".
func Name(word string, candidates []string, maxEdits int) string {
	for _, c := range candidates {
		if strings.EqualFold(c, word) {
			return c
		}
	}
	maxEdits = min(maxEdits, max(1, len(word)/3))
	best, bestD := "", maxEdits+1
	for _, c := range candidates {
		if d := Distance(word, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// Distance returns the Levenshtein distance between a and b, in bytes.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

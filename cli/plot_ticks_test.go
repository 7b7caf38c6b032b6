package cli

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/plot"
)

// TestLogTicks: a log axis labels powers of ten at a regular step, at most
// maxDecadeLabels of them, all in one format; over more than
// maxMinorDecades decades it ticks only the powers of ten, since ticks at 2
// to 9 times each would merge into a solid bar (approx_kl from 1e-12,
// ent_coef from 1e-08).
func TestLogTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		labels string
		ticks  int
	}{
		{1e-12, 0.01, "1e-12 1e-09 1e-06 1e-03", 11},
		{6e-9, 0.015, "1e-08 1e-06 1e-04 1e-02", 7},
		{2, 5e4, "10 100 1k 10k", 4},
		// Up to maxMinorDecades: 2 to 9 times each power ticked too.
		{6e-6, 0.013, "1e-05 1e-04 1e-03 1e-02", 32},
		{2e-4, 0.012, "0.0002 0.0005 0.001 0.002 0.005 0.01", 18},
		// Inside a decade: the default ticks, in one format.
		{8e-5, 1.3e-4, "8e-05 1e-04 1.2e-04", 5},
	} {
		ts := logTicks{}.Ticks(tc.lo, tc.hi)
		var labels []string
		for _, tk := range ts {
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
		}
		if got := strings.Join(labels, " "); got != tc.labels || len(ts) != tc.ticks {
			t.Errorf("[%g, %g]: %d ticks labelled %q, want %d labelled %q", tc.lo, tc.hi, len(ts), got, tc.ticks, tc.labels)
		}
	}
}

// TestTicksOnANonFiniteAxis: an axis with a NaN or infinite end gets no
// ticks (gonum's DefaultTicks loops forever on one).
func TestTicksOnANonFiniteAxis(t *testing.T) {
	for _, m := range []plot.Ticker{plainTicks{}, siTicks{}, integerTicks{}, logTicks{}, pow2Ticks{}} {
		for _, r := range [][2]float64{{math.NaN(), 1}, {0, math.NaN()}, {math.Inf(-1), 1}, {1, math.Inf(1)}} {
			if ts := m.Ticks(r[0], r[1]); ts != nil {
				t.Errorf("%T.Ticks(%v, %v) = %v, want none", m, r[0], r[1], ts)
			}
		}
	}
}

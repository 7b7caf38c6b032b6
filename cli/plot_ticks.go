package cli

import (
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
)

// plainTicks labels the default ticks with as few digits as they need.
type plainTicks struct{}

func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	if !finiteRange(lo, hi) {
		return nil
	}
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i, t := range ts {
		if t.Label != "" {
			ts[i].Label = strconv.FormatFloat(t.Value, 'g', 6, 64)
		}
	}
	return ts
}

// siTicks labels the default ticks with k, M and G suffixes (400k, 1.2M)
// instead of exponents, and labels the minor ticks too when fewer than
// three major ones fall in the range.
type siTicks struct{}

func (siTicks) Ticks(lo, hi float64) []plot.Tick {
	if !finiteRange(lo, hi) {
		return nil
	}
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	labelled := 0
	for _, t := range ts {
		if t.Label != "" {
			labelled++
		}
	}
	for i, t := range ts {
		if t.Label != "" || labelled < 3 {
			ts[i].Label = siFormat(t.Value)
		}
	}
	return ts
}

func siFormat(v float64) string {
	for _, u := range []struct {
		div    float64
		suffix string
	}{{1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if math.Abs(v) >= u.div {
			return strconv.FormatFloat(v/u.div, 'f', -1, 64) + u.suffix
		}
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// integerTicks keeps only the default ticks at whole numbers (generations).
type integerTicks struct{}

func (integerTicks) Ticks(lo, hi float64) []plot.Tick {
	if !finiteRange(lo, hi) {
		return nil
	}
	var ts []plot.Tick
	for _, t := range (plot.DefaultTicks{}).Ticks(lo, hi) {
		if t.Label != "" && t.Value == math.Trunc(t.Value) {
			ts = append(ts, plot.Tick{Value: t.Value, Label: strconv.FormatFloat(t.Value, 'f', 0, 64)})
		}
	}
	if len(ts) == 0 { // a range inside one generation
		for g := math.Ceil(lo); g <= hi; g++ {
			ts = append(ts, plot.Tick{Value: g, Label: strconv.FormatFloat(g, 'f', 0, 64)})
		}
	}
	return ts
}

// logTicks uses decadeTicks when the range spans a decade and the default
// (linear) ticks, placed on the log scale, when it does not, since
// plot.LogTicks would then label nothing. The labels have one format
// (withLogLabels).
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !finiteRange(lo, hi) {
		return nil
	}
	if hi/lo >= 10 {
		return decadeTicks(lo, hi)
	}
	var ts []plot.Tick
	var labelled []int
	for _, t := range (plot.DefaultTicks{}).Ticks(lo, hi) {
		if t.Value > 0 {
			if t.Label != "" {
				labelled = append(labelled, len(ts))
			}
			ts = append(ts, plot.Tick{Value: t.Value})
		}
	}
	return withLogLabels(ts, labelled)
}

// maxMinorDecades is the widest range, in decades, whose log axis has
// minor ticks at 2 to 9 times each power of ten: over a wider one they
// merge into a solid bar, and only the powers are ticked.
const maxMinorDecades = 4

// maxDecadeLabels is the most powers of ten a log axis labels.
const maxDecadeLabels = 5

// decadeTicks puts a tick at each power of ten in [lo, hi], and at 2 to 9
// times each when the range spans at most maxMinorDecades decades.
// (plot.LogTicks leaves the partial decade below lo's power without
// ticks.) It labels the powers whose exponents are multiples of a step,
// the smallest that labels at most maxDecadeLabels of them (1e-08, 1e-06,
// 1e-04, ... at a step of 2), and 2× and 5× them too when fewer than three
// powers fall in the range.
func decadeTicks(lo, hi float64) []plot.Tick {
	first, last := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	powers := 0
	for k := first; k <= last; k++ {
		if v := round3(math.Pow(10, k)); v >= lo && v <= hi {
			powers++
		}
	}
	step := max(1, math.Ceil(float64(powers)/maxDecadeLabels))
	minor := math.Log10(hi/lo) <= maxMinorDecades
	var ts []plot.Tick
	var labelled []int
	for k := first; k <= last; k++ {
		for m := 1.0; m <= 9 && (m == 1 || minor); m++ {
			v := round3(m * math.Pow(10, k))
			if v < lo || v > hi {
				continue
			}
			if m == 1 && math.Mod(k, step) == 0 || powers < 3 && (m == 2 || m == 5) {
				labelled = append(labelled, len(ts))
			}
			ts = append(ts, plot.Tick{Value: v})
		}
	}
	return withLogLabels(ts, labelled)
}

// round3 rounds v to 3 significant digits: powers of ten computed by
// repeated products are 9.999999e-05.
func round3(v float64) float64 {
	v, _ = strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	return v
}

// withLogLabels labels the ticks ts[i], i in labelled, of a log axis in
// one format for the whole axis: 3 significant digits, and from 1000 up
// 10k or 2.5M; but when one of them needs an exponent (1e-05), all of them
// get one (1e-03, 1e-04, 1e-05 rather than 0.001, 0.0001, 1e-05).
func withLogLabels(ts []plot.Tick, labelled []int) []plot.Tick {
	exponent := false
	for _, i := range labelled {
		v := round3(ts[i].Value)
		ts[i].Label = strconv.FormatFloat(v, 'g', 3, 64)
		if v >= 1000 {
			ts[i].Label = siFormat(v)
		}
		exponent = exponent || strings.Contains(ts[i].Label, "e")
	}
	if exponent {
		for _, i := range labelled {
			ts[i].Label = strconv.FormatFloat(round3(ts[i].Value), 'e', -1, 64)
		}
	}
	return ts
}

// categoryTicks labels the whole numbers 0, 1, ... with labels, every
// k-th one when there are too many to read.
type categoryTicks []string

// Ticks implements plot.Ticker.
func (c categoryTicks) Ticks(lo, hi float64) []plot.Tick {
	every := max(1, len(c)/10)
	var ts []plot.Tick
	for i, l := range c {
		if i%every == 0 {
			ts = append(ts, plot.Tick{Value: float64(i), Label: l})
		} else {
			ts = append(ts, plot.Tick{Value: float64(i)})
		}
	}
	return ts
}

// pow2Ticks puts a tick at every power of two in [lo, hi], labelled with its
// value (every other one when there are more than eight), and minor ticks
// between them at 1.5 times each: batch sizes and rollout lengths are
// powers of two, which decimal ticks (70, 100, 130) hide.
type pow2Ticks struct{}

func (pow2Ticks) Ticks(lo, hi float64) []plot.Tick {
	if !finiteRange(lo, hi) {
		return nil
	}
	var ts []plot.Tick
	first, last := math.Floor(math.Log2(lo)), math.Ceil(math.Log2(hi))
	every := 1.0
	if last-first > 8 {
		every = 2
	}
	for k := first; k <= last; k++ {
		v := math.Exp2(k)
		if v >= lo && v <= hi {
			label := ""
			if math.Mod(k-first, every) == 0 {
				label = strconv.FormatFloat(v, 'f', -1, 64)
			}
			ts = append(ts, plot.Tick{Value: v, Label: label})
		}
		if m := 1.5 * v; m >= lo && m <= hi {
			ts = append(ts, plot.Tick{Value: m})
		}
	}
	if len(ts) < 2 { // inside one octave: the default ticks
		return logTicks{}.Ticks(lo, hi)
	}
	return ts
}

// finiteRange reports whether an axis runs between two finite values: gonum's
// DefaultTicks never returns on a NaN or infinite end, which a value in a
// run's files could otherwise put there; such an axis gets no ticks.
func finiteRange(lo, hi float64) bool {
	return !math.IsNaN(lo) && !math.IsNaN(hi) && !math.IsInf(lo, 0) && !math.IsInf(hi, 0)
}

package cli

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// plainTicks labels the default ticks with as few digits as they need.
type plainTicks struct{}

func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
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
// plot.LogTicks would then label nothing. Values from 1000 up read 10k,
// 2.5M.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if hi/lo >= 10 {
		return decadeTicks(lo, hi)
	}
	var ts []plot.Tick
	for _, t := range (plot.DefaultTicks{}).Ticks(lo, hi) {
		if t.Value > 0 {
			if t.Label != "" {
				t.Label = logLabel(t.Value)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// decadeTicks puts a tick at 1 to 9 times each power of ten in [lo, hi]
// and labels the powers of ten, every other one when there are more than
// five, and 2× and 5× them too when there are fewer than three.
// (plot.LogTicks leaves the partial decade below lo's power without
// ticks.)
func decadeTicks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	powers := 0
	for k := math.Floor(math.Log10(lo)); k <= math.Ceil(math.Log10(hi)); k++ {
		for m := 1.0; m <= 9; m++ {
			v, _ := strconv.ParseFloat(strconv.FormatFloat(m*math.Pow(10, k), 'g', 3, 64), 64)
			if v >= lo && v <= hi {
				ts = append(ts, plot.Tick{Value: v})
				if m == 1 {
					powers++
				}
			}
		}
	}
	n := 0
	for i, t := range ts {
		m := t.Value / math.Pow(10, math.Floor(math.Log10(t.Value)+1e-9))
		switch {
		case math.Abs(m-1) < 1e-6:
			if powers <= 5 || n%2 == 0 {
				ts[i].Label = logLabel(t.Value)
			}
			n++
		case powers < 3 && (math.Abs(m-2) < 1e-6 || math.Abs(m-5) < 1e-6):
			ts[i].Label = logLabel(t.Value)
		}
	}
	return ts
}

// logLabel formats a log axis' tick with 3 significant digits: powers of
// ten computed by repeated products are 9.999999e-05.
func logLabel(v float64) string {
	v, _ = strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	if v >= 1000 {
		return siFormat(v)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
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

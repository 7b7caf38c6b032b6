package cli

import (
	"strings"
	"testing"

	"gonum.org/v1/plot"
)

// TestComparisonTitleFits: the comparison's title names the envs of the
// runs compared while they fit on a line and counts them when they do
// not, on lines no wider than maxTitleWidth: a title of nine runs over
// six envs on one line ran off both edges of the figure.
func TestComparisonTitleFits(t *testing.T) {
	runsOn := func(envs ...string) []*plotRun {
		var runs []*plotRun
		for _, e := range envs {
			runs = append(runs, &plotRun{rc: runConfig{env: e}})
		}
		return runs
	}
	for _, tc := range []struct {
		runs  []*plotRun
		title string
	}{
		{runsOn("CartPole-v1", "CartPole-v1"), "CartPole-v1: elite score against env steps"},
		{runsOn("CartPole-v1", "Catch-v0"), "Elite score against env steps,\non CartPole-v1, Catch-v0 (different envs)"},
		{runsOn("CartPole-v1", "CartPole-v1", "Catch-v0", "Catch-v0", "MinAtar/Breakout-v0", "LunarLander-v3", "MountainCar-v0", "Acrobot-v1", "Pendulum-v1"),
			"Elite score against env steps, on 7 different envs"},
		{runsOn("NoisyPositionOnlyCartPoleEasy-v0-with-a-long-suffix"), "NoisyPositionOnlyCartPoleEasy-v0-with-a-long-suffix:\nelite score against env steps"},
		{runsOn(""), "Elite score against env steps"},
	} {
		p := newPlot()
		comparisonLabels(p, tc.runs)
		if p.Title.Text != tc.title {
			t.Errorf("title %q, want %q", p.Title.Text, tc.title)
		}
		for _, line := range strings.Split(p.Title.Text, "\n") {
			if w := p.Title.TextStyle.Width(line); w > maxTitleWidth {
				t.Errorf("title line %q is %.0f points wide, over %.0f", line, w.Points(), maxTitleWidth.Points())
			}
		}
	}
	// A word wider than a line stays whole, on a line of its own.
	long := strings.Repeat("x", 120)
	if got := fitTitle(plot.New().Title.TextStyle, "a b", long, "c"); got != "a b\n"+long+"\nc" {
		t.Errorf("fitTitle with a word wider than a line: %q", got)
	}
}

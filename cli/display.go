package cli

import (
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/evolverl/evolve/evo"
)

// display writes everything evolve shows while it runs: on a terminal a
// progress bar redrawn in place and a table after each generation,
// otherwise one plain line per generation. Log records go through it too,
// so that they never tear the bar. It is safe for concurrent use.
type display struct {
	w        io.Writer
	terminal bool
	quiet    bool

	mu      sync.Mutex
	tr      *evo.Trainer
	t0      time.Time
	steps0  int  // total steps when this session started
	genStep int  // the steps of a generation, population.size × evo_steps
	barShow bool // a bar is drawn on the current line
	done    chan struct{}
	wg      sync.WaitGroup
}

// start begins the session's clock and, on a terminal, the bar's redraws.
func (d *display) start(tr *evo.Trainer) {
	d.mu.Lock()
	d.tr, d.t0, d.steps0 = tr, time.Now(), tr.Progress().TotalSteps
	cfg := tr.Config()
	d.genStep = cfg.Population.Size * cfg.Population.EvoSteps
	d.mu.Unlock()
	if !d.terminal {
		return
	}
	d.done = make(chan struct{})
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-d.done:
				return
			case <-tick.C:
				d.mu.Lock()
				d.drawBar()
				d.mu.Unlock()
			}
		}
	}()
}

// stop ends the redraws and clears the bar.
func (d *display) stop() {
	if d.done != nil {
		close(d.done)
		d.wg.Wait()
		d.done = nil
	}
	d.mu.Lock()
	d.clearBar()
	d.mu.Unlock()
}

// Write implements io.Writer for log records.
func (d *display) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.clearBar()
	return d.w.Write(p)
}

func (d *display) clearBar() {
	if d.barShow {
		fmt.Fprint(d.w, "\r\033[K")
		d.barShow = false
	}
}

// rate returns this session's steps per second and the steps done.
func (d *display) rate() (perSec float64, p evo.Progress) {
	p = d.tr.Progress()
	if el := time.Since(d.t0).Seconds(); el > 0 {
		perSec = float64(p.TotalSteps-d.steps0) / el
	}
	return perSec, p
}

// drawBar redraws the progress bar; d.mu is held.
func (d *display) drawBar() {
	if d.tr == nil {
		return
	}
	rate, p := d.rate()
	frac := math.Min(1, float64(p.TotalSteps)/float64(max(1, p.MaxSteps)))
	const width = 28
	n := int(frac * width)
	fmt.Fprintf(d.w, "\r\033[K[%s%s] %3.0f%%  gen %d  %s/%s steps  %s elapsed  %s  %s steps/s",
		strings.Repeat("#", n), strings.Repeat(".", width-n), 100*frac, p.Generation,
		commas(p.TotalSteps), commas(p.MaxSteps), fmtDuration(time.Since(d.t0)), timeLeft(p, d.genStep, rate), commas(int(rate+0.5)))
	d.barShow = true
}

// timeLeft estimates the time until the run ends at rate steps/s: the end
// of the generation in which the budget runs out, since a generation runs
// to its end (a budget of 1.2 generations trains 2), with generations of
// genStep steps (rollouts in whole and PBT's step clock make them a little
// longer or shorter).
func timeLeft(p evo.Progress, genStep int, rate float64) string {
	switch {
	case p.TotalSteps >= p.MaxSteps:
		// The budget is spent, but a generation runs to its end: its time
		// left is unknown here, and "0s left" would be wrong.
		return "finishing the generation"
	case rate <= 0:
		return "? left"
	}
	end := p.MaxSteps
	if genStep > 0 {
		end = max(end, (p.MaxSteps+genStep-1)/genStep*genStep)
	}
	return fmtDuration(time.Duration(float64(end-p.TotalSteps)/rate*float64(time.Second))) + " left"
}

// generation prints a finished generation.
func (d *display) generation(r evo.GenerationReport) {
	if d.quiet {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.clearBar()
	best := r.Members[r.Best]
	// The mean of the agents that did not diverge.
	mean, n, idle := 0.0, 0, 0
	for _, m := range r.Members {
		if !m.Diverged {
			mean += m.Fitness
			n++
		}
		if m.Idle {
			idle++
		}
	}
	mean /= float64(n)
	waiting := "" // agents PBT's step clock held back this generation
	if idle > 0 {
		waiting = fmt.Sprintf(", %d waiting", idle)
	}
	rate := 0.0
	if d.tr != nil {
		rate, _ = d.rate()
	}
	elite := ""
	switch {
	case r.NewElite && !math.IsNaN(r.Confirmed):
		elite = fmt.Sprintf(" (confirmed %.6g: new elite, saved)", r.Confirmed)
	case r.NewElite:
		elite = " (new elite, saved)"
	case !math.IsNaN(r.Confirmed):
		elite = fmt.Sprintf(" (confirmed %.6g)", r.Confirmed)
	}
	if !d.terminal {
		who := fmt.Sprint(best.Index)
		if len(best.Config.Net.Memories) > 1 { // a memory gene: which model is ahead
			who += ", " + string(best.Config.Net.Encoder)
		}
		fmt.Fprintf(d.w, "gen %d: best %.6g (agent %s)%s, mean %.4g%s, elite %.6g, steps %s/%s, %s steps/s, %s\n",
			r.Generation, best.Fitness, who, elite, mean, waiting, r.EliteFitness, commas(r.TotalSteps), commas(r.MaxSteps),
			commas(int(rate+0.5)), fmtDuration(r.Wall))
		return
	}
	fmt.Fprintf(d.w, "generation %d: best %.6g (agent %d)%s, mean %.4g%s, elite %.6g, %s/%s steps, %s steps/s\n",
		r.Generation, best.Fitness, best.Index, elite, mean, waiting, r.EliteFitness, commas(r.TotalSteps), commas(r.MaxSteps), commas(int(rate+0.5)))
	fmt.Fprintf(d.w, "  %-7s %-6s %9s %10s %9s %6s %6s  %-40s %s\n", "agent", "parent", "fitness", "steps", "lr", "batch", "learn", "net", "mutation")
	for i, m := range r.Members {
		mark := " "
		if i == r.Best {
			mark = "*"
		}
		parent := "-"
		if m.Parent >= 0 {
			parent = fmt.Sprint(m.Parent)
		}
		fit := fmt.Sprintf("%.1f", m.Fitness)
		switch {
		case m.Diverged:
			fit = "diverged"
		case m.Idle: // trained nothing: the fitness it had
			fit = "(" + fit + ")"
		}
		fmt.Fprintf(d.w, "  %s%-6d %-6s %9s %10s %9.3g %6d %6d  %-40s %s\n", mark, m.Index, parent, fit, commas(m.Steps),
			m.Config.LR, m.Config.BatchSize, m.Config.LearnStep, clip(m.Config.Net.String(), 40), clip(m.Mutation, 60))
	}
}

// clip cuts s to n characters, marking the cut with an ellipsis.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

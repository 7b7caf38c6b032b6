package cli

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/evolverl/evolve/evo"
	"github.com/evolverl/evolve/internal/atomicfile"
)

// anchor is the published score of tuned single-agent PPO on an env that a
// benchmark row is set beside.
type anchor struct {
	Return float64
	Steps  int // the env steps it was trained for
	Source string
}

// anchors are rl-baselines3-zoo's figures for tuned PPO (ppo_lstm from
// sb3-contrib for the NoVel envs), by our env id.
var anchors = map[string]anchor{
	"CartPole-v1":              {500, 100_000, "zoo PPO"},
	"Acrobot-v1":               {-73.5, 1_000_000, "zoo PPO"},
	"Pendulum-v1":              {-172, 100_000, "zoo PPO with gSDE"},
	"MountainCarContinuous-v0": {88.3, 20_000, "zoo PPO"},
	"MountainCar-v0":           {-110.4, 1_000_000, "zoo PPO, VecNormalize"},
	"LunarLander-v3":           {242, 1_000_000, "zoo PPO, v2"},
	"LunarLanderContinuous-v3": {271, 1_000_000, "zoo PPO, v2"},
	"CartPoleNoVel-v1":         {500, 100_000, "zoo ppo_lstm"},
	"PendulumNoVel-v1":         {-218, 100_000, "zoo ppo_lstm"},
}

// benchGroup is the runs of one config in one variant, seeds in order.
type benchGroup struct {
	config, env, variant string
	runs                 []benchRun
}

func groupRuns(runs []benchRun) []benchGroup {
	var gs []benchGroup
	for _, r := range runs {
		if n := len(gs); n > 0 && gs[n-1].config == r.Config && gs[n-1].variant == r.Variant {
			gs[n-1].runs = append(gs[n-1].runs, r)
			continue
		}
		gs = append(gs, benchGroup{config: r.Config, env: r.Env, variant: r.Variant, runs: []benchRun{r}})
	}
	return gs
}

// column returns f of every run of g.
func (g benchGroup) column(f func(benchRun) float64) []float64 {
	xs := make([]float64, len(g.runs))
	for i, r := range g.runs {
		xs[i] = f(r)
	}
	return xs
}

// fmtReturn formats a return for the report.
func fmtReturn(x float64) string {
	if math.IsNaN(x) {
		return "—"
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}

// cell formats "mean ± std (x1, x2, ...)".
func cell(xs []float64) string {
	m, s := meanStd(xs)
	if math.IsNaN(m) || math.IsInf(m, 0) {
		m, s = math.NaN(), math.NaN()
	}
	each := make([]string, len(xs))
	for i, x := range xs {
		each[i] = fmtReturn(x)
	}
	if math.IsNaN(m) {
		return "— (" + strings.Join(each, ", ") + ")"
	}
	return fmt.Sprintf("%s ± %s (%s)", fmtReturn(m), fmtReturn(s), strings.Join(each, ", "))
}

// writeReport writes BENCHMARKS.md, benchmarks.csv and the lr charts and
// returns the paths written.
func (o benchOptions) writeReport(runs []benchRun) ([]string, error) {
	if err := os.MkdirAll(o.report, 0o755); err != nil {
		return nil, err
	}
	var written []string
	groups := groupRuns(runs)
	charts, err := o.writeLRCharts(groups)
	written = append(written, charts...)
	if err != nil {
		return written, err
	}
	md := filepath.Join(o.report, "BENCHMARKS.md")
	if err := atomicfile.WriteBytes(md, o.markdown(groups, charts)); err != nil {
		return written, err
	}
	written = append(written, md)
	path := filepath.Join(o.report, "benchmarks.csv")
	b, err := benchCSV(runs)
	if err == nil {
		err = atomicfile.WriteBytes(path, b)
	}
	if err != nil {
		return written, err
	}
	return append(written, path), nil
}

// benchCSVHeader is benchmarks.csv's columns, one row per run.
var benchCSVHeader = []string{"config", "env", "variant", "seed", "population_size", "generations", "stop_reason",
	"population_steps", "steps_per_agent", "elite_steps", "elite_fitness", "eval_return", "eval_episodes",
	"last_best", "last_mean", "final_lr", "steps_to_anchor", "wall_s", "steps_per_s", "anchor", "anchor_steps"}

func benchCSV(runs []benchRun) ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write(benchCSVHeader)
	for _, r := range runs {
		a, ok := anchors[r.Env]
		aRet, aSteps := "", ""
		if ok {
			aRet, aSteps = fmtFloat(a.Return), strconv.Itoa(a.Steps)
		}
		s := r.Summary
		w.Write([]string{r.Config, r.Env, r.Variant, strconv.FormatInt(r.Seed, 10), strconv.Itoa(r.Size),
			strconv.Itoa(s.Generations), s.StopReason, strconv.Itoa(s.TotalSteps), strconv.Itoa(r.StepsPerAgent()),
			strconv.Itoa(r.EliteSteps), fmtFloat(s.EliteFitness), fmtFloat(r.EvalReturn), strconv.Itoa(r.EvalEpisodes),
			fmtFloat(r.LastBest), fmtFloat(r.LastMean), fmtFloat(r.FinalLR), strconv.Itoa(r.StepsToAnchor),
			strconv.FormatFloat(s.WallSeconds, 'f', 3, 64),
			strconv.FormatFloat(r.StepsPerSecond(), 'f', 0, 64), aRet, aSteps})
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// cpuModel returns the first "model name" of /proc/cpuinfo, or GOARCH.
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				return strings.TrimSpace(v)
			}
		}
	}
	return runtime.GOARCH
}

// stopSentence says why the runs in the table stopped, from their
// summaries' stop_reason: "Every run …" when they agree, otherwise how many
// stopped for each reason ("Of the 6 runs, 4 stopped at … and 2 spent …").
func (o benchOptions) stopSentence(groups []benchGroup) string {
	count := map[string]int{}
	var reasons []string // in order of first appearance
	total := 0
	for _, g := range groups {
		for _, r := range g.runs {
			if count[r.Summary.StopReason] == 0 {
				reasons = append(reasons, r.Summary.StopReason)
			}
			count[r.Summary.StopReason]++
			total++
		}
	}
	// why is the verb phrase for reason, singular ("its") or plural ("their").
	why := func(reason string, one bool) string {
		its := map[bool]string{true: "its", false: "their"}[one]
		switch reason {
		case evo.StopTarget:
			return "stopped at " + its + " config's `target` once a generation's best reached it (after `min_generations`)"
		case evo.StopBudget:
			if o.noTarget {
				return "spent " + its + " whole step budget (`-no-target`)"
			}
			return "spent " + its + " whole step budget"
		}
		return fmt.Sprintf("stopped with stop_reason %q", reason)
	}
	switch len(reasons) {
	case 0:
		return "No run is in the table."
	case 1:
		if total == 1 {
			return "The run " + why(reasons[0], true) + "."
		}
		return "Every run " + why(reasons[0], true) + "."
	}
	parts := make([]string, len(reasons))
	for i, reason := range reasons {
		parts[i] = fmt.Sprintf("%d %s", count[reason], why(reason, count[reason] == 1))
	}
	last := len(parts) - 1
	return fmt.Sprintf("Of the %d runs, %s and %s.", total, strings.Join(parts[:last], ", "), parts[last])
}

// markdown returns BENCHMARKS.md.
func (o benchOptions) markdown(groups []benchGroup, charts []string) []byte {
	var b bytes.Buffer
	o.mdIntro(&b, groups)
	o.mdScores(&b, groups)
	mdSteps(&b, groups)
	o.mdMissing(&b, charts)
	return b.Bytes()
}

// mdIntro writes the report's title, where and how it was made, and what
// its columns mean.
func (o benchOptions) mdIntro(b *bytes.Buffer, groups []benchGroup) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("# Benchmarks\n\n")
	p("Written by `%s` on %s UTC: %s, %d CPUs, %s.\n", strings.TrimSpace(o.command),
		time.Now().UTC().Format("2006-01-02 15:04"), cpuModel(), runtime.NumCPU(), runtime.Version())
	if o.note != "" {
		p("\n%s\n", o.note)
	}
	p("\n%s Returns are undiscounted; evaluation and confirmation take deterministic actions. *elite* is summary.json's "+
		"`elite_fitness`: for a config with `[population] elite_episodes`, the elite's mean return on the run's "+
		"confirmation episodes (played from one seed for the whole run); without, the best generation-best "+
		"fitness of the run (a mean over `eval_episodes` episodes, maximised over generations, so optimistic); ",
		o.stopSentence(groups))
	if o.evalEpisodes > 0 {
		p("*re-evaluated* is the elite file played on %d fresh episodes (from the same seed for every run); ", o.evalEpisodes)
	}
	p("*last gen* is the last generation's best and mean fitness (with `fitness = \"train\"`, the "+
		"mean return of each agent's last training episodes, whose actions are sampled). Each cell is mean ± population std "+
		"over seeds with the seeds' values in brackets. *steps/agent* is the population's env steps "+
		"divided by its size, to set beside the anchor's single-agent steps; wall time and steps/s are per run, "+
		"averaged over seeds. Variants: *evo* the config as written; *fixed* `[population] independent = true` "+
		"(no selection, no mutation: separate PPO agents with the initial hyperparameters); *lrF* evolution "+
		"started from F × the config's lr (its `[hp.lr]` range widened to include it). The anchor is tuned "+
		"single-agent PPO from rl-baselines3-zoo; *≥ anchor* counts the seeds whose %s reaches it.\n\n",
		map[bool]string{true: "re-evaluated return", false: "elite fitness"}[o.evalEpisodes > 0])
}

// mdScores writes the table of scores: elite, re-evaluated, last
// generation, the anchor and how many seeds reach it.
func (o benchOptions) mdScores(b *bytes.Buffer, groups []benchGroup) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("| config | variant | elite | ")
	if o.evalEpisodes > 0 {
		p("re-evaluated | ")
	}
	p("last gen best | last gen mean | anchor | ≥ anchor |\n|---|---|---|")
	if o.evalEpisodes > 0 {
		p("---|")
	}
	p("---|---|---|---|\n")
	for _, g := range groups {
		p("| %s | %s | %s | ", g.config, g.variant, cell(g.column(func(r benchRun) float64 { return r.Summary.EliteFitness })))
		if o.evalEpisodes > 0 {
			p("%s | ", cell(g.column(func(r benchRun) float64 { return r.EvalReturn })))
		}
		p("%s | %s | ", cell(g.column(func(r benchRun) float64 { return r.LastBest })),
			cell(g.column(func(r benchRun) float64 { return r.LastMean })))
		if a, ok := anchors[g.env]; ok {
			reached := 0
			for _, r := range g.runs {
				if r.Score() >= a.Return {
					reached++
				}
			}
			p("%s @ %s (%s) | %d/%d |\n", fmtFloat(a.Return), siFormat(float64(a.Steps)), a.Source, reached, len(g.runs))
		} else {
			p("— | — |\n")
		}
	}
}

// mdSteps writes the table of steps: to the anchor, per agent, in all,
// wall time, throughput and the final lr.
func mdSteps(b *bytes.Buffer, groups []benchGroup) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("\n*to anchor* is the population's env steps divided by its size when a generation's best fitness (over " +
		"`eval_episodes` episodes, so optimistic) first reached the anchor, per seed. " +
		"*final lr* is the geometric mean of the last generation's lr, per seed.\n\n")
	p("| config | variant | to anchor (per agent) | steps/agent | population steps | wall | steps/s | final lr |\n|---|---|---|---|---|---|---|---|\n")
	for _, g := range groups {
		var reach, lrs []string
		_, anchored := anchors[g.env]
		for _, r := range g.runs {
			switch {
			case !anchored:
				reach = append(reach, "—") // nothing to reach
			case r.StepsToAnchor < 0:
				reach = append(reach, "never")
			default:
				reach = append(reach, siFormat(float64(int(float64(r.StepsToAnchor/r.Size)/1000+0.5)*1000)))
			}
			lrs = append(lrs, strconv.FormatFloat(r.FinalLR, 'g', 3, 64))
		}
		perAgent, _ := meanStd(g.column(func(r benchRun) float64 { return float64(r.StepsPerAgent()) }))
		total, _ := meanStd(g.column(func(r benchRun) float64 { return float64(r.Summary.TotalSteps) }))
		wall, _ := meanStd(g.column(func(r benchRun) float64 { return r.Summary.WallSeconds }))
		sps, _ := meanStd(g.column(benchRun.StepsPerSecond))
		p("| %s | %s | %s | %s | %s | %s | %s | %s |\n", g.config, g.variant, strings.Join(reach, ", "),
			commas(int(perAgent+0.5)), commas(int(total+0.5)), fmtDuration(time.Duration(wall*float64(time.Second))),
			commas(int(sps+0.5)), strings.Join(lrs, ", "))
	}
}

// mdMissing writes which default configs and runs the report lacks, and
// the lr charts.
func (o benchOptions) mdMissing(b *bytes.Buffer, charts []string) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	var missing []string
	for _, n := range append(slices.Clip(benchClassic), benchLong...) {
		if !o.defaults {
			break // the configs were chosen
		}
		if !slices.ContainsFunc(o.configs, func(c string) bool { return benchName(c) == n }) {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		p("\nNot run in this report: %s.\n", strings.Join(missing, ", "))
	}
	if len(o.notRun) > 0 {
		p("\nMissing or unfinished in the runs' directory (`-collect` trains nothing): %s.\n", strings.Join(o.notRun, ", "))
	}
	if len(o.others) > 0 {
		p("\nAlso in the runs' directory, not in this report: %s.\n", strings.Join(o.others, ", "))
	}
	for _, c := range charts {
		rel, err := filepath.Rel(o.report, c)
		if err != nil {
			rel = c
		}
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(c), "lr-"), ".png")
		p("\n![%s: the population's lr per generation](%s)\n", name, filepath.ToSlash(rel))
	}
}

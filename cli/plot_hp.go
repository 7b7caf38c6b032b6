package cli

import (
	"math"
	"slices"
	"strings"

	"github.com/evolverl/evolve/evo"
	"gonum.org/v1/plot"
)

// hpLabels gives the hyperparameters' axis labels with their units, for
// charts where the axis names the hyperparameter.
var hpLabels = map[string]string{
	"lr":         "lr (Adam step size, log scale)",
	"batch_size": "batch_size (transitions)",
	"learn_step": "learn_step (transitions per update)",
}

// hpUnits gives the units of the hyperparameters that have one, for the
// title of their panel.
var hpUnits = map[string]string{
	"lr":            "Adam step size",
	updateLRName:    "the last update's, as the KL rate or annealing left it",
	"batch_size":    "transitions",
	"learn_step":    "transitions per update",
	"update_epochs": "passes over the rollout",
}

// changedHPs returns the indices of the hyperparameter columns whose value
// changed during the run.
func changedHPs(m *evo.Metrics) []int {
	var changed []int
	for i := range m.HPNames {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, r := range m.Rows {
			lo, hi = min(lo, r.HP[i]), max(hi, r.HP[i])
		}
		if lo < hi {
			changed = append(changed, i)
		}
	}
	return changed
}

// updateLRName is the column of the rate an agent's last update trained with, which
// hyperparameters.png and -hp chart beside lr when the two differ.
const updateLRName = "update_lr"

// addUpdateLR appends update_lr to m's hyperparameter columns when some row's differs
// from its lr (the KL-adaptive rate or annealing moved it): lr is then only where each
// update starts, and update_lr what the agents trained with. With always (-hp
// update_lr) it appends the column wherever the file has it. It does nothing twice.
func addUpdateLR(m *evo.Metrics, always bool) {
	lr := slices.Index(m.HPNames, "lr")
	if lr < 0 || slices.Contains(m.HPNames, updateLRName) {
		return
	}
	differs := false
	for _, r := range m.Rows {
		if math.IsNaN(r.UpdateLR) {
			return
		}
		differs = differs || r.UpdateLR != r.HP[lr]
	}
	if !differs && !always {
		return
	}
	m.HPNames = append(slices.Clip(m.HPNames), updateLRName)
	for i := range m.Rows {
		m.Rows[i].HP = append(slices.Clip(m.Rows[i].HP), m.Rows[i].UpdateLR)
	}
}

// hpPlot charts hyperparameter m.HPNames[i] of every slot against the
// population's env steps, the x axis of fitness.png: each point is the
// value the slot's agent trained with in the generation that ended there.
// The y axis follows the scale the run's [hp] range has (evo.HPScale: its
// scale key, else the name's default): log and pow2 ranges on a log axis,
// log1m ones (gamma, gae_lambda) as 1 − value on one; update_lr as lr.
func hpPlot(m *evo.Metrics, t *slotTable, i int, rc runConfig) *plot.Plot {
	name := m.HPNames[i]
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range m.Rows {
		lo, hi = min(lo, r.HP[i]), max(hi, r.HP[i])
	}
	p := newPlot()
	p.Title.Text = name
	stepsAxis(p)
	value := func(r evo.MetricsRow) float64 { return r.HP[i] }
	scale, ok := rc.hpScales[name]
	if !ok {
		scale = evo.HPScale(name, evo.HPRange{})
	}
	if name == updateLRName {
		scale = evo.ScaleLog
	}
	logScale := lo > 0 && (scale == evo.ScaleLog || scale == evo.ScalePow2)
	if scale == evo.ScaleLog1m && hi < 1 {
		// What matters is the horizon 1/(1 − gamma): plot 1 − value on a
		// log scale, as PBT and the zoo step it.
		value = func(r evo.MetricsRow) float64 { return 1 - r.HP[i] }
		p.Title.Text = "1 − " + name
		logScale = true
	}
	t.plot(p, value)
	var notes []string
	if u, ok := hpUnits[name]; ok {
		notes = append(notes, u)
	}
	pow2 := (name == "batch_size" || name == "learn_step") && allPowersOfTwo(m, i)
	switch {
	case logScale && pow2: // they move by powers of two: label those
		notes = append(notes, "log scale")
		logY(p)
		p.Y.Tick.Marker = pow2Ticks{}
	case logScale:
		notes = append(notes, "log scale")
		logY(p)
	case name == "update_epochs" || name == "max_seq_len" || name == "batch_size" || name == "learn_step":
		p.Y.Tick.Marker = integerTicks{}
		padY(p)
	default:
		p.Y.Tick.Marker = plainTicks{}
		padY(p)
	}
	if len(notes) > 0 {
		p.Title.Text += " (" + strings.Join(notes, ", ") + ")"
	}
	return p
}

// allPowersOfTwo reports whether every value of hyperparameter column i
// is a power of two (a range on the pow2 scale).
func allPowersOfTwo(m *evo.Metrics, i int) bool {
	for _, r := range m.Rows {
		v := r.HP[i]
		if !(v >= 1) || v != math.Exp2(math.Round(math.Log2(v))) {
			return false
		}
	}
	return len(m.Rows) > 0
}

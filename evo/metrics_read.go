package evo

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
)

// MetricsRow is the part of one metrics.csv row that tools read back.
type MetricsRow struct {
	Generation, Agent, Parent int
	// Fitness is the agent's fitness, −Inf for a diverged agent (the file
	// says NaN).
	Fitness float64
	// TotalSteps is the population's env steps at the end of the generation.
	TotalSteps float64
	// HP holds the hyperparameter columns' values, in Metrics.HPNames order.
	HP []float64
	// Net is the network column (Spec.String).
	Net string
	// EliteFitness is the elite's score after the generation (the confirmed
	// one with elite_episodes); NaN in runs begun before metrics.csv had the
	// column.
	EliteFitness float64
	// TrainReturn is the mean return of the agent's training episodes in
	// the generation; the others are the statistics of its last PPO update
	// (agent.Stats). Each is NaN where the file has no such column, and
	// Loss and the others may be NaN in a diverged agent's row.
	TrainReturn, Loss, PolicyLoss, ValueLoss, Entropy, ApproxKL, ClipFrac, ExplainedVariance, GradNorm float64
	// UpdateLR is the learning rate of the agent's last update (update_lr:
	// lr as the KL-adaptive rate or annealing left it); NaN where the file
	// has no such column.
	UpdateLR float64
}

// Metrics is a run's metrics.csv as ReadMetrics reads it.
type Metrics struct {
	// HPNames are the hyperparameter columns, those between grad_norm and
	// net (docs/run-directory.md lists the columns).
	HPNames []string
	// Rows are the rows in file order.
	Rows []MetricsRow
}

// ReadMetrics reads and checks the metrics.csv a run writes (any build's
// columns); every error names the file, and the line and column at fault. A
// file without rows is an error: the run has not finished a generation.
//
// A run being written, or stopped by a crash, may end in a line cut short or
// in part of a generation's rows: a last line without its newline is
// dropped (every row is written whole with one), and so are the rows of the
// last generation when it has fewer than the generation before it (every
// generation has a row per agent). A file cut at a line's end within its
// first generation cannot be told from a smaller population, and is read
// as it is.
//
// path is the file, or the run directory that holds it (as ReadSummary and
// the other readers take).
func ReadMetrics(path string) (*Metrics, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "metrics.csv")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if i := bytes.LastIndexByte(b, '\n'); i+1 < len(b) {
		b = b[:i+1] // a torn last line
	}
	r := csv.NewReader(bytes.NewReader(b))
	header, err := r.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: empty file", path)
	} else if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	for _, c := range []string{"generation", "agent", "parent", "fitness", "total_steps", "grad_norm", "net"} {
		if _, ok := col[c]; !ok {
			return nil, fmt.Errorf("%s: no column %q in the header (not a metrics.csv of evolve?)", path, c)
		}
	}
	m := &Metrics{HPNames: header[col["grad_norm"]+1 : col["net"]]}
	for line := 2; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		row, err := parseMetricsRow(rec, col, m.HPNames)
		if err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", path, line, err)
		}
		m.Rows = append(m.Rows, row)
	}
	m.Rows = wholeGenerations(m.Rows)
	if len(m.Rows) == 0 {
		return nil, fmt.Errorf("%s: no rows: the run has not finished a generation yet", path)
	}
	return m, nil
}

// wholeGenerations returns rows without the last generation's when it has
// fewer rows than the generation before it: a generation being appended.
func wholeGenerations(rows []MetricsRow) []MetricsRow {
	count := func(end int) (start int) {
		start = end
		for start > 0 && rows[start-1].Generation == rows[end-1].Generation {
			start--
		}
		return start
	}
	n := len(rows)
	if n == 0 {
		return rows
	}
	last := count(n)
	if last == 0 {
		return rows
	}
	if prev := count(last); n-last < last-prev {
		return rows[:last]
	}
	return rows
}

// parseMetricsRow reads one record whose columns col indexes by name.
func parseMetricsRow(rec []string, col map[string]int, hpNames []string) (MetricsRow, error) {
	num := func(name string) (float64, error) {
		v, err := strconv.ParseFloat(rec[col[name]], 64)
		if err != nil {
			return 0, fmt.Errorf("column %s: %q is not a number", name, rec[col[name]])
		}
		return v, nil
	}
	integer := func(name string) (int, error) {
		v, err := strconv.Atoi(rec[col[name]])
		if err != nil {
			return 0, fmt.Errorf("column %s: %q is not an integer", name, rec[col[name]])
		}
		return v, nil
	}
	var row MetricsRow
	var errs [5]error
	row.Generation, errs[0] = integer("generation")
	row.Agent, errs[1] = integer("agent")
	row.Parent, errs[2] = integer("parent")
	row.Fitness, errs[3] = num("fitness")
	row.TotalSteps, errs[4] = num("total_steps")
	if err := errors.Join(errs[:]...); err != nil {
		return row, err
	}
	if math.IsNaN(row.Fitness) {
		row.Fitness = math.Inf(-1)
	}
	for _, h := range hpNames {
		v, err := num(h)
		if err != nil {
			return row, err
		}
		row.HP = append(row.HP, v)
	}
	row.Net = rec[col["net"]]
	for _, c := range []struct {
		name string
		v    *float64
	}{
		{"elite_fitness", &row.EliteFitness}, {"train_return", &row.TrainReturn}, {"loss", &row.Loss},
		{"policy_loss", &row.PolicyLoss}, {"value_loss", &row.ValueLoss}, {"entropy", &row.Entropy},
		{"approx_kl", &row.ApproxKL}, {"clip_frac", &row.ClipFrac},
		{"explained_variance", &row.ExplainedVariance}, {"grad_norm", &row.GradNorm}, {"update_lr", &row.UpdateLR},
	} {
		*c.v = math.NaN()
		if _, ok := col[c.name]; ok {
			var err error
			if *c.v, err = num(c.name); err != nil {
				return row, err
			}
		}
	}
	return row, nil
}

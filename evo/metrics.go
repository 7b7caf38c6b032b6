package evo

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/evolverl/evolve/internal/atomicfile"
	"github.com/evolverl/evolve/internal/jsonfloat"
)

// metricsHPs returns the hyperparameter columns of metrics.csv: lr,
// batch_size and learn_step, then every other one with an [hp] range, in
// HPNames order.
func (c Config) metricsHPs() []string {
	var names []string
	for _, n := range HPNames() {
		if _, ok := c.HP[n]; ok || n == "lr" || n == "batch_size" || n == "learn_step" {
			names = append(names, n)
		}
	}
	return names
}

// metricsBase is the number of columns of the earliest metrics.csv a run
// may have begun with: the columns up to mutation.
func (c Config) metricsBase() int { return 17 + len(c.metricsHPs()) + 2 }

// metricsHeader returns the columns of metrics.csv. After the columns up to
// mutation come, in the order they were added, those that count the env
// steps spent on measuring (eval_steps: the agent's evaluation in the
// generation; global_steps: the run's training, evaluation and
// confirmation steps so far), the elite's score after the generation, and
// update_lr, the learning rate of the agent's last update (lr as the
// KL-adaptive rate or anneal_lr left it; lr without either), and with RND (ppo.rnd_coef > 0)
// intrinsic_reward and rnd_loss of the agent's last update. A run begun
// with fewer columns goes on writing the ones it began with (see
// truncateMetrics).
func (c Config) metricsHeader() []string {
	h := []string{"generation", "agent", "parent", "fitness", "diverged", "steps", "total_steps", "wall_s",
		"train_return", "loss", "policy_loss", "value_loss", "entropy", "approx_kl", "clip_frac",
		"explained_variance", "grad_norm"}
	h = append(h, c.metricsHPs()...)
	h = append(h, "net", "mutation")
	h = append(h, "eval_steps", "global_steps", "elite_fitness", "update_lr")
	if c.PPO.RNDCoef > 0 {
		h = append(h, "intrinsic_reward", "rnd_loss")
	}
	return h
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// metricsRows returns one row per member of the generation rep, of the
// first width columns of metricsHeader.
func (c Config) metricsRows(rep GenerationReport, wall float64, width int) [][]string {
	rows := make([][]string, 0, len(rep.Members))
	for _, r := range rep.Members {
		st := r.Stats
		row := []string{strconv.Itoa(rep.Generation), strconv.Itoa(r.Index), strconv.Itoa(r.Parent), fmtFloat(r.Fitness),
			strconv.FormatBool(r.Diverged), strconv.Itoa(r.Steps), strconv.Itoa(rep.TotalSteps),
			strconv.FormatFloat(wall, 'f', 3, 64), fmtFloat(r.TrainReturn), fmtFloat(st.Loss),
			fmtFloat(st.PolicyLoss), fmtFloat(st.ValueLoss), fmtFloat(st.Entropy), fmtFloat(st.ApproxKL),
			fmtFloat(st.ClipFrac), fmtFloat(st.ExplainedVariance), fmtFloat(st.GradNorm)}
		for _, n := range c.metricsHPs() {
			row = append(row, fmtFloat(hpValue(r.Config, n)))
		}
		row = append(row, r.Config.Net.String(), r.Mutation)
		row = append(row, strconv.Itoa(r.EvalSteps), strconv.Itoa(rep.GlobalSteps), fmtFloat(rep.EliteFitness), fmtFloat(st.LR))
		if c.PPO.RNDCoef > 0 {
			row = append(row, fmtFloat(st.IntrinsicReward), fmtFloat(st.RNDLoss))
		}
		rows = append(rows, row[:width])
	}
	return rows
}

// appendMetrics appends the generation rep's rows to metrics.csv in one
// write, so that a reader (evolve plot on a live run) sees none of the
// generation or all of it, and syncs it.
func (t *Trainer) appendMetrics(rep GenerationReport, wall float64) error {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.WriteAll(t.cfg.metricsRows(rep, wall, t.metricsWidth))
	if err := w.Error(); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	path := filepath.Join(t.dir, "metrics.csv")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	_, err = f.Write(buf.Bytes())
	return errors.Join(err, f.Sync(), f.Close())
}

// truncateMetrics rewrites metrics.csv atomically without the rows of
// generations after the current one (a resumed run repeats them), or
// creates it with its header. See metricsUpTo for what it keeps.
func (t *Trainer) truncateMetrics() error {
	path := filepath.Join(t.dir, "metrics.csv")
	header := t.cfg.metricsHeader()
	b, err := os.ReadFile(path)
	if err == nil && t.gen > 0 {
		// A run begun by an earlier build keeps the columns it began with.
		if h, herr := csv.NewReader(bytes.NewReader(b)).Read(); herr == nil &&
			len(h) >= t.cfg.metricsBase() && len(h) < len(header) && slices.Equal(h, header[:len(h)]) {
			header = h
		}
	}
	t.metricsWidth = len(header)
	rows := [][]string{header}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if t.gen > 0 {
			t.log.Warn(fmt.Sprintf("metrics.csv is missing: the rows of %s are lost; it begins again at generation %d", generations(1, t.gen), t.gen+1),
				"dir", t.dir)
		}
	case err != nil:
		return fmt.Errorf("metrics: %w", err)
	default:
		kept, err := metricsUpTo(b, header, t.gen)
		if err != nil {
			return badInput(fmt.Errorf("metrics: %s: %w", path, err))
		}
		rows = append(rows, kept...)
		last := 0
		if len(kept) > 0 {
			last, _ = strconv.Atoi(kept[len(kept)-1][0])
		}
		if last < t.gen {
			// Cut short by hand (or copied before the checkpoint was):
			// the rows resumed after would leave a gap unsaid.
			t.log.Warn(fmt.Sprintf("metrics.csv ends at generation %d, before the checkpoint's %d: the rows of %s are lost; it goes on at generation %d",
				last, t.gen, generations(last+1, t.gen), t.gen+1), "dir", t.dir)
		}
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.WriteAll(rows)
	if err := w.Error(); err != nil {
		return err
	}
	return atomicfile.WriteBytes(path, buf.Bytes())
}

// generations names the generations from to to: "generation 3" or
// "generations 3 to 5".
func generations(from, to int) string {
	if from == to {
		return fmt.Sprintf("generation %d", from)
	}
	return fmt.Sprintf("generations %d to %d", from, to)
}

// metricsUpTo returns the rows of metrics.csv's contents b (after header,
// which must be its first record) of generations up to gen. Rows are in
// generation order, so it stops at the first row of a later generation and
// ignores everything after it. A last line cut short (a generation's rows
// are appended after the checkpoint before it, so a crash can tear only a
// row of a later generation) is dropped too, unless it is plainly a row
// of a generation up to gen. Any other malformed row is an error naming
// its line.
func metricsUpTo(b []byte, header []string, gen int) ([][]string, error) {
	r := csv.NewReader(bytes.NewReader(b))
	r.FieldsPerRecord = len(header)
	if h, err := r.Read(); err != nil || !slices.Equal(h, header) {
		return nil, errors.New("the header differs from this config's columns")
	}
	var rows [][]string
	for {
		start := r.InputOffset()
		rec, err := r.Read()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			if tornRow(b[start:], gen) {
				return rows, nil
			}
			return nil, err
		}
		g, err := strconv.Atoi(rec[0])
		if err != nil {
			line, _ := r.FieldPos(0)
			return nil, fmt.Errorf("record on line %d: generation %q: %w", line, rec[0], err)
		}
		if g > gen {
			return rows, nil
		}
		rows = append(rows, rec)
	}
}

// tornRow reports whether rest, the end of metrics.csv from the start of a
// record that does not parse, is a row cut short by a crash: the last line
// of the file, without the newline that ends every row written whole, and
// not one whose generation (when its first field is whole) is up to gen.
func tornRow(rest []byte, gen int) bool {
	if bytes.IndexByte(rest, '\n') >= 0 {
		return false // rows end in a newline: this one is whole
	}
	first, _, whole := bytes.Cut(rest, []byte(","))
	if g, err := strconv.Atoi(string(first)); whole && err == nil && g <= gen {
		return false
	}
	return true
}

// summaryFile is summary.json: Summary with the elite's fitness written
// exactly, infinities as strings, and the elite last.
type summaryFile struct {
	Summary
	EliteFitness jsonfloat.F64 `json:"elite_fitness"`
	Elite        *EliteRecord  `json:"elite,omitempty"`
}

// writeSummary writes summary.json atomically.
func (t *Trainer) writeSummary(s Summary) error {
	f := summaryFile{Summary: s, EliteFitness: jsonfloat.F64(s.EliteFitness), Elite: s.Elite}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteBytes(filepath.Join(t.dir, "summary.json"), append(b, '\n'))
}

// ReadSummary reads the summary.json of the run in dir, as Run wrote it,
// the elite's record included. A missing or malformed file is an error
// naming it.
func ReadSummary(dir string) (Summary, error) {
	path := filepath.Join(dir, "summary.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return Summary{}, fmt.Errorf("summary: %w", err)
	}
	var f summaryFile
	if err := json.Unmarshal(b, &f); err != nil {
		return Summary{}, badInput(fmt.Errorf("summary: %s: %w", path, err))
	}
	f.Summary.EliteFitness = float64(f.EliteFitness)
	f.Summary.Elite = f.Elite
	return f.Summary, nil
}

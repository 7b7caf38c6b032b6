package evo

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evolverl/evolve/internal/runtest"
)

// TestReadMetricsStatsByName: the PPO statistics are read by column name,
// and are NaN in a file without those columns (another tool's, or one cut
// down by hand), which still reads.
func TestReadMetricsStatsByName(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string { return runtest.WriteFile(t, dir, name, text) }
	full := write("full.csv", "generation,agent,parent,fitness,diverged,steps,total_steps,wall_s,train_return,loss,policy_loss,value_loss,entropy,approx_kl,clip_frac,explained_variance,grad_norm,lr,net,mutation,eval_steps,global_steps,elite_fitness,update_lr\n"+
		"1,0,-1,10,false,256,512,0.1,20,1.5,-0.1,3.2,0.6,0.002,0.1,0.4,0.9,0.001,mlp[16] ReLU latent 8 head[16] ReLU,initial,100,612,10,0.001\n")
	m, err := ReadMetrics(full)
	if err != nil {
		t.Fatal(err)
	}
	r := m.Rows[0]
	got := []float64{r.TrainReturn, r.Loss, r.PolicyLoss, r.ValueLoss, r.Entropy, r.ApproxKL, r.ClipFrac, r.ExplainedVariance, r.GradNorm, r.EliteFitness, r.UpdateLR}
	want := []float64{20, 1.5, -0.1, 3.2, 0.6, 0.002, 0.1, 0.4, 0.9, 10, 0.001}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("column %d: got %v, want %v", i, got[i], want[i])
		}
	}
	few := write("few.csv", "generation,agent,parent,fitness,total_steps,grad_norm,lr,net\n1,0,-1,10,512,0.9,0.001,mlp[16] ReLU latent 8 head[16] ReLU\n")
	m, err = ReadMetrics(few)
	if err != nil {
		t.Fatal(err)
	}
	if r := m.Rows[0]; r.GradNorm != 0.9 || !math.IsNaN(r.Loss) || !math.IsNaN(r.ExplainedVariance) || !math.IsNaN(r.EliteFitness) || !math.IsNaN(r.UpdateLR) {
		t.Errorf("file without the columns: grad_norm %v, loss %v, explained_variance %v, elite_fitness %v; want 0.9 and NaNs",
			r.GradNorm, r.Loss, r.ExplainedVariance, r.EliteFitness)
	}
	bad := write("bad.csv", "generation,agent,parent,fitness,total_steps,grad_norm,entropy,net\n1,0,-1,10,512,0.9,high,mlp[16]\n")
	if _, err := ReadMetrics(bad); err == nil || err.Error() != bad+`: line 2: column entropy: "high" is not a number` {
		t.Errorf("bad entropy: %v", err)
	}
}

// TestReadMetricsDropsAnUnfinishedEnd: what a crash or a live run leaves at
// the end of metrics.csv — a line without its newline, part of a
// generation's rows — is left out, and the generations before it read.
func TestReadMetricsDropsAnUnfinishedEnd(t *testing.T) {
	dir := t.TempDir()
	const header = "generation,agent,parent,fitness,total_steps,grad_norm,lr,net\n"
	row := func(gen, agent int, fitness string) string {
		return fmt.Sprintf("%d,%d,-1,%s,%d,0.9,0.001,mlp[16] ReLU latent 8 head[16] ReLU\n", gen, agent, fitness, 512*gen)
	}
	whole := header + row(1, 0, "10") + row(1, 1, "12") + row(2, 0, "14") + row(2, 1, "15")
	for _, tc := range []struct {
		name, text string
		rows       int
	}{
		{"whole", whole, 4},
		{"torn last line", whole + "3,0,-1,1", 4},
		{"torn inside the last field", whole + strings.TrimSuffix(row(3, 0, "16"), " head[16] ReLU\n"), 4},
		{"part of a generation", whole + row(3, 0, "16"), 4},
		{"part of a generation, then a torn line", whole + row(3, 0, "16") + "3,1,-1,1", 4},
		{"a generation whole", whole + row(3, 0, "16") + row(3, 1, "17"), 6},
		{"one generation", header + row(1, 0, "10") + row(1, 1, "12"), 2},
	} {
		path := runtest.WriteFile(t, dir, strings.ReplaceAll(tc.name, " ", "-")+".csv", tc.text)
		m, err := ReadMetrics(path)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if len(m.Rows) != tc.rows {
			t.Errorf("%s: %d rows, want %d", tc.name, len(m.Rows), tc.rows)
		}
	}
	run := filepath.Join(dir, "run")
	if err := os.Mkdir(run, 0o755); err != nil {
		t.Fatal(err)
	}
	runtest.WriteFile(t, run, "metrics.csv", whole)
	if m, err := ReadMetrics(run); err != nil || len(m.Rows) != 4 {
		t.Errorf("ReadMetrics of the run directory: %v; want its metrics.csv's 4 rows", err)
	}
	torn := runtest.WriteFile(t, dir, "only-torn.csv", header+"1,0,-1,1")
	if _, err := ReadMetrics(torn); err == nil || !strings.Contains(err.Error(), "has not finished a generation") {
		t.Errorf("a file of a header and a torn line: %v, want the run has not finished a generation", err)
	}
}

package evo

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evolverl/evolve/internal/runtest"
	"github.com/evolverl/evolve/netconf"
)

// memoryGeneConfig is a Probe7 population whose memory model is a gene: four agents,
// mutations that are mostly memory switches (new_layer = 1 draws layer mutations, of which
// memory.switch is one of three for an LSTM or GRU).
const memoryGeneConfig = `
seed = 3
out_dir = "unused"
[env]
id = "Probe7-v0"
num_envs = 2
eval_episodes = 4
[population]
size = 4
max_steps = 3072
evo_steps = 256
[ppo]
learn_step = 64
batch_size = 16
max_seq_len = 4
update_epochs = 1
[net]
encoder = "lstm"
memory = ["lstm", "gru"]
[net.lstm]
hidden = 16
[net.latent]
size = 8
[net.head]
hidden = [16]
[mutation]
no_mutation = 0
architecture = 1
parameters = 0
rl_hp = 0
new_layer = 1
`

// TestMemoryGene: with [net] memory = ["lstm", "gru"] the population starts with both
// models in turn, memory.switch mutations change agents from one to the other during the
// run (with the sizes kept), the results do not depend on the number of workers, and a
// stopped run resumes to the same results.
func TestMemoryGene(t *testing.T) {
	parse := func(t *testing.T) Config {
		cfg, err := ParseConfig([]byte(memoryGeneConfig))
		if err != nil {
			t.Fatal(err)
		}
		cfg.OutDir = filepath.Join(t.TempDir(), "run")
		return cfg
	}
	var dirs []string
	for _, w := range []int{1, 2} {
		cfg := parse(t)
		tr, err := New(cfg, Options{Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range tr.Members() {
			if got, want := m.Agent.Config().Net.Encoder, cfg.Net.Memories[i%2]; got != want {
				t.Fatalf("agent %d starts as %s, want %s", i, got, want)
			}
		}
		if _, err := tr.Run(context.Background()); err != nil {
			t.Fatalf("workers %d: %v", w, err)
		}
		dirs = append(dirs, cfg.OutDir)
	}
	runtest.SameRun(t, dirs[0], dirs[1])
	switches := 0
	nets := map[string]bool{}
	for _, row := range readMetrics(t, dirs[0])[1:] {
		if strings.Contains(strings.Join(row, ","), "memory.switch") {
			switches++
		}
		for _, f := range row {
			if strings.HasPrefix(f, "lstm 1x16") || strings.HasPrefix(f, "gru 1x16") {
				nets[strings.Fields(f)[0]] = true
			}
		}
	}
	if switches == 0 || !nets["lstm"] || !nets["gru"] {
		t.Fatalf("%d memory switches in metrics.csv, models seen %v; want switches and both models", switches, nets)
	}

	split := parse(t)
	_, err := run(t, split, Options{}, func(r GenerationReport) bool { return r.Generation == 2 })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped run: %v", err)
	}
	tr, err := Resume(split.OutDir, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	runtest.SameRun(t, dirs[0], split.OutDir)
}

// TestGeneFillsAPartTable: a gene that starts as a Transformer takes a [net.gru] or
// [net.lstm] table with some keys written and gives the others their defaults, so the
// switch to the recurrent model builds a valid network (it once kept the absent bounds at
// 0, and every switch was refused).
func TestGeneFillsAPartTable(t *testing.T) {
	for _, k := range []netconf.EncoderKind{netconf.EncoderGRU, netconf.EncoderLSTM} {
		text := "[env]\nid = \"CartPoleNoVel-v1\"\n[net]\nencoder = \"transformer\"\nmemory = [\"transformer\", \"" + string(k) +
			"\"]\n[net." + string(k) + "]\nhidden = 32\n"
		cfg, err := ParseConfig([]byte(text))
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		s, err := cfg.Net.WithMemory(k)
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		m, d := s.Memory(), netconf.DefaultLSTM()
		if m.Hidden != 32 || m.Layers != d.Layers || m.MinHidden != d.MinHidden || m.MaxHidden != d.MaxHidden ||
			m.MinLayers != d.MinLayers || m.MaxLayers != d.MaxLayers {
			t.Errorf("%s: sizes %+v, want hidden 32 and the rest %+v", k, *m, d)
		}
		if err := s.ValidateArchitecture(); err != nil {
			t.Errorf("%s: the switched network: %v", k, err)
		}
	}
}

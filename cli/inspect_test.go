package cli

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/netconf"
)

// fileParamCount sums the sizes of the actor.* and critic.* tensors in the
// safetensors header of an agent file, independently of package agent.
func fileParamCount(t *testing.T, path string) int {
	t.Helper()
	b := mustRead(t, path)
	n := binary.LittleEndian.Uint64(b[:8])
	var header map[string]json.RawMessage
	if err := json.Unmarshal(b[8:8+n], &header); err != nil {
		t.Fatal(err)
	}
	total := 0
	for name, raw := range header {
		if !strings.HasPrefix(name, "actor.") && !strings.HasPrefix(name, "critic.") {
			continue
		}
		var info struct{ Shape []int }
		if err := json.Unmarshal(raw, &info); err != nil {
			t.Fatal(err)
		}
		size := 1
		for _, d := range info.Shape {
			size *= d
		}
		total += size
	}
	return total
}

func TestInspectAgentFile(t *testing.T) {
	for _, tc := range []struct {
		name   string
		act    envs.Space
		output int // logits or means
		edit   func(*agent.Config)
	}{
		{"discrete shared norm", envs.Discrete{N: 3}, 3, func(c *agent.Config) { c.ShareEncoders, c.NormalizeObs = true, true }},
		{"gaussian", envs.NewBox(-1, 1, 2), 2, func(c *agent.Config) { c.LR, c.AnnealLR = 0.0025, true }},
		{"kl adaptive", envs.Discrete{N: 2}, 2, func(c *agent.Config) { c.LR, c.KLThreshold, c.MaxLR = 0.002, 0.01, 0.02 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := agent.DefaultConfig()
			cfg.Net.MLP.Hidden = []int{16}
			cfg.Net.Latent.Size = 8
			cfg.Net.Head.Hidden = []int{24}
			tc.edit(&cfg)
			a, err := agent.New(envs.NewBox(-1, 1, 5), tc.act, cfg, 7)
			if err != nil {
				t.Fatal(err)
			}
			a.Steps, a.Updates, a.TotalSteps = 4096, 32, 500000
			a.History = []string{"lr 0.0003 -> 0.0004", "add node to head"}
			path := filepath.Join(t.TempDir(), "agent.safetensors")
			if err := a.Save(path); err != nil {
				t.Fatal(err)
			}
			want := fileParamCount(t, path)

			code, out, errOut := evolve(context.Background(), "inspect", path)
			if code != exitOK {
				t.Fatalf("exit %d, stderr %s", code, errOut)
			}
			for _, s := range []string{path, "Box(", tc.act.String(), "mlp[16] ReLU latent 8 head[24] ReLU",
				"total " + commas(want), "4,096", "lr 0.0003 -> 0.0004", "add node to head"} {
				if !strings.Contains(out, s) {
					t.Errorf("text lacks %q:\n%s", s, out)
				}
			}
			// The annealing horizon is shown only when the lr anneals.
			if horizon := regexp.MustCompile(`(?m)^total steps +500,000 \(lr annealing horizon\)$`).MatchString(out); horizon != cfg.AnnealLR {
				t.Errorf("anneal_lr %v, annealing horizon shown %v:\n%s", cfg.AnnealLR, horizon, out)
			}
			if !regexp.MustCompile(`(?m)^  backend +go$`).MatchString(out) {
				t.Errorf("text lacks the backend:\n%s", out)
			}
			if strings.Index(out, "lr 0.0003") > strings.Index(out, "add node") {
				t.Errorf("lineage not oldest first:\n%s", out)
			}
			// The KL-adaptive rate's keys show where set, and the rate it
			// has reached (a fresh agent's: lr).
			kl := cfg.KLThreshold > 0
			for re, want := range map[string]bool{`(?m)^  kl_threshold +0.01$`: kl, `(?m)^  max_lr +0.02$`: kl,
				`(?m)^  adapted lr +0.002 `: kl, `(?m)^  (kl_factor|lr_factor|min_lr) `: false} {
				if regexp.MustCompile(re).MatchString(out) != want {
					t.Errorf("kl_threshold %v: %s matched %v:\n%s", cfg.KLThreshold, re, !want, out)
				}
			}

			// Flags may follow the file.
			code, out, errOut = evolve(context.Background(), "inspect", path, "-json")
			if code != exitOK {
				t.Fatalf("-json: exit %d, stderr %s", code, errOut)
			}
			var got struct {
				File             string
				ObservationSpace map[string]any `json:"observation_space"`
				ActionSpace      map[string]any `json:"action_space"`
				Network          struct {
					Encoder       string
					Latent        int
					Head          []int
					Output        int
					ActorParams   int  `json:"actor_params"`
					CriticParams  int  `json:"critic_params"`
					TotalParams   int  `json:"total_params"`
					ShareEncoders bool `json:"share_encoders"`
					Backend       string
					Actor         netconf.Spec
				}
				Config       agent.Config
				Steps        int
				Updates      int
				NormalizeObs bool     `json:"normalize_obs"`
				NormCount    *float64 `json:"norm_count"`
				AdaptedLR    *float64 `json:"adapted_lr"`
				History      []string
				Summary      json.RawMessage
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("%v:\n%s", err, out)
			}
			n := got.Network
			if got.File != path || got.ObservationSpace["type"] != "box" || n.Encoder != "mlp" || n.Latent != 8 ||
				!slices.Equal(n.Head, []int{24}) || n.Output != tc.output || n.Backend != "go" ||
				n.ShareEncoders != cfg.ShareEncoders || n.Actor.Input[0] != 5 {
				t.Errorf("JSON: %+v", got)
			}
			if n.TotalParams != want || n.ActorParams+n.CriticParams != want {
				t.Errorf("params: actor %d + critic %d, total %d; the file holds %d", n.ActorParams, n.CriticParams, n.TotalParams, want)
			}
			if got.Config.LR != cfg.LR || got.Steps != 4096 || got.Updates != 32 || !slices.Equal(got.History, a.History) || got.Summary != nil {
				t.Errorf("JSON: %+v", got)
			}
			if kl := cfg.KLThreshold > 0; kl != (got.AdaptedLR != nil) || kl && *got.AdaptedLR != a.LearningRate() {
				t.Errorf("kl_threshold %v: adapted_lr %v, want the agent's %v", cfg.KLThreshold, got.AdaptedLR, a.LearningRate())
			}
			if c, ok := a.NormCount(); got.NormalizeObs != ok || ok != (got.NormCount != nil) || ok && *got.NormCount != c {
				t.Errorf("normalize_obs %v, norm_count %v; the agent's %v, %v", got.NormalizeObs, got.NormCount, c, ok)
			}
			// Stable field names: every documented key is there.
			var keys map[string]json.RawMessage
			if err := json.Unmarshal([]byte(out), &keys); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"file", "observation_space", "action_space", "network", "config", "steps",
				"updates", "total_steps", "normalize_obs", "norm_count", "adapted_lr", "history"} {
				if _, ok := keys[k]; !ok {
					t.Errorf("JSON lacks %q", k)
				}
			}
		})
	}
}

func TestInspectRunDirectory(t *testing.T) {
	_, dir := trainTiny(t, 512)
	code, out, errOut := evolve(context.Background(), "inspect", dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, s := range []string{filepath.Join(dir, "elite.safetensors"), "Discrete(2)", "summary.json", "stop_reason", "generations"} {
		if !strings.Contains(out, s) {
			t.Errorf("text lacks %q:\n%s", s, out)
		}
	}
	// The elite as it was saved, in one line: the file's own network.
	a, err := agent.Load(filepath.Join(dir, "elite.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^  elite +agent \d+ saved after generation \d+: ` + regexp.QuoteMeta(a.Config().Net.String()) + `; .*lr `).MatchString(out) {
		t.Errorf("text lacks the elite's record:\n%s", out)
	}
	code, out, errOut = evolve(context.Background(), "inspect", "-json", dir)
	if code != exitOK {
		t.Fatalf("-json: exit %d: %s", code, errOut)
	}
	var got struct {
		Network struct {
			TotalParams int `json:"total_params"`
		}
		Summary map[string]any
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if want := fileParamCount(t, filepath.Join(dir, "elite.safetensors")); got.Network.TotalParams != want {
		t.Errorf("total_params %d, the file holds %d", got.Network.TotalParams, want)
	}
	if got.Summary["stop_reason"] != "budget" || got.Summary["finished"] != true {
		t.Errorf("summary %v", got.Summary)
	}
}

func TestInspectBadInputExitsTwo(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, err := agent.New(envs.NewBox(-1, 1, 3), envs.Discrete{N: 2}, agent.DefaultConfig(), 1)
	if err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.safetensors")
	if err := a.Save(good); err != nil {
		t.Fatal(err)
	}
	b := mustRead(t, good)
	damaged := slices.Clone(b)
	damaged[len(damaged)-5] ^= 0xff
	emptyRun := filepath.Join(dir, "run")
	if err := os.Mkdir(emptyRun, 0o755); err != nil {
		t.Fatal(err)
	}
	// A run that has not finished a generation, and one whose agents have
	// all diverged: both have a config and no elite.
	freshRun, divergedRun := filepath.Join(dir, "fresh"), filepath.Join(dir, "diverged")
	for run, metrics := range map[string]string{freshRun: "generation,agent\n", divergedRun: "generation,agent\n1,0\n"} {
		if err := os.Mkdir(run, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, text := range map[string]string{"config.toml": "seed = 1\n", "metrics.csv": metrics} {
			if err := os.WriteFile(filepath.Join(run, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	badSummary := filepath.Join(dir, "run2")
	if err := os.Mkdir(badSummary, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := a.Save(filepath.Join(badSummary, "elite.safetensors")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(badSummary, "summary.json"), []byte("{\"gen"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"missing", []string{filepath.Join(dir, "nope.safetensors")}, "nope.safetensors"},
		{"not an agent", []string{write("notes.txt", []byte("hello, world\n"))}, "notes.txt"},
		{"damaged", []string{write("damaged.safetensors", damaged)}, "damaged.safetensors"},
		{"truncated", []string{write("short.safetensors", b[:len(b)/2])}, "short.safetensors"},
		{"run without elite", []string{emptyRun}, filepath.Join(emptyRun, "elite.safetensors")},
		{"run without a generation", []string{freshRun}, "run " + freshRun + " has not finished a generation yet"},
		{"run without a finite fitness", []string{divergedRun}, "run " + divergedRun + " has no elite yet"},
		{"damaged summary", []string{badSummary}, filepath.Join(badSummary, "summary.json")},
		{"no file", nil, "give an agent file"},
		{"two files", []string{good, good}, "unexpected argument"},
		{"bad flag", []string{"-yaml", good}, "-yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := evolve(context.Background(), append([]string{"inspect"}, tc.args...)...)
			if code != exitBadInput || !strings.Contains(errOut, tc.want) || out != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and a message with %q", code, out, errOut, tc.want)
			}
		})
	}
}

// TestInspectShowsTheMemoryGene: an agent whose memory model is a gene lists the models
// it may switch between; one without a gene has no such line.
func TestInspectShowsTheMemoryGene(t *testing.T) {
	for _, memories := range [][]netconf.EncoderKind{{netconf.EncoderGRU, netconf.EncoderLSTM}, nil} {
		cfg := agent.DefaultConfig()
		gru := netconf.DefaultLSTM()
		gru.Hidden = 16
		cfg.Net.Encoder, cfg.Net.MLP, cfg.Net.GRU, cfg.Net.Memories = netconf.EncoderGRU, nil, &gru, memories
		a, err := agent.New(envs.NewBox(-1, 1, 3), envs.Discrete{N: 2}, cfg, 7)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "agent.safetensors")
		if err := a.Save(path); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := evolve(context.Background(), "inspect", path)
		if code != exitOK {
			t.Fatalf("exit %d, stderr %s", code, errOut)
		}
		if got, want := regexp.MustCompile(`(?m)^  memory gene +\[gru lstm\] `).MatchString(out), memories != nil; got != want {
			t.Errorf("memory %q: the gene's line shown %v:\n%s", memories, got, out)
		}
	}
}

// TestSummaryText: the text form rounds summary.json's seconds and rates
// and separates thousands in step counts (it printed 48895.824954780255);
// other values, and values that do not parse, are shown as written.
func TestSummaryText(t *testing.T) {
	for _, c := range []struct{ key, value, want string }{
		{"total_steps", "61440", "61,440"},
		{"global_steps", "1234567", "1,234,567"},
		{"wall_s", "1.256549001", "1.3"},
		{"steps_per_s", "48895.824954780255", "48,896"},
		{"elite_fitness", "497.6", "497.6"},
		{"total_steps", "\"x\"", "\"x\""},
		{"stop_reason", "budget", "budget"},
	} {
		if got := summaryText(c.key, c.value); got != c.want {
			t.Errorf("summaryText(%q, %q) = %q, want %q", c.key, c.value, got, c.want)
		}
	}
}

// TestEnvOptionsTextIsTOML: inspect shows a gym: env's options as a config
// file writes them, nested tables and arrays included.
func TestEnvOptionsTextIsTOML(t *testing.T) {
	got := envOptionsText(envs.Options{"kwargs": map[string]any{"log": "/tmp/x", "n": int64(3)},
		"wrappers": []any{"a.B", map[string]any{"name": "c.D", "kwargs": map[string]any{"gamma": 0.99}}}, "timeout": 30.0})
	want := ` {kwargs = { log = "/tmp/x", n = 3 }, timeout = 30, wrappers = ["a.B", { kwargs = { gamma = 0.99 }, name = "c.D" }]}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

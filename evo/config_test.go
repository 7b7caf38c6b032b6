package evo

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	_ "github.com/evolverl/evolve/nn/gorgonia" // the reference backend, for [net] backend
)

func TestLoadConfigRejectsBadInput(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string // substrings of the error
	}{
		{"unknown key", "[population]\nsizee = 4\n", []string{"unknown keys", "population.sizee"}},
		{"unknown backend", "[net]\nbackend = \"torch\"\n", []string{"net.backend = \"torch\"", "registered"}},
		{"empty backend", "[net]\nbackend = \"\"\n", []string{"net.backend"}},
		{"backend under ppo", "[ppo]\nbackend = \"go\"\n", []string{"unknown keys", "ppo.backend"}},
		{"unknown section", "[populaton]\nsize = 4\n", []string{"unknown keys", "populaton"}},
		{"syntax error", "[population\nsize = 4\n", []string{"line 2", "table name"}},
		{"type error", "[population]\nsize = \"four\"\n", []string{"population.size", "string"}},
		{"negative lr", "[ppo]\nlr = -0.001\n", []string{"ppo.lr = -0.001", "> 0"}},
		{"zero population", "[population]\nsize = 0\n", []string{"population.size = 0", ">= 1"}},
		{"tournament larger than population", "[tournament]\nsize = 9\n", []string{"tournament.size = 9", "population.size = 4"}},
		{"network under ppo", "[ppo.net]\nencoder = \"mlp\"\n", []string{"[ppo.net]", "[net]"}},
		{"table of another encoder", "[net]\nencoder = \"mlp\"\n[net.lstm]\nhidden = 32\n", []string{"[net.lstm]", `encoder = "mlp"`}},
		{"unknown encoder", "[net]\nencoder = \"transformer\"\n", []string{"net.encoder", "transformer"}},
		{"input set by hand", "[net]\ninput = [4]\n", []string{"net.input", "spaces"}},
		{"unknown env", "[env]\nid = \"Nope-v0\"\n", []string{"env.id", "Nope-v0", "CartPole-v1"}},
		{"bad env option", "[env.options]\ncolour = \"red\"\n", []string{"env", "colour"}},
		{"cnn on vectors", "[net]\nencoder = \"cnn\"\n", []string{"cnn", "[C, H, W]"}},
		{"unknown hyperparameter", "[hp.momentum]\nmin = 0.1\n", []string{"hp.momentum", "lr, batch_size"}},
		{"hp range upside down", "[hp.lr]\nmin = 0.01\nmax = 0.001\n", []string{"hp.lr", "min <= max"}},
		{"value outside its range", "[ppo]\nlr = 0.1\n[hp.lr]\nmax = 0.01\nmin = 0.001\n", []string{"ppo.lr = 0.1", "outside [hp.lr]"}},
		{"hp range reaches a bad value", "[hp.gamma]\nmin = 0.5\nmax = 1.5\n", []string{"hp.gamma.max = 1.5", "gamma"}},
		{"fractional integer range", "[hp.batch_size]\nmin = 16.5\nmax = 64\n", []string{"hp.batch_size", "integers"}},
		{"shrink above 1", "[hp.lr]\nshrink = 1.5\n", []string{"hp.lr.shrink = 1.5"}},
		{"negative mutation weight", "[mutation]\nrl_hp = -1.0\n", []string{"mutation.rl_hp = -1", ">= 0"}},
		{"all mutation weights zero", "[mutation]\nno_mutation = 0.0\narchitecture = 0.0\nparameters = 0.0\nrl_hp = 0.0\n", []string{"all 0"}},
		{"new_layer above 1", "[mutation]\nnew_layer = 2.0\n", []string{"mutation.new_layer = 2"}},
		{"learn_step below num_envs", "[env]\nnum_envs = 8\n[ppo]\nlearn_step = 4\n[hp.learn_step]\nmin = 4\nmax = 16\n", []string{"ppo.learn_step = 4", "num_envs"}},
		{"checkpoint every 0", "[checkpoint]\nevery = 0\n", []string{"checkpoint.every = 0"}},
		{"negative workers", "[population]\nworkers = -1\n", []string{"population.workers = -1"}},
		{"lstm below its bound", "[net]\nencoder = \"lstm\"\n[net.lstm]\nhidden = 8\n", []string{"net.lstm", "hidden 8"}},
		{"bad bptt", "[ppo]\nbptt = \"sometimes\"\n", []string{"ppo.bptt", "sometimes"}},
	}
	dir := t.TempDir()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeConfig(t, dir, strings.ReplaceAll(tc.name, " ", "_")+".toml", tc.text)
			_, err := LoadConfig(path)
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrBadInput) {
				t.Errorf("error does not match ErrBadInput: %v", err)
			}
			for _, w := range append(tc.want, path) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		path := filepath.Join(dir, "nope.toml")
		_, err := LoadConfig(path)
		if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), path) {
			t.Fatalf("err = %v, want ErrBadInput naming %s", err, path)
		}
	})
}

func TestEmptyConfigIsTheDefaults(t *testing.T) {
	cfg, err := ParseConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	d := DefaultConfig()
	if cfg.Population != d.Population || cfg.Env.ID != d.Env.ID || cfg.Mutation != d.Mutation {
		t.Fatalf("empty config differs from DefaultConfig: %+v", cfg)
	}
	for _, c := range []struct {
		name     string
		min, max float64
	}{{"lr", 3e-5, 3e-3}, {"batch_size", 16, 256}, {"learn_step", 512, 8192}} {
		r, ok := cfg.HP[c.name]
		if !ok || r.Min != c.min || r.Max != c.max || r.Grow != DefaultGrow || r.Shrink != DefaultShrink {
			t.Errorf("hp.%s = %+v (present %v), want [%v, %v] with the default factors", c.name, r, ok, c.min, c.max)
		}
	}
	if len(cfg.HP) != 3 {
		t.Errorf("%d mutable hyperparameters by default, want 3", len(cfg.HP))
	}
}

func TestResolvedConfigReadsBackEqual(t *testing.T) {
	for _, text := range []string{tinyConfig, "", "[net]\nencoder = \"lstm\"\n[hp.ent_coef]\nmax = 0.05\n[env.options]\nmax_episode_steps = 100\n"} {
		cfg, err := ParseConfig([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		b, err := cfg.MarshalTOML()
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseConfig(b)
		if err != nil {
			t.Fatalf("resolved config does not load: %v\n%s", err, b)
		}
		if !reflect.DeepEqual(cfg, back) {
			t.Fatalf("resolved config reads back different:\n%+v\n%+v\n%s", cfg, back, b)
		}
		d1, _ := cfg.Digest()
		cfg.OutDir, cfg.Population.Workers = "elsewhere", 7
		if d2, _ := cfg.Digest(); d1 != d2 {
			t.Error("out_dir or workers change the digest")
		}
		cfg.Seed++
		if d3, _ := cfg.Digest(); d1 == d3 {
			t.Error("the seed does not change the digest")
		}
	}
}

func TestShippedConfigsValidate(t *testing.T) {
	paths, err := filepath.Glob("../configs/*.toml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no configs found: %v", err)
	}
	for _, p := range paths {
		if _, err := LoadConfig(p); err != nil {
			t.Errorf("%v", err)
		}
	}
	// pop.toml is the reference: it must hold every default.
	ref, err := LoadConfig("../configs/pop.toml")
	if err != nil {
		t.Fatal(err)
	}
	def, err := ParseConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	def.Env.Options = ref.Env.Options
	if !reflect.DeepEqual(ref, def) {
		t.Errorf("configs/pop.toml differs from the defaults:\n%+v\n%+v", ref, def)
	}
	if b, err := os.ReadFile("../configs/pop.toml"); err == nil {
		for _, key := range []string{"no_mutation", "mutate_elite", "eval_episodes", "min_generations", "keep", "max_seq_len"} {
			if !strings.Contains(string(b), key) {
				t.Errorf("configs/pop.toml does not document %s", key)
			}
		}
	}
}

// TestBackendIsChosenInNet: [net] backend selects the network backend of
// every agent, and the resolved config file keeps it.
func TestBackendIsChosenInNet(t *testing.T) {
	cfg, err := ParseConfig([]byte("[net]\nbackend = \"gorgonia\"\nencoder = \"mlp\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.PPO.Backend != "gorgonia" {
		t.Fatalf("backend %q, want gorgonia", cfg.PPO.Backend)
	}
	text, err := cfg.MarshalTOML()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseConfig(text)
	if err != nil {
		t.Fatal(err)
	}
	if back.PPO.Backend != "gorgonia" || !reflect.DeepEqual(back, cfg) {
		t.Fatalf("resolved config reads back with backend %q", back.PPO.Backend)
	}
	for _, text := range []string{"", "[net]\nbackend = \"go\"\n"} {
		def, err := ParseConfig([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		if def.PPO.Backend != "" {
			t.Fatalf("%q: backend %q, want empty (the plain-Go default)", text, def.PPO.Backend)
		}
	}
}

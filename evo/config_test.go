package evo

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/envs"
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
		{"misspelt key", "[population]\nmax_step = 4\n", []string{"unknown keys: population.max_step (line 2, did you mean max_steps?)"}},
		{"misspelt dotted key", "seed = 1\npopulation.max_step = 4\n", []string{"population.max_step (line 2, did you mean max_steps?)"}},
		{"misspelt section name", "[populaton]\nsize = 4\n", []string{"populaton (line 1, did you mean population?), populaton.size (line 2)"}},
		{"misspelt top-level key", "sed = 4\n", []string{"sed (line 1, did you mean seed?)"}},
		{"misspelt hp key", "[hp.lr]\nmin = 0.0001\n\n# max below\nmn = 0.0001\n", []string{"hp.lr.mn (line 5, did you mean min?)"}},
		{"misspelt net key", "[net.mlp]\nhiden = [16]\n", []string{"net.mlp.hiden (line 2, did you mean hidden?)"}},
		{"misspelt backend", "[net]\nbackedn = \"go\"\n", []string{"net.backedn (line 2, did you mean backend?)"}},
		{"syntax error", "[population\nsize = 4\n", []string{"line 2", "table name"}},
		{"type error", "[population]\nsize = \"four\"\n", []string{"population.size", "string"}},
		{"unknown env option", "[env]\nid = \"CartPole-v1\"\n\n[env.options]\nmax_episode_steps = 100\ng = 1.0\n", []string{"env.options.g: ", "unknown option(s) g", "(line 6)"}},
		{"env option of the wrong type", "[env]\n[env.options]\n\n\nmax_episode_steps = 100.5\n", []string{`option "max_episode_steps" = 100.5`, "(line 5)"}},
		{"options not a table", "[env]\noptions = 5\n", []string{"env.options: a value of type integer, where a table belongs"}},
		{"hp not a table", "hp = []\n", []string{"hp: a value of type array, where a table belongs"}},
		{"rnd range without rnd", "[hp.rnd_coef]\nmin = 0.1\n", []string{"ppo.rnd_coef = 0 with an [hp.rnd_coef] range"}},
		{"kl range without the kl rate", "[hp.kl_threshold]\nmin = 0\nmax = 0.1\n", []string{"ppo.kl_threshold = 0 with an [hp.kl_threshold] range"}},
		{"negative lr", "[ppo]\nlr = -0.001\n", []string{"ppo.lr = -0.001", "> 0"}},
		{"zero population", "[population]\nsize = 0\n", []string{"population.size = 0", ">= 1"}},
		{"tournament larger than population", "[tournament]\nsize = 9\n", []string{"tournament.size = 9", "population.size = 4"}},
		{"network under ppo", "[ppo.net]\nencoder = \"mlp\"\n", []string{"[ppo.net]", "[net]"}},
		{"table of another encoder", "[net]\nencoder = \"mlp\"\n[net.lstm]\nhidden = 32\n", []string{"[net.lstm]", `encoder = "mlp"`}},
		{"unknown encoder", "[net]\nencoder = \"gpt\"\n", []string{"net.encoder", "gpt"}},
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
		{"gru above its bound", "[net]\nencoder = \"gru\"\n[net.gru]\nhidden = 1024\n", []string{"net.gru", "hidden 1024"}},
		{"an lstm table for a gru", "[net]\nencoder = \"gru\"\n[net.lstm]\nhidden = 32\n", []string{"[net.lstm]", `encoder = "gru"`}},
		{"unknown encoder (2)", "[net]\nencoder = \"gpt\"\n", []string{`net.encoder = "gpt"`, `"gru"`}},
		{"transformer heads", "[env]\nid = \"CartPoleNoVel-v1\"\n[net]\nencoder = \"transformer\"\n[net.transformer]\nheads = 3\n", []string{"net.transformer: heads 3: want a divisor of width 64"}},
		{"transformer context 0", "[env]\nid = \"CartPoleNoVel-v1\"\n[net]\nencoder = \"transformer\"\n[net.transformer]\ncontext = 0\n", []string{"net.transformer: context 0"}},
		{"transformer context past the rollout", "[env]\nid = \"CartPoleNoVel-v1\"\nnum_envs = 8\n[ppo]\nlearn_step = 64\nbatch_size = 64\nmax_seq_len = 8\n[net]\nencoder = \"transformer\"\n[net.transformer]\ncontext = 16\n", []string{"net.transformer.context = 16: want <= learn_step/num_envs = 8"}},
		{"lstm and gru tables", "[env]\nid = \"CartPoleNoVel-v1\"\n[net]\nencoder = \"gru\"\nmemory = [\"gru\", \"lstm\"]\n[net.gru]\nhidden = 32\n[net.lstm]\nhidden = 16\n", []string{"[net.lstm] and [net.gru] both given"}},
		{"unknown memory model", "[env]\nid = \"CartPoleNoVel-v1\"\n[net]\nencoder = \"lstm\"\nmemory = [\"lstm\", \"gpt\"]\n", []string{`net.memory: "gpt" is not a memory model`}},
		{"unknown hp table", "seed = 1\n[hp.lrr]\nmin = 0.0001\n", []string{"[hp.lrr]: not a mutable hyperparameter", "(line 2)"}},
		{"net table of a misspelt encoder", "[net]\nencoder = \"mpl\"\n[net.mlp]\nhidden = [8]\n", []string{`[net.mlp] given, but net.encoder = "mpl"`, "(line 3)"}},
		{"misspelt selection beside [pbt]", "[population]\nselection = \"pbtx\"\n[pbt]\nquantile = 0.25\n", []string{`population.selection = "pbtx": want "tournament" (the default) or "pbt"`}},
		{"empty memory list", "[env]\nid = \"CartPoleNoVel-v1\"\n[net]\nencoder = \"lstm\"\nmemory = []\n", []string{"net.memory = []: want two or three memory models"}},
		{"memory list of one", "[env]\nid = \"CartPoleNoVel-v1\"\n[net]\nencoder = \"lstm\"\nmemory = [\"lstm\"]\n", []string{`net.memory = ["lstm"]: want two or three`}},
		{"gene's transformer context past the rollout", "[env]\nid = \"CartPoleNoVel-v1\"\nnum_envs = 8\n[ppo]\nlearn_step = 64\nbatch_size = 64\nmax_seq_len = 8\n[net]\nencoder = \"lstm\"\nmemory = [\"lstm\", \"transformer\"]\n[net.transformer]\ncontext = 16\n", []string{"net.transformer.context = 16: want <= learn_step/num_envs = 8"}},
		{"gene's transformer context 0", "[env]\nid = \"CartPoleNoVel-v1\"\n[net]\nencoder = \"gru\"\nmemory = [\"gru\", \"transformer\"]\n[net.transformer]\ncontext = 0\n", []string{"net.transformer: context 0"}},
		{"gene's gru table below its bound", "[env]\nid = \"CartPoleNoVel-v1\"\n[net]\nencoder = \"transformer\"\nmemory = [\"transformer\", \"gru\"]\n[net.gru]\nhidden = 0\n", []string{"net.gru: hidden 0"}},
		{"misspelt memory beside a transformer table", "[env]\nid = \"CartPoleNoVel-v1\"\n[net]\nencoder = \"lstm\"\nmemory = [\"lstm\", \"gru\", \"transfomer\"]\n[net.transformer]\ncontext = 8\n", []string{`net.memory: "transfomer" is not a memory model`}},
		{"memory repeated beside a transformer table", "[env]\nid = \"CartPoleNoVel-v1\"\n[net]\nencoder = \"lstm\"\nmemory = [\"lstm\", \"gru\", \"lstm\"]\n[net.transformer]\ncontext = 8\n", []string{`"lstm" is listed twice`}},
		{"transformer table the memory does not list", "[env]\nid = \"CartPoleNoVel-v1\"\n[net]\nencoder = \"lstm\"\nmemory = [\"lstm\", \"gru\"]\n[net.transformer]\ncontext = 8\n", []string{`[net.transformer] given, but net.encoder = "lstm" and net.memory does not list "transformer"`}},
		{"negative burn-in", "[population]\nselection = \"pbt\"\n[pbt]\nburn_in = -1\n", []string{"pbt.burn_in = -1: want env steps >= 0"}},
		{"memory without a recurrent encoder", "[env]\nid = \"CartPoleNoVel-v1\"\n[net]\nmemory = [\"lstm\", \"gru\"]\n", []string{"net.memory", `with encoder "mlp": a memory gene needs the encoder to be one of its models`}},
		{"bad bptt", "[ppo]\nbptt = \"sometimes\"\n", []string{"ppo.bptt", "sometimes"}},
		{"table in upper case", "[NET]\nencoder = \"lstm\"\n", []string{"keys not in lower case", "NET.encoder"}},
		{"key in upper case", "[hp.lr]\nMin = 0.0001\n", []string{"keys not in lower case", "hp.lr.Min"}},
		{"table of another encoder in upper case", "[net.Cnn]\n", []string{"keys not in lower case", "net.Cnn"}}, // found by FuzzParseConfig
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

// TestConfigErrorsSayNoMore checks what config errors leave out: a
// suggestion for a key far from every known one, and the env's options in
// Go's map syntax (they are in the file the user wrote).
func TestConfigErrorsSayNoMore(t *testing.T) {
	for _, tc := range []struct{ text, want, not string }{
		{"[population]\nbanana = 4\n", "unknown keys: population.banana (line 2)", "did you mean"},
		{"[env.options]\ncolour = \"red\"\n", "env CartPole-v1: ", "map["},
	} {
		_, err := ParseConfig([]byte(tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), tc.not) {
			t.Errorf("%q: err = %v; want %q and not %q", tc.text, err, tc.want, tc.not)
		}
	}
}

// TestConfigErrorsComeInOneOrder checks that a config with several bad
// [hp.*] tables lists them in name order on every parse (they were listed
// in map order, which changed from run to run).
func TestConfigErrorsComeInOneOrder(t *testing.T) {
	text := []byte("[hp.zeta]\n[hp.alpha]\n[hp.mu]\n[hp.beta]\n")
	var first string
	for i := range 20 {
		_, err := ParseConfig(text)
		if err == nil {
			t.Fatal("four unknown [hp.*] tables accepted")
		}
		msg := err.Error()
		a, b, m, z := strings.Index(msg, "hp.alpha"), strings.Index(msg, "hp.beta"), strings.Index(msg, "hp.mu"), strings.Index(msg, "hp.zeta")
		if a < 0 || !(a < b && b < m && m < z) {
			t.Fatalf("errors not in name order:\n%s", msg)
		}
		if i == 0 {
			first = msg
		} else if msg != first {
			t.Fatalf("parse %d differs:\n%s\nfirst:\n%s", i, msg, first)
		}
	}
}

// TestSmallConfigsTheDefaultsFit: the defaults derived from other keys fit
// the config they complete: a population of one gets a tournament of one,
// and learn_step's default range starts at num_envs, so that neither is an
// error about a key the file never wrote.
func TestSmallConfigsTheDefaultsFit(t *testing.T) {
	for _, text := range []string{
		"[population]\nsize = 1\n",
		"[env]\nnum_envs = 1024\n",
		"[env]\nnum_envs = 16\n[ppo]\nlearn_step = 32\nbatch_size = 32\n",
	} {
		if _, err := ParseConfig([]byte(text)); err != nil {
			t.Errorf("%q: %v", text, err)
		}
	}
	cfg, err := ParseConfig([]byte("[env]\nnum_envs = 1024\n"))
	if err != nil {
		t.Fatal(err)
	}
	if r := cfg.HP["learn_step"]; r.Min != 1024 {
		t.Errorf("hp.learn_step.min = %v, want num_envs 1024", r.Min)
	}
}

// TestUnknownKeysDoNotHideBadValues: a file with a misspelt key and bad
// values gets every problem in one error, as the standard asks (the values
// were checked only once the keys were right).
func TestUnknownKeysDoNotHideBadValues(t *testing.T) {
	_, err := ParseConfig([]byte("[population]\nsize = 0\nbananas = 3\n[ppo]\nlr = -1\n"))
	for _, want := range []string{"unknown keys: population.bananas (line 3)", "population.size = 0", "ppo.lr = -1"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v; want it to say %q", err, want)
		}
	}
	if !errors.Is(err, ErrBadInput) {
		t.Errorf("err = %v; want ErrBadInput", err)
	}
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
	pbt := strings.Replace(tinyConfig, "[population]\n", "[population]\nselection = \"pbt\"\nfitness = \"train\"\ninit = \"sample\"\n", 1) +
		"[hp.gamma]\nmin = 0.9\nmax = 0.999\nscale = \"log1m\"\n[pbt]\nttest = false\n"
	for _, text := range []string{tinyConfig, "", "[net]\nencoder = \"lstm\"\n[hp.ent_coef]\nmax = 0.05\n[env.options]\nmax_episode_steps = 100\n", "[net]\nencoder = \"gru\"\nmemory = [\"gru\", \"lstm\"]\n[net.gru]\nhidden = 32\n",
		"[net]\nencoder = \"transformer\"\nmemory = [\"transformer\", \"lstm\", \"gru\"]\n[net.transformer]\nwidth = 32\n", pbt} {
		cfg, err := ParseConfig([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		b, err := cfg.TOML()
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
	peers, err := filepath.Glob("../configs/peers/*.toml")
	if err != nil || len(peers) == 0 {
		t.Fatalf("no peer twin configs found: %v", err)
	}
	paths = append(paths, peers...)
	// The benchmarks' configs too: their commands are in the docs.
	for _, pattern := range []string{"../docs/bench/*/*.toml", "../docs/bench/*/*/*.toml"} {
		more, _ := filepath.Glob(pattern)
		paths = append(paths, more...)
	}
	for _, p := range paths {
		if strings.HasSuffix(p, "rnd/deepsea-ppod.toml") {
			continue // a template: run.sh writes the demos it names for each size and seed
		}
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
	b, err := os.ReadFile("../configs/pop.toml")
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range configKeys(reflect.TypeOf(Config{}), "") {
		if !documentsKey(string(b), key) {
			t.Errorf("configs/pop.toml does not document %s", key)
		}
	}
}

// configKeys lists the TOML keys of the struct type rt under table path,
// tables and their keys, but for those no config may give: [ppo.net] (the
// network is [net]) and the network's sizes the env sets.
func configKeys(rt reflect.Type, path string) []string {
	var keys []string
	for i := range rt.NumField() {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("toml"), ",")
		key := strings.TrimPrefix(path+"."+name, ".")
		if name == "" || name == "-" || slices.Contains([]string{"ppo.net", "net.input", "net.output", "net.output_gain", "net.inputs"}, key) {
			continue
		}
		keys = append(keys, key)
		ft := rt.Field(i).Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct {
			keys = append(keys, configKeys(ft, key)...)
		}
	}
	return keys
}

// documentsKey reports whether the text of pop.toml documents key: as a
// table header or a setting, commented out or not, or for the encoders'
// tables it does not spell out ([net.cnn], ...) named in the comment that
// lists their keys ("min/max_channels" for min_channels and max_channels).
func documentsKey(text, key string) bool {
	table, name := "", key
	if i := strings.LastIndex(key, "."); i >= 0 {
		table, name = key[:i], key[i+1:]
	}
	q := regexp.QuoteMeta
	if regexp.MustCompile(`(?m)^[# ]*` + q(name) + `\s*=|\[` + q(key) + `\]`).MatchString(text) {
		return true
	}
	if !slices.Contains([]string{"net.cnn", "net.lstm", "net.gru", "net.transformer"}, table) {
		return false
	}
	short := name
	if rest, ok := strings.CutPrefix(name, "min_"); ok {
		short = "min/max_" + rest
	} else if rest, ok := strings.CutPrefix(name, "max_"); ok {
		short = "min/max_" + rest
	}
	return regexp.MustCompile(`\[` + q(table) + `\][^\n]*(\n *#[^\n]*)*\b` + q(short) + `\b`).MatchString(text)
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
	text, err := cfg.TOML()
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

// TestExplicitZeroIsHonoured: a key written with its type's zero value (0,
// "", [], false) keeps it — only absent keys get defaults — or is refused
// with its name when zero is not allowed.
func TestExplicitZeroIsHonoured(t *testing.T) {
	catch := "[env]\nid = \"Catch-v0\"\n[net]\nencoder = \"cnn\"\n[net.cnn]\nchannels = [8]\nkernels = [3]\nstrides = [1]\n"
	lstm := "[env]\nid = \"CartPoleNoVel-v1\"\n[net]\nencoder = \"lstm\"\n[net.lstm]\n"
	tests := []struct {
		name, text string
		get        func(Config) any // the value that must survive; nil: refused
		want       any
		errWant    []string
	}{
		{"seed", "seed = 0\n", func(c Config) any { return c.Seed }, int64(0), nil},
		{"out_dir", "out_dir = \"\"\n", nil, nil, []string{"out_dir", "a directory"}},
		{"env.id", "[env]\nid = \"\"\n", nil, nil, []string{"env.id = \"\"", "registered"}},
		{"env.num_envs", "[env]\nnum_envs = 0\n", nil, nil, []string{"env.num_envs = 0", ">= 1"}},
		{"env.eval_episodes", "[env]\neval_episodes = 0\n", nil, nil, []string{"env.eval_episodes = 0", ">= 1"}},
		{"population.size", "[population]\nsize = 0\n", nil, nil, []string{"population.size = 0", ">= 1"}},
		{"population.max_steps", "[population]\nmax_steps = 0\n", nil, nil, []string{"population.max_steps = 0"}},
		{"population.evo_steps", "[population]\nevo_steps = 0\n", nil, nil, []string{"population.evo_steps = 0"}},
		{"population.target", "[population]\ntarget = 0.0\n", func(c Config) any { return c.Population.Target }, 0.0, nil},
		{"population.min_generations", "[population]\nmin_generations = 0\n", func(c Config) any { return c.Population.MinGenerations }, 0, nil},
		{"population.workers", "[population]\nworkers = 0\n", func(c Config) any { return c.Population.Workers }, 0, nil},
		{"ppo.lr", "[ppo]\nlr = 0.0\n", nil, nil, []string{"ppo.lr = 0", "> 0"}},
		{"ppo.batch_size", "[ppo]\nbatch_size = 0\n", nil, nil, []string{"ppo.batch_size = 0", ">= 1"}},
		{"ppo.learn_step", "[ppo]\nlearn_step = 0\n", nil, nil, []string{"ppo.learn_step = 0", ">= 1"}},
		{"ppo.gamma", "[ppo]\ngamma = 0.0\n", func(c Config) any { return c.PPO.Gamma }, 0.0, nil},
		{"ppo.gae_lambda", "[ppo]\ngae_lambda = 0.0\n", func(c Config) any { return c.PPO.GAELambda }, 0.0, nil},
		{"ppo.clip_coef", "[ppo]\nclip_coef = 0.0\n", nil, nil, []string{"ppo.clip_coef = 0", "> 0"}},
		{"ppo.ent_coef", "[ppo]\nent_coef = 0.0\n", func(c Config) any { return c.PPO.EntCoef }, 0.0, nil},
		{"ppo.vf_coef", "[ppo]\nvf_coef = 0.0\n", func(c Config) any { return c.PPO.VFCoef }, 0.0, nil},
		{"ppo.max_grad_norm", "[ppo]\nmax_grad_norm = 0.0\n", nil, nil, []string{"ppo.max_grad_norm = 0", "> 0"}},
		{"ppo.update_epochs", "[ppo]\nupdate_epochs = 0\n", nil, nil, []string{"ppo.update_epochs = 0", "1 to 1000"}},
		{"ppo.target_kl", "[ppo]\ntarget_kl = 0.0\n", func(c Config) any { return c.PPO.TargetKL }, 0.0, nil},
		{"ppo.action_std_init", "[env]\nid = \"Pendulum-v1\"\n[ppo]\naction_std_init = 0.0\n", func(c Config) any { return c.PPO.ActionStdInit }, 0.0, nil},
		{"ppo.bptt", "[ppo]\nbptt = \"\"\n", nil, nil, []string{"ppo.bptt = \"\""}},
		{"ppo.max_seq_len", "[ppo]\nmax_seq_len = 0\n", nil, nil, []string{"ppo.max_seq_len = 0", ">= 1"}},
		{"ppo.normalize_obs", "[ppo]\nnormalize_obs = false\n", func(c Config) any { return c.PPO.NormalizeObs }, false, nil},
		{"net.encoder", "[net]\nencoder = \"\"\n", nil, nil, []string{"net.encoder = \"\""}},
		{"net.backend", "[net]\nbackend = \"\"\n", nil, nil, []string{"net.backend = \"\""}},
		{"net.mlp.hidden", "[net.mlp]\nhidden = []\nmin_layers = 0\n", func(c Config) any { return c.Net.MLP.Hidden }, []int{}, nil},
		{"net.mlp.hidden without min_layers", "[net.mlp]\nhidden = []\n", nil, nil, []string{"net.mlp: hidden [] has no layers", "min_layers = 0"}},
		{"net.mlp.min_layers", "[net.mlp]\nmin_layers = 0\n", func(c Config) any { return [2]any{c.Net.MLP.MinLayers, c.Net.MLP.Hidden} }, [2]any{0, []int{64, 64}}, nil},
		{"net.mlp.max_layers", "[net.mlp]\nmax_layers = 0\n", nil, nil, []string{"net.mlp: min_layers 1, max_layers 0"}},
		{"net.mlp.min_nodes", "[net.mlp]\nmin_nodes = 0\n", nil, nil, []string{"net.mlp: min_nodes 0"}},
		{"net.mlp.max_nodes", "[net.mlp]\nmax_nodes = 0\n", nil, nil, []string{"net.mlp: min_nodes 16, max_nodes 0"}},
		{"net.mlp.activation", "[net.mlp]\nactivation = \"\"\n", nil, nil, []string{"net.mlp: activation \"\""}},
		{"net.mlp.layer_norm", "[net.mlp]\nlayer_norm = false\n", func(c Config) any { return c.Net.MLP.LayerNorm }, false, nil},
		{"net.head.hidden", "[net.head]\nhidden = []\nmin_layers = 0\n", func(c Config) any { return [2]any{c.Net.Head.Hidden, c.Net.Head.MinLayers} }, [2]any{[]int{}, 0}, nil},
		{"net.head.hidden without min_layers", "[net.head]\nhidden = []\n", nil, nil, []string{"net.head: hidden [] has no layers"}},
		{"net.head.min_layers", "[net.head]\nmin_layers = 0\n", func(c Config) any { return c.Net.Head.MinLayers }, 0, nil},
		{"net.head.max_layers", "[net.head]\nmax_layers = 0\n", nil, nil, []string{"net.head: min_layers 1, max_layers 0"}},
		{"net.head.min_nodes", "[net.head]\nmin_nodes = 0\n", nil, nil, []string{"net.head: min_nodes 0"}},
		{"net.head.max_nodes", "[net.head]\nmax_nodes = 0\n", nil, nil, []string{"net.head: min_nodes 16, max_nodes 0"}},
		{"net.head.activation", "[net.head]\nactivation = \"\"\n", nil, nil, []string{"net.head: activation \"\""}},
		{"net.head.layer_norm", "[net.head]\nlayer_norm = false\n", func(c Config) any { return c.Net.Head.LayerNorm }, false, nil},
		{"net.latent.size", "[net.latent]\nsize = 0\n", nil, nil, []string{"net.latent: size 0"}},
		{"net.latent.min", "[net.latent]\nmin = 0\n", nil, nil, []string{"net.latent: min 0"}},
		{"net.latent.max", "[net.latent]\nmax = 0\n", nil, nil, []string{"net.latent: min 8, max 0"}},
		{"net.cnn.channels", strings.Replace(catch, "channels = [8]", "channels = []\nmin_layers = 0", 1), nil, nil, []string{"net.cnn: min_layers 0"}},
		{"net.cnn.kernels", strings.Replace(catch, "kernels = [3]", "kernels = []", 1), nil, nil, []string{"net.cnn: channels [8], kernels [], strides [1]"}},
		{"net.cnn.strides", strings.Replace(catch, "strides = [1]", "strides = []", 1), nil, nil, []string{"net.cnn: channels [8], kernels [3], strides []"}},
		{"net.cnn.activation", catch + "activation = \"\"\n", nil, nil, []string{"net.cnn: activation \"\""}},
		{"net.cnn.min_layers", catch + "min_layers = 0\n", nil, nil, []string{"net.cnn: min_layers 0"}},
		{"net.cnn.max_layers", catch + "max_layers = 0\n", nil, nil, []string{"net.cnn: min_layers 1, max_layers 0"}},
		{"net.cnn.min_channels", catch + "min_channels = 0\n", nil, nil, []string{"net.cnn: min_channels 0"}},
		{"net.cnn.max_channels", catch + "max_channels = 0\n", nil, nil, []string{"net.cnn: min_channels 8, max_channels 0"}},
		{"net.lstm.hidden", lstm + "hidden = 0\n", nil, nil, []string{"net.lstm: hidden 0"}},
		{"net.lstm.layers", lstm + "layers = 0\n", nil, nil, []string{"net.lstm: layers 0"}},
		{"net.lstm.min_hidden", lstm + "min_hidden = 0\n", nil, nil, []string{"net.lstm: min_hidden 0"}},
		{"net.lstm.max_hidden", lstm + "max_hidden = 0\n", nil, nil, []string{"net.lstm: min_hidden 16, max_hidden 0"}},
		{"net.lstm.min_layers", lstm + "min_layers = 0\n", nil, nil, []string{"net.lstm: min_layers 0"}},
		{"net.lstm.max_layers", lstm + "max_layers = 0\n", nil, nil, []string{"net.lstm: min_layers 1, max_layers 0"}},
		{"mutation.no_mutation", "[mutation]\nno_mutation = 0.0\n", func(c Config) any { return c.Mutation.NoMutation }, 0.0, nil},
		{"mutation.architecture", "[mutation]\narchitecture = 0.0\n", func(c Config) any { return c.Mutation.Architecture }, 0.0, nil},
		{"mutation.new_layer", "[mutation]\nnew_layer = 0.0\n", func(c Config) any { return c.Mutation.NewLayer }, 0.0, nil},
		{"mutation.parameters", "[mutation]\nparameters = 0.0\n", func(c Config) any { return c.Mutation.Parameters }, 0.0, nil},
		{"mutation.rl_hp", "[mutation]\nrl_hp = 0.0\n", func(c Config) any { return c.Mutation.RLHP }, 0.0, nil},
		{"mutation.mutation_sd", "[mutation]\nmutation_sd = 0.0\n", func(c Config) any { return c.Mutation.MutationSD }, 0.0, nil},
		{"mutation.mutate_elite", "[mutation]\nmutate_elite = false\n", func(c Config) any { return c.Mutation.MutateElite }, false, nil},
		{"tournament.size", "[tournament]\nsize = 0\n", nil, nil, []string{"tournament.size = 0"}},
		{"tournament.elitism", "[tournament]\nelitism = false\n", func(c Config) any { return c.Tournament.Elitism }, false, nil},
		{"hp.ent_coef.min", "[hp.ent_coef]\nmin = 0.0\n", func(c Config) any { return c.HP["ent_coef"].Min }, 0.0, nil},
		{"hp.lr.min", "[hp.lr]\nmin = 0.0\n", nil, nil, []string{"hp.lr.min = 0", "lr = 0"}},
		{"hp.lr.grow", "[hp.lr]\ngrow = 0.0\n", nil, nil, []string{"hp.lr.grow = 0", ">= 1"}},
		{"hp.lr.shrink", "[hp.lr]\nshrink = 0.0\n", nil, nil, []string{"hp.lr.shrink = 0", "(0, 1]"}},
		{"checkpoint.every", "[checkpoint]\nevery = 0\n", nil, nil, []string{"checkpoint.every = 0", ">= 1"}},
		{"checkpoint.keep", "[checkpoint]\nkeep = 0\n", func(c Config) any { return c.Checkpoint.Keep }, 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseConfig([]byte(tc.text))
			if tc.get == nil {
				if err == nil {
					t.Fatal("no error")
				}
				for _, w := range tc.errWant {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not mention %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := tc.get(cfg); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("%s = %#v after parsing, want the %#v written", tc.name, got, tc.want)
			}
			// The resolved file keeps it too.
			b, err := cfg.TOML()
			if err != nil {
				t.Fatal(err)
			}
			back, err := ParseConfig(b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, cfg) {
				t.Fatalf("resolved config reads back different:\n%s", b)
			}
		})
	}
}

// TestNetworkWithoutHiddenLayersTrains: a head (and an MLP encoder) without
// hidden layers, written as hidden = [] with min_layers = 0, is built and
// trained as written.
func TestNetworkWithoutHiddenLayersTrains(t *testing.T) {
	text := strings.Replace(tinyConfig, "[net.head]\nhidden = [16]", "[net.head]\nhidden = []\nmin_layers = 0", 1)
	text = strings.Replace(text, "[net.mlp]\nhidden = [16]", "[net.mlp]\nhidden = []\nmin_layers = 0", 1)
	cfg, err := ParseConfig([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Net.Head.Hidden) != 0 || len(cfg.Net.MLP.Hidden) != 0 {
		t.Fatalf("net %s, want no hidden layers", cfg.Net)
	}
	env, err := envs.MakeVector(cfg.Env.ID, cfg.Env.NumEnvs, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(env.ObservationSpace(), env.ActionSpace(), cfg.PPO, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Train(t.Context(), env, 256); err != nil {
		t.Fatal(err)
	}
}

// TestCommentsOnlyConfigIsTheDefaults: a file of comments and blank lines
// is an empty config: all defaults, as an empty file.
func TestCommentsOnlyConfigIsTheDefaults(t *testing.T) {
	empty, err := ParseConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	comments, err := ParseConfig([]byte("# nothing to change\n\n   # still nothing\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(empty, comments) {
		t.Fatalf("a comments-only config differs from the empty one:\n%+v\n%+v", comments, empty)
	}
}

// TestValueErrorsNameTheirLines: a value out of range is found in the file
// by its line, as an unknown key is (the messages named the key alone).
func TestValueErrorsNameTheirLines(t *testing.T) {
	data := "seed = 1\n[population]\nsize = 0\nselection = \"pbt\"\n\n[pbt]\nquantile = 0.7\n\n[hp.lr]\nmin = 1e-2\nmax = 1e-4\n"
	_, err := ParseConfig([]byte(data))
	if !errors.Is(err, ErrBadInput) {
		t.Fatalf("ParseConfig: %v, want ErrBadInput", err)
	}
	msg := err.Error()
	for _, want := range []string{"population.size = 0: want >= 1 (line 3)", "pbt.quantile = 0.7: want a share in (0, 0.5] (line 7)",
		"hp.lr: min = 0.01, max = 0.0001: want finite min <= max (line 9)"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the errors do not say %q:\n%s", want, msg)
		}
	}
	// [ppo]'s errors, which agent.Config.Validate gives as one, each get
	// their line too.
	_, err = ParseConfig([]byte("[ppo]\nlr = -1\ngamma = 1.5\ngae_lambda = 2\n"))
	msg = err.Error()
	for _, want := range []string{"ppo.lr = -1: want > 0 (line 2)", "ppo.gamma = 1.5: want in [0, 1] (line 3)",
		"ppo.gae_lambda = 2: want in [0, 1] (line 4)"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the errors do not say %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "bad input") {
		t.Errorf("the errors show the bad-input mark as a message:\n%s", msg)
	}
	// An error of several lines (a Python traceback) has its line noted on
	// its first, not after the traceback's last.
	inner := errors.New("boom")
	err = withKeyLines([]byte(data), fmt.Errorf("pbt.quantile: %w\n  Traceback:\n    File \"x.py\", line 2", inner))
	if want := "pbt.quantile: boom (line 7)\n  Traceback:\n    File \"x.py\", line 2"; err == nil || err.Error() != want || !errors.Is(err, inner) {
		t.Errorf("a traceback's error: %v, want %q wrapping the cause", err, want)
	}
}

// TestMemoryRefusalBelowTheProgram: a budget below what the program itself
// needs is said to be, instead of naming config keys no value of which
// would fit (a review saw net.latent.size and hp.batch_size.max blamed
// under GOMEMLIMIT=100MiB).
func TestMemoryRefusalBelowTheProgram(t *testing.T) {
	err := memEstimate{total: 2 * baseBytes}.refusal(baseBytes/2, "3/4 of GOMEMLIMIT")
	if err == nil || !strings.Contains(err.Error(), "less than the program itself needs") || strings.Contains(err.Error(), "hp.") {
		t.Errorf("refusal: %v", err)
	}
}

// TestDefaultConfigCompletesAsAnEmptyFile: DefaultConfig, the obvious start
// of a config built in Go, completes to what an empty file parses to (its
// empty network was refused as net.encoder = ""), and validates.
func TestDefaultConfigCompletesAsAnEmptyFile(t *testing.T) {
	got, err := DefaultConfig().Complete()
	if err != nil {
		t.Fatal(err)
	}
	want, err := ParseConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("DefaultConfig().Complete() = %+v,\nwant ParseConfig(nil) = %+v", got, want)
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Errorf("DefaultConfig().Validate() = %v", err)
	}
}

// TestConfigIsNotATOMLMarshaler: a user's struct embedding a Config encodes
// with BurntSushi/toml as a table (Config.MarshalTOML made it a
// toml.Marshaler, whose whole-file output was written as a value, invalid).
func TestConfigIsNotATOMLMarshaler(t *testing.T) {
	if _, ok := any(Config{}).(toml.Marshaler); ok {
		t.Error("Config is a toml.Marshaler")
	}
	cfg, err := ParseConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(struct{ Run Config }{cfg}); err != nil {
		t.Fatal(err)
	}
	var back struct{ Run Config }
	if _, err := toml.Decode(buf.String(), &back); err != nil {
		t.Errorf("a struct embedding a Config does not read back: %v", err)
	}
}

// TestMisspeltSelectionIsOneError: "PBT" for "pbt" beside a [pbt] that
// gives only explore was reported with five more errors about keys the
// file never set (pbt.quantile = 0, perturb_up = 0, …): [pbt] had no
// defaults under an unknown selection.
func TestMisspeltSelectionIsOneError(t *testing.T) {
	path := writeConfig(t, t.TempDir(), "pbt.toml", "[population]\nselection = \"PBT\"\n[pbt]\nexplore = \"pb2\"\n")
	_, err := LoadConfig(path)
	if err == nil || !strings.Contains(err.Error(), `population.selection = "PBT"`) {
		t.Fatalf("error %v, want one naming population.selection", err)
	}
	for _, not := range []string{"pbt.quantile", "perturb_up", "pb2_region", "alpha", "[pbt] given"} {
		if strings.Contains(err.Error(), not) {
			t.Errorf("error %q mentions %s, which the file does not set", err, not)
		}
	}
}

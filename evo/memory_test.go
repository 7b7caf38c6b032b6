package evo

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/envs"
)

// TestImpossibleConfigsAreRefusedWithoutAllocating: sizes that are valid
// numbers but more than any machine holds are refused by ParseConfig with
// the key named, before anything is allocated for them — by a bound, by the
// agent-file limit or by the memory estimate.
func TestImpossibleConfigsAreRefusedWithoutAllocating(t *testing.T) {
	lstm := "[env]\nid = \"CartPoleNoVel-v1\"\n[net]\nencoder = \"lstm\"\n"
	tests := []struct {
		name, text string
		want       []string
	}{
		{"a population of 10⁹", "[population]\nsize = 1_000_000_000\n", []string{"population.size = 1000000000", "<= 10000"}},
		{"learn_step 4·10⁹", "[ppo]\nlearn_step = 4_000_000_000\n", []string{"ppo.learn_step = 4000000000", "<= 100000000"}},
		{"learn_step range up to 10⁹", "[hp.learn_step]\nmax = 1e9\n", []string{"hp.learn_step.max = 1e+09", "<= 100000000"}},
		{"batch_size above learn_step", "[ppo]\nbatch_size = 1_000_000_000\n", []string{"ppo.batch_size = 1000000000", "<= ppo.learn_step (2048)"}},
		{"num_envs 10⁶", "[env]\nnum_envs = 1_000_000\n[ppo]\nlearn_step = 1_000_000\n", []string{"env.num_envs = 1000000", "<= 4096"}},
		{"eval_episodes 10⁹", "[env]\neval_episodes = 1_000_000_000\n", []string{"env.eval_episodes = 1000000000", "<= 1000000"}},
		{"max_seq_len 10⁹ for an lstm", lstm + "[ppo]\nmax_seq_len = 1_000_000_000\n", []string{"ppo.max_seq_len = 1000000000", "learn_step/num_envs = 256"}},
		{"max_seq_len 10⁹", "[ppo]\nmax_seq_len = 1_000_000_000\n", []string{"ppo.max_seq_len = 1000000000", "<= 100000000"}},
		{"hidden sizes of 10⁶", "[net.mlp]\nhidden = [1_000_000, 1_000_000]\nmax_nodes = 1_000_000\n", []string{"net.mlp.hidden", "weights", "1 GiB agent.Load reads", "memory"}},
		{"a head of 10⁶", "[net.head]\nhidden = [1_000_000, 1_000_000]\nmax_nodes = 1_000_000\n", []string{"net.head.hidden", "1 GiB"}},
		{"a transformer of 10⁸ weights", "[env]\nid = \"CartPoleNoVel-v1\"\n[net]\nencoder = \"transformer\"\n[net.transformer]\nwidth = 256\nmlp = 65536\nheads = 4\ncontext = 128\n",
			[]string{"net.transformer.width", "net.transformer.mlp"}},
		{"10⁹ lstm layers", lstm + "[net.lstm]\nlayers = 1_000_000_000\nmax_layers = 1_000_000_000\n", []string{"net.lstm.layers", "1 GiB"}},
		{"a huge lstm sequence within the bounds", "[env]\nid = \"CartPoleNoVel-v1\"\nnum_envs = 1\n[net]\nencoder = \"lstm\"\n[ppo]\nlearn_step = 100_000_000\nmax_seq_len = 100_000_000\n",
			[]string{"ppo.max_seq_len", "GB of memory", "more than the budget"}},
		{"a huge rollout within the bounds", "[env]\nnum_envs = 1\n[population]\nsize = 10_000\n[ppo]\nlearn_step = 100_000_000\n",
			[]string{"population.size = 10000", "ppo.learn_step", "GB of memory", "checkpoint"}},
		{"a big population of big networks", "[population]\nsize = 10_000\n[net.mlp]\nhidden = [4096, 4096]\nmax_nodes = 4096\n",
			[]string{"population.size = 10000", "net.mlp.hidden", "33,870,211 weights", "GB of memory"}},
	}
	if b, _ := memoryBudget(); b > 4000<<30 {
		t.Skipf("a memory budget of %s holds the test's big configs", gbString(b))
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := ParseConfig([]byte(tc.text))
			runtime.ReadMemStats(&after)
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrBadInput) {
				t.Errorf("error does not match ErrBadInput: %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if d := after.TotalAlloc - before.TotalAlloc; d > 100<<20 {
				t.Errorf("ParseConfig allocated %d MB before refusing", d>>20)
			}
		})
	}
}

// TestEstimateCountsTheAgent: the estimate derives the networks from the
// spaces as agent.New does — an agent file holds the estimated weights
// three times (with Adam's moments) and its header — and a shipped config
// needs well under a gigabyte, so no machine refuses it.
func TestEstimateCountsTheAgent(t *testing.T) {
	if err := registerSignEnv(); err != nil {
		t.Fatal(err)
	}
	paths, err := filepath.Glob("../configs/*.toml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no configs found: %v", err)
	}
	texts := map[string]string{
		"dict":              "[env]\nid = \"DictSign-v0\"\n",
		"dict cnn":          "[env]\nid = \"DictSign-v0\"\n[net]\nencoder = \"cnn\"\n[net.cnn]\nchannels = [8]\nkernels = [3]\nstrides = [1]\n",
		"headless":          "[net.head]\nhidden = []\nmin_layers = 0\n",
		"lunar lander lstm": "[env]\nid = \"LunarLanderContinuous-v3\"\n[net]\nencoder = \"lstm\"\n",
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		texts[filepath.Base(p)] = string(b)
	}
	dir := t.TempDir()
	for name, text := range texts {
		cfg, err := ParseConfig([]byte(text))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		env, err := envs.Make(cfg.Env.ID, cfg.Env.Options)
		if err != nil {
			t.Fatal(err)
		}
		est, err := cfg.estimate(env.ObservationSpace(), env.ActionSpace())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if est.total > 500e6 {
			t.Errorf("%s: estimated %s, want < 0.5 GB", name, gbString(est.total))
		}
		a, err := agent.New(env.ObservationSpace(), env.ActionSpace(), cfg.PPO, 1)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "agent.safetensors")
		if err := a.Save(path); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(cfg.Net.Memories) > 1 {
			// A memory gene is counted at its largest model, the agent built here is its
			// encoder's: the estimate may exceed the file, never fall short of it.
			if est.agentFile < fi.Size()-64<<10 {
				t.Errorf("%s: agent file of %d bytes, estimated %d: want at least the file without its header", name, fi.Size(), est.agentFile)
			}
			continue
		}
		if header := fi.Size() - est.agentFile; cfg.PPO.ShareEncoders || header < 0 || header > 64<<10 {
			t.Errorf("%s: agent file of %d bytes, estimated %d for %d weights: want the file larger by its header only", name, fi.Size(), est.agentFile, est.weights)
		}
	}
}

func TestMemoryBudget(t *testing.T) {
	const gib = 1 << 30
	for _, c := range []struct {
		goLimit, machine, cgroup int64
		want                     int64
		from                     string
	}{
		{math.MaxInt64, 32 * gib, 0, 24 * gib, "the machine's memory"},
		{math.MaxInt64, 32 * gib, 8 * gib, 6 * gib, "the cgroup's memory limit"},
		{math.MaxInt64, 8 * gib, 32 * gib, 6 * gib, "the machine's memory"},
		{4 * gib, 32 * gib, 8 * gib, 3 * gib, "GOMEMLIMIT"},
		{64 * gib, 32 * gib, 0, 48 * gib, "GOMEMLIMIT"}, // the user's word: a way past a pessimistic estimate
		{math.MaxInt64, 0, 0, 12 * gib, "16 GiB assumed"},
	} {
		got, from := budgetOf(c.goLimit, c.machine, c.cgroup)
		if got != c.want || !strings.Contains(from, c.from) || !strings.HasPrefix(from, "3/4 of") {
			t.Errorf("budgetOf(%d, %d, %d) = %d, %q; want %d from %q", c.goLimit, c.machine, c.cgroup, got, from, c.want, c.from)
		}
	}
	dir := t.TempDir()
	meminfo := writeConfig(t, dir, "meminfo", "MemFree:         1000 kB\nMemTotal:       24576000 kB\n")
	if n, err := readMemInfo(meminfo); err != nil || n != 24576000<<10 {
		t.Errorf("readMemInfo = %d, %v", n, err)
	}
	if _, err := readMemInfo(writeConfig(t, dir, "bad", "MemTotal: lots\n")); err == nil {
		t.Error("readMemInfo read a MemTotal without a number")
	}
	for text, want := range map[string]int64{"max\n": 0, "8589934592\n": 8 * gib} {
		if n, err := readCgroupLimit(writeConfig(t, dir, "memory.max", text)); err != nil || n != want {
			t.Errorf("readCgroupLimit(%q) = %d, %v; want %d", text, n, err, want)
		}
	}
	if b, from := memoryBudget(); b <= 0 || from == "" {
		t.Errorf("memoryBudget() = %d, %q", b, from)
	}
}

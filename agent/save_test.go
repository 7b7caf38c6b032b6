package agent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/internal/jsonfloat"
	"github.com/evolverl/evolve/netconf"
)

// smallNet is a quick network of the given encoder kind.
func smallNet(kind netconf.EncoderKind) netconf.Spec {
	s := netconf.DefaultSpec(kind)
	switch kind {
	case netconf.EncoderMLP:
		s.MLP.Hidden = []int{32}
	case netconf.EncoderLSTM, netconf.EncoderGRU:
		s.Memory().Hidden = 16
	case netconf.EncoderCNN:
		s.CNN.Channels, s.CNN.Kernels, s.CNN.Strides = []int{8}, []int{3}, []int{2}
	}
	s.Latent.Size = 16
	s.Head.Hidden = []int{16}
	return s
}

// tinyNet is the smallest network netconf allows, for fuzz seeds.
func tinyNet(kind netconf.EncoderKind) netconf.Spec {
	s := netconf.DefaultSpec(kind)
	if s.MLP != nil {
		s.MLP.Hidden, s.MLP.MinNodes = []int{2}, 1
	}
	if s.LSTM != nil {
		s.LSTM.Hidden, s.LSTM.MinHidden = 2, 1
	}
	s.Latent = netconf.Latent{Size: 2, Min: 1, Max: 8}
	s.Head.Hidden, s.Head.MinLayers = []int{}, 0
	return s
}

func envSpaces(t testing.TB, id string) (envs.Space, envs.Space) {
	t.Helper()
	env, err := envs.Make(id, nil)
	if err != nil {
		t.Fatal(err)
	}
	return env.ObservationSpace(), env.ActionSpace()
}

// testAgent is a recipe for an agent covering one corner of the format.
type testAgent struct {
	name     string
	obs, act envs.Space
	cfg      func(*Config)
}

func testAgents(t testing.TB, net func(netconf.EncoderKind) netconf.Spec) []testAgent {
	cpObs, cpAct := envSpaces(t, "CartPole-v1")
	pObs, pAct := envSpaces(t, "Pendulum-v1")
	obs5 := envs.NewBox(-1, 1, 5)
	dict, err := envs.NewDict([]string{"pos", "img"}, []envs.Space{envs.NewBox(-1, 1, 3), envs.NewBox(0, 255, 1, 7, 7)})
	if err != nil {
		t.Fatal(err)
	}
	return []testAgent{
		{"discrete", cpObs, cpAct, func(c *Config) { c.Net = net(netconf.EncoderMLP) }},
		{"gaussian shared norm", pObs, pAct, func(c *Config) {
			c.Net, c.ShareEncoders, c.NormalizeObs, c.ActionStdInit = net(netconf.EncoderMLP), true, true, -0.5
		}},
		{"lstm multi-discrete norm", obs5, envs.MultiDiscrete{Nvec: []int{3, 2}}, func(c *Config) {
			c.Net, c.NormalizeObs = net(netconf.EncoderLSTM), true
		}},
		{"multi-binary layer norm", obs5, envs.MultiBinary{N: 3}, func(c *Config) {
			c.Net = net(netconf.EncoderMLP)
			c.Net.Head.LayerNorm = true
		}},
		// The image key gets netconf's default CNN (its 7×7 fits it) and is scaled by its bounds.
		{"dict shared", dict, envs.Discrete{N: 3}, func(c *Config) {
			c.Net, c.ShareEncoders = net(netconf.EncoderMLP), true
		}},
		{"gaussian sde", pObs, pAct, func(c *Config) {
			c.Net, c.UseSDE, c.SDESampleFreq, c.ActionStdInit = net(netconf.EncoderMLP), true, 4, -1
		}},
		{"gru gaussian norm", obs5, pAct, func(c *Config) {
			c.Net, c.NormalizeObs = net(netconf.EncoderGRU), true
		}},
		{"multi-discrete observations", envs.MultiDiscrete{Nvec: []int{4, 3}}, cpAct, func(c *Config) { c.Net = net(netconf.EncoderMLP) }},
		{"transformer norm", obs5, cpAct, func(c *Config) {
			c.Net, c.NormalizeObs = net(netconf.EncoderTransformer), true
			c.Net.Transformer.Width, c.Net.Transformer.MLP, c.Net.Transformer.Context = 16, 32, 4
		}},
	}
}

func (ta testAgent) build(t testing.TB, seed uint64) *PPO {
	t.Helper()
	cfg := DefaultConfig()
	ta.cfg(&cfg)
	a, err := New(ta.obs, ta.act, cfg, seed)
	if err != nil {
		t.Fatalf("%s: %v", ta.name, err)
	}
	return a
}

// scramble gives every part of the saved state a non-default value: random
// moments, observation statistics, counters, history and an advanced RNG.
func scramble(a *PPO, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	for i := range a.adam.M {
		for j := range a.adam.M[i] {
			a.adam.M[i][j] = float32(rng.NormFloat64() * 1e-3)
			a.adam.V[i][j] = float32(rng.Float64() * 1e-6)
		}
	}
	for i := range a.logStd {
		a.logStd[i] = float32(rng.NormFloat64() * 0.1)
	}
	a.adam.Step, a.adam.LR = 17, 1.234e-4
	if a.norm != nil {
		batch := make([]float32, 7*a.obsSpace.FlatSize())
		for i := range batch {
			batch[i] = float32(rng.NormFloat64()*3 + 1)
		}
		a.norm.Update(batch)
	}
	a.Steps, a.Updates, a.TotalSteps = 1234, 56, 100000
	a.History = []string{"mlp.add_node: hidden[0] 32 -> 48", "latent.add_node: 16 -> 24"}
	for range 5 {
		a.rng.Uint64()
	}
}

// saveBytes saves a to a fresh file and returns its contents.
func saveBytes(t testing.TB, a *PPO) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "agent.safetensors")
	if err := a.Save(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// saveLoad saves a to a file in a fresh temporary directory and loads it
// back; it returns the loaded agent and the file.
func saveLoad(t testing.TB, a *PPO) (*PPO, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "agent.safetensors")
	if err := a.Save(path); err != nil {
		t.Fatal(err)
	}
	b, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return b, path
}

func sameBits(x, y []float32) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if math.Float32bits(x[i]) != math.Float32bits(y[i]) {
			return false
		}
	}
	return true
}

func sameParams(x, y netconf.Params) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i].Name != y[i].Name || !reflect.DeepEqual(x[i].Shape, y[i].Shape) || !sameBits(x[i].Data, y[i].Data) {
			return false
		}
	}
	return true
}

// checkSameAgent compares everything Save writes, bit for bit, except the
// RNG state when withRNG is false.
func checkSameAgent(t *testing.T, a, b *PPO, withRNG bool) {
	t.Helper()
	if !reflect.DeepEqual(a.cfg, b.cfg) {
		t.Errorf("config differs:\n%+v\n%+v", a.cfg, b.cfg)
	}
	if a.obsSpace.String() != b.obsSpace.String() || a.actSpace.String() != b.actSpace.String() {
		t.Errorf("spaces differ: %v %v / %v %v", a.obsSpace, a.actSpace, b.obsSpace, b.actSpace)
	}
	if !reflect.DeepEqual(a.actorSpec, b.actorSpec) || !reflect.DeepEqual(a.criticSpec, b.criticSpec) {
		t.Errorf("specs differ")
	}
	if !sameParams(a.actor, b.actor) || !sameParams(a.critic, b.critic) || !sameBits(a.logStd, b.logStd) {
		t.Errorf("weights differ")
	}
	if len(a.adam.M) != len(b.adam.M) || len(a.adam.V) != len(b.adam.V) {
		t.Fatalf("moment counts differ")
	}
	for i := range a.adam.M {
		if !sameBits(a.adam.M[i], b.adam.M[i]) || !sameBits(a.adam.V[i], b.adam.V[i]) {
			t.Errorf("moments of tensor %d differ", i)
		}
	}
	if a.adam.LR != b.adam.LR || a.adam.Beta1 != b.adam.Beta1 || a.adam.Beta2 != b.adam.Beta2 || a.adam.Eps != b.adam.Eps || a.adam.Step != b.adam.Step {
		t.Errorf("adam hyperparameters differ: %+v / %+v", *a.adam, *b.adam)
	}
	if (a.norm == nil) != (b.norm == nil) || a.norm != nil && !reflect.DeepEqual(*a.norm, *b.norm) {
		t.Errorf("normalisers differ")
	}
	if a.Steps != b.Steps || a.Updates != b.Updates || a.TotalSteps != b.TotalSteps || !reflect.DeepEqual(a.History, b.History) {
		t.Errorf("counters or history differ")
	}
	if withRNG {
		sa, _ := a.pcg.MarshalBinary()
		sb, _ := b.pcg.MarshalBinary()
		if !bytes.Equal(sa, sb) {
			t.Errorf("rng states differ")
		}
	}
}

func randomObs(a *PPO, rows int, seed uint64) []float32 {
	rng := rand.New(rand.NewPCG(seed, 2))
	obs := make([]float32, rows*a.obsSpace.FlatSize())
	for i := range obs {
		obs[i] = float32(rng.NormFloat64())
	}
	return obs
}

// checkSameActions acts with both agents, deterministically and sampled,
// several times in a row (so recurrent state is carried), and wants equal
// actions.
func checkSameActions(t *testing.T, a, b *PPO) {
	t.Helper()
	for i := range 3 {
		obs := randomObs(a, 3, uint64(i))
		for _, det := range []bool{true, false} {
			x, err := a.Act(obs, nil, det)
			if err != nil {
				t.Fatal(err)
			}
			y, err := b.Act(obs, nil, det)
			if err != nil {
				t.Fatal(err)
			}
			if !sameBits(x, y) {
				t.Fatalf("call %d, deterministic %v: actions %v and %v", i, det, x, y)
			}
		}
	}
}

// TestSaveLoadRoundTrip: for discrete, Gaussian (shared encoder, obs
// normalisation), recurrent multi-discrete and multi-binary (layer norm)
// agents, Load gives back every saved field bit for bit, the same RNG
// state and the same actions, and saving the loaded agent writes the same
// bytes.
func TestSaveLoadRoundTrip(t *testing.T) {
	for _, ta := range testAgents(t, smallNet) {
		t.Run(ta.name, func(t *testing.T) {
			a := ta.build(t, 3)
			scramble(a, 4)
			b, _ := saveLoad(t, a)
			checkSameAgent(t, a, b, true)
			if b.roll != nil || b.work != nil {
				t.Error("a loaded agent has a rollout or graphs")
			}
			if !bytes.Equal(saveBytes(t, a), saveBytes(t, b)) {
				t.Error("saving the loaded agent writes other bytes")
			}
			checkSameActions(t, a, b)
		})
	}
}

// TestEncodeDecodeIsSaveLoad: Encode returns the bytes Save writes, and
// Decode reads them back to the same agent.
func TestEncodeDecodeIsSaveLoad(t *testing.T) {
	for _, ta := range testAgents(t, smallNet) {
		t.Run(ta.name, func(t *testing.T) {
			a := ta.build(t, 3)
			scramble(a, 4)
			enc, err := a.Encode()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(enc, saveBytes(t, a)) {
				t.Fatal("Encode and Save give other bytes")
			}
			b, err := Decode(enc)
			if err != nil {
				t.Fatal(err)
			}
			checkSameAgent(t, a, b, true)
			if _, err := Decode(enc[:len(enc)-1]); err == nil {
				t.Error("Decode accepted a truncated file")
			}
		})
	}
}

// TestSaveLoadKeepsTrainingBitIdentical: an agent trained for a while, saved
// and loaded, then trained further on a fresh vector, ends bit for bit where
// the original ends when trained the same way.
func TestSaveLoadKeepsTrainingBitIdentical(t *testing.T) {
	cfg := DefaultConfig()
	cfg.LearnStep, cfg.BatchSize, cfg.NormalizeObs, cfg.AnnealLR = 128, 32, true, true
	cfg.Net = smallNet(netconf.EncoderMLP)
	vec, err := envs.MakeVector("CartPole-v1", 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(vec.ObservationSpace(), vec.ActionSpace(), cfg, 11)
	if err != nil {
		t.Fatal(err)
	}
	a.TotalSteps = 2048
	if _, err := a.Train(context.Background(), vec, 256); err != nil {
		t.Fatal(err)
	}
	b, _ := saveLoad(t, a)
	var stats [2]TrainStats
	for i, ag := range []*PPO{a, b} {
		v, err := envs.MakeVector("CartPole-v1", 4, nil)
		if err != nil {
			t.Fatal(err)
		}
		if stats[i], err = ag.Train(context.Background(), v, 256); err != nil {
			t.Fatal(err)
		}
	}
	checkSameAgent(t, a, b, true)
	if a.Updates == 0 || a.Steps != 512 {
		t.Fatalf("steps %d, updates %d: the agent did not train", a.Steps, a.Updates)
	}
	if !reflect.DeepEqual(stats[0].Last, stats[1].Last) || stats[0].Steps != stats[1].Steps || stats[0].Episodes != stats[1].Episodes {
		t.Errorf("train stats differ: %+v / %+v", stats[0], stats[1])
	}
	if !bytes.Equal(saveBytes(t, a), saveBytes(t, b)) {
		t.Error("the two agents save different bytes")
	}
}

// TestSaveFailureKeepsOldFile: a Save that fails leaves the previous file
// as it was and no temporary file behind.
func TestSaveFailureKeepsOldFile(t *testing.T) {
	ta := testAgents(t, tinyNet)[0]
	a := ta.build(t, 1)
	dir := t.TempDir()
	path := filepath.Join(dir, "a.safetensors")
	if err := a.Save(path); err != nil {
		t.Fatal(err)
	}
	old, _ := os.ReadFile(path)
	b := a.Clone(2)
	b.actor[0].Data = b.actor[0].Data[:1] // no longer fits its shape: encoding fails mid-way
	err := b.Save(path)
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("Save of a broken agent: %v, want an error naming %s", err, path)
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, old) {
		t.Error("the failed Save changed the existing file")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("directory holds %d entries after the failed Save, want 1", len(ents))
	}
	if err := a.Save(filepath.Join(dir, "missing", "a.safetensors")); err == nil {
		t.Error("Save into a missing directory succeeded")
	}
}

// rewrite decodes a valid agent file, lets edit change its tensors, its
// metadata and its description, and encodes it again with a fresh checksum.
func rewrite(t *testing.T, file []byte, edit func(ts *[]namedTensor, meta map[string]string, d *agentJSON)) []byte {
	t.Helper()
	ts, meta, err := decodeSafetensors(file)
	if err != nil {
		t.Fatal(err)
	}
	var d agentJSON
	if err := decodeStrict(meta["agent"], &d); err != nil {
		t.Fatal(err)
	}
	edit(&ts, meta, &d)
	if d.RNG != "keep" {
		desc, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		meta["agent"] = string(desc)
	}
	var buf bytes.Buffer
	if err := encodeSafetensors(&buf, ts, meta); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestLoadRejects: every kind of damage to a file is an error that names
// the file and the problem, never a panic or an agent.
func TestLoadRejects(t *testing.T) {
	ta := testAgents(t, smallNet)[1] // Gaussian, shared encoders, normaliser
	a := ta.build(t, 5)
	scramble(a, 6)
	good := saveBytes(t, a)
	dropTensor := func(name string) func(*[]namedTensor, map[string]string, *agentJSON) {
		return func(ts *[]namedTensor, _ map[string]string, _ *agentJSON) {
			for i, x := range *ts {
				if x.Name == name {
					*ts = append((*ts)[:i], (*ts)[i+1:]...)
					return
				}
			}
			t.Fatalf("no tensor %s", name)
		}
	}
	editDesc := func(f func(d *agentJSON)) func(*[]namedTensor, map[string]string, *agentJSON) {
		return func(_ *[]namedTensor, _ map[string]string, d *agentJSON) { f(d) }
	}
	rawDesc := func(old, new string) func(*[]namedTensor, map[string]string, *agentJSON) {
		return func(_ *[]namedTensor, meta map[string]string, d *agentJSON) {
			if !strings.Contains(meta["agent"], old) {
				t.Fatalf("description lacks %q", old)
			}
			meta["agent"] = strings.Replace(meta["agent"], old, new, 1)
			d.RNG = "keep"
		}
	}
	huge := func(d *agentJSON) {
		for _, s := range []*netconf.Spec{&d.Config.Net, &d.Actor, &d.Critic} {
			s.MLP.Hidden, s.MLP.MaxNodes = []int{1_000_000_000}, 2_000_000_000
		}
	}
	flipped := bytes.Clone(good)
	flipped[len(flipped)-3] ^= 1
	cases := []struct {
		name string
		file []byte
		want string
	}{
		{"empty", nil, "too short"},
		{"not safetensors", []byte("hello, this is not an agent file at all"), "header length"},
		{"truncated", good[:len(good)/2], "truncated: the header describes"},
		{"data corrupted", flipped, "checksum mismatch"},
		{"format", rewrite(t, good, func(_ *[]namedTensor, m map[string]string, _ *agentJSON) { m["format"] = "other" }), "format"},
		{"version", rewrite(t, good, func(_ *[]namedTensor, m map[string]string, _ *agentJSON) { m["version"] = "3" }), "version"},
		{"metadata key", rewrite(t, good, func(_ *[]namedTensor, m map[string]string, _ *agentJSON) { m["extra"] = "x" }), `unexpected key "extra"`},
		{"unknown field", rewrite(t, good, rawDesc(`"steps":`, `"bogus":1,"steps":`)), `unknown field "bogus"`},
		{"unknown nested field", rewrite(t, good, rawDesc(`"batch_size":`, `"bogus":1,"batch_size":`)), `unknown field "bogus"`},
		{"trailing data", rewrite(t, good, rawDesc(`"history":`, `"history":[]}{"history":`)), "after the JSON object"},
		{"description not JSON", rewrite(t, good, rawDesc(`{`, `[`)), "agent description"},
		{"observation space", rewrite(t, good, editDesc(func(d *agentJSON) { d.ObservationSpace = json.RawMessage(`{"type":"box","shape":[0]}`) })), "observation_space"},
		{"action space", rewrite(t, good, editDesc(func(d *agentJSON) { d.ActionSpace = json.RawMessage(`{"type":"discrete"}`) })), "action_space"},
		{"config", rewrite(t, good, editDesc(func(d *agentJSON) { d.Config.LR = -1 })), "config: lr = -1"},
		{"actor spec", rewrite(t, good, editDesc(func(d *agentJSON) { d.Actor.Output = 7 })), "actor spec"},
		{"critic spec", rewrite(t, good, editDesc(func(d *agentJSON) { d.Critic.Head.Hidden = []int{17} })), "critic spec"},
		{"huge hidden layer", rewrite(t, good, editDesc(huge)), "the specs need"},
		{"missing tensor", rewrite(t, good, dropTensor("adam.v.critic.out.bias")), `tensor "adam.v.critic.out.bias" is missing`},
		{"missing log-std", rewrite(t, good, dropTensor("actor.log_std")), `"actor.log_std" is missing`},
		{"missing norm", rewrite(t, good, dropTensor("norm.var")), `"norm.var" is missing`},
		{"reward statistics without normalize_reward", rewrite(t, good, editDesc(func(d *agentJSON) {
			d.RewardNorm = &normJSON{Count: 1, Mean: []jsonfloat.F64{0}, Var: []jsonfloat.F64{1}}
		})), "reward_norm: statistics given"},
		{"normalize_value without statistics", rewrite(t, good, editDesc(func(d *agentJSON) { d.Config.NormalizeValue = true })), "value_norm: missing"},
		{"value statistics with a negative variance", rewrite(t, good, editDesc(func(d *agentJSON) {
			d.Config.NormalizeValue = true
			d.ValueNorm = &normJSON{Count: 3, Mean: []jsonfloat.F64{0}, Var: []jsonfloat.F64{-1}}
		})), "value_norm: var = -1"},
		{"normalize_reward without statistics", rewrite(t, good, editDesc(func(d *agentJSON) { d.Config.NormalizeReward = true })), "reward_norm: missing"},
		{"unexpected tensor", rewrite(t, good, func(ts *[]namedTensor, _ map[string]string, _ *agentJSON) {
			*ts = append(*ts, namedTensor{Name: "critic.encoder.mlp.0.bias", Shape: []int{32}, Data: make([]float32, 32)})
		}), `unexpected tensor "critic.encoder.mlp.0.bias"`},
		{"wrong shape", rewrite(t, good, func(ts *[]namedTensor, _ map[string]string, _ *agentJSON) {
			for i := range *ts {
				if (*ts)[i].Name == "adam.m.actor.out.weight" {
					s := (*ts)[i].Shape
					(*ts)[i].Shape = []int{s[1], s[0]}
				}
			}
		}), `"adam.m.actor.out.weight" has shape`},
		{"adam", rewrite(t, good, editDesc(func(d *agentJSON) { d.Adam.Beta2 = 1 })), "adam: beta2"},
		{"adam eps", rewrite(t, good, editDesc(func(d *agentJSON) { d.Adam.Eps = 0 })), "adam: eps"},
		{"norm missing", rewrite(t, good, editDesc(func(d *agentJSON) { d.Norm = nil })), "norm: missing"},
		{"norm count", rewrite(t, good, editDesc(func(d *agentJSON) { d.Norm.Count = 0 })), "norm: count"},
		{"norm variance", rewrite(t, good, editDesc(func(d *agentJSON) { d.Norm.Var[1] = -1 })), "norm: var[1]"},
		{"norm length", rewrite(t, good, editDesc(func(d *agentJSON) { d.Norm.Mean = d.Norm.Mean[:1] })), "norm: 1 means"},
		{"norm tensor disagrees", rewrite(t, good, editDesc(func(d *agentJSON) { d.Norm.Mean[0] += 1 })), "norm.mean[0]"},
		{"norm value", rewrite(t, good, rawDesc(`"mean":[`, `"mean":[true,`)), "agent description"},
		{"negative counter", rewrite(t, good, editDesc(func(d *agentJSON) { d.Updates = -1 })), "updates = -1"},
		{"rng not base64", rewrite(t, good, editDesc(func(d *agentJSON) { d.RNG = "!!" })), "rng: not base64"},
		{"rng state", rewrite(t, good, editDesc(func(d *agentJSON) { d.RNG = "AAAA" })), "rng"},
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".safetensors")
			if err := os.WriteFile(path, c.file, 0o644); err != nil {
				t.Fatal(err)
			}
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			b, err := Load(path)
			runtime.ReadMemStats(&m1)
			if err == nil {
				t.Fatalf("Load accepted the file (agent %v)", b != nil)
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "agent: load ") {
				t.Errorf("error %q: want it to name %s and say %q", err, path, c.want)
			}
			if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > 64<<20 {
				t.Errorf("Load allocated %d bytes for a %d-byte file", alloc, len(c.file))
			}
		})
	}
	if _, err := Load(filepath.Join(dir, "does-not-exist")); err == nil || !strings.Contains(err.Error(), "does-not-exist") {
		t.Errorf("missing file: %v", err)
	}
}

// fixChecksum returns a copy of file whose header checksum matches its data,
// so that the fuzzer's mutations reach past the checksum.
func fixChecksum(file []byte) []byte {
	if len(file) < 8 {
		return nil
	}
	hlen := binary.LittleEndian.Uint64(file)
	if hlen > uint64(len(file)-8) {
		return nil
	}
	out := bytes.Clone(file)
	header := out[8 : 8+hlen]
	key := []byte(`"checksum":"sha256:`)
	i := bytes.Index(header, key)
	if i < 0 || i+len(key)+64 > len(header) {
		return nil
	}
	sum := sha256.Sum256(out[8+hlen:])
	copy(header[i+len(key):], hex.EncodeToString(sum[:]))
	return out
}

// FuzzLoad: no file makes Load panic or allocate far more than the file's
// size, and whatever it accepts is an agent that acts and saves to a file
// that loads back to the same bytes. Every input is tried as it is and
// with its checksum repaired (else nearly every mutation stops at the
// checksum). The seeds are small agents of every kind, saved with Save.
func FuzzLoad(f *testing.F) {
	dir := f.TempDir()
	for i, ta := range testAgents(f, tinyNet) {
		a := ta.build(f, uint64(i))
		scramble(a, uint64(i))
		path := filepath.Join(dir, "seed.safetensors")
		if err := a.Save(path); err != nil {
			f.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, file []byte) {
		for _, in := range [][]byte{file, fixChecksum(file)} {
			if in == nil {
				continue
			}
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			a, err := decodeAgent(in)
			runtime.ReadMemStats(&m1)
			if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > 32*uint64(len(in))+(16<<20) {
				t.Fatalf("decoding %d bytes allocated %d", len(in), alloc)
			}
			if err != nil {
				continue
			}
			if _, err := a.Act(randomObs(a, 2, 1), nil, true); err != nil {
				t.Fatalf("loaded agent cannot act: %v", err)
			}
			tensors, meta, err := a.encodeFile()
			if err != nil {
				t.Fatalf("loaded agent cannot be encoded: %v", err)
			}
			var buf bytes.Buffer
			if err := encodeSafetensors(&buf, tensors, meta); err != nil {
				t.Fatal(err)
			}
			b, err := decodeAgent(buf.Bytes())
			if err != nil {
				t.Fatalf("re-encoded agent does not load: %v", err)
			}
			tensors, meta, _ = b.encodeFile()
			var buf2 bytes.Buffer
			if err := encodeSafetensors(&buf2, tensors, meta); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), buf2.Bytes()) {
				t.Fatal("save → load → save changed the bytes")
			}
		}
	})
}

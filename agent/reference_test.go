package agent

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/netconf"
)

const ppoRefDir = "../../shared/testdata/ppo"

type refTensor struct {
	Shape []int     `json:"shape"`
	Data  []float64 `json:"data"`
}

type ppoRef struct {
	Name        string               `json:"name"`
	ObsDim      int                  `json:"obs_dim"`
	ObsShape    []int                `json:"obs_shape"`
	Action      json.RawMessage      `json:"action"`
	Hyper       map[string]any       `json:"hyperparameters"`
	InitParams  map[string]refTensor `json:"init_params"`
	Obs         json.RawMessage      `json:"obs"`     // rows, or a time-major tensor for sequences
	Actions     json.RawMessage      `json:"actions"` // likewise
	ActionMasks [][]bool             `json:"action_masks"`
	OldLogprobs json.RawMessage      `json:"old_logprobs"`
	OldValues   json.RawMessage      `json:"old_values"`
	Advantages  json.RawMessage      `json:"advantages"`
	Returns     json.RawMessage      `json:"returns"`
	// Recurrent files: sequence lengths, valid[t][s], initial states [S, H].
	Lengths        []int                `json:"lengths"`
	Valid          refTensor            `json:"valid"`
	ActorH0        refTensor            `json:"actor_h0"`
	ActorC0        refTensor            `json:"actor_c0"`
	CriticH0       refTensor            `json:"critic_h0"`
	CriticC0       refTensor            `json:"critic_c0"`
	Steps          []refStep            `json:"steps"`
	AfterFirstStep map[string]refTensor `json:"params_after_first_step"`
	FinalParams    map[string]refTensor `json:"final_params"`
	ActionKind     string               `json:"action_kind"`
}

type refStep struct {
	Epoch     int     `json:"epoch"`
	Indices   []int   `json:"indices"`
	Sequences []int   `json:"sequences"`
	PgLoss    float64 `json:"pg_loss"`
	VLoss     float64 `json:"v_loss"`
	Entropy   float64 `json:"entropy"`
	Loss      float64 `json:"loss"`
	ApproxKL  float64 `json:"approx_kl"`
	ClipFrac  float64 `json:"clipfrac"`
	GradNorm  float64 `json:"grad_norm_before_clip"`
}

func loadPPORef(t *testing.T, name string) *ppoRef {
	t.Helper()
	if strings.HasPrefix(name, "gru_") || strings.HasPrefix(name, "transformer_") { // this package's own
		var r ppoRef
		readTestdata(t, name+".json", &r)
		return &r
	}
	path := filepath.Join(ppoRefDir, name+".json")
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		t.Skipf("reference data %s not found: clone the shared folder beside the repository to run this test", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	var r ppoRef
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &r
}

// refCase is one reference file: the spaces and our network for its
// PyTorch network.
type refCase struct {
	name            string
	obs, act        envs.Space
	net             netconf.Spec
	encoder, prefix string // PyTorch's encoder name and ours
}

func refCases() []refCase {
	inf := float32(math.Inf(1))
	flat := func(n int) envs.Space { return envs.NewBox(-inf, inf, n) }
	bounds := func(lo, hi int) netconf.MLP {
		return netconf.MLP{Activation: netconf.Tanh, MinLayers: 0, MaxLayers: 3, MinNodes: lo, MaxNodes: hi}
	}
	// obs → 16 → tanh → latent → tanh → out: a one-layer MLP encoder, a
	// latent and a head without hidden layers.
	mlp := func(latent int) netconf.Spec {
		enc := bounds(8, 64)
		enc.Hidden, enc.MinLayers = []int{16}, 1
		return netconf.Spec{Encoder: netconf.EncoderMLP, MLP: &enc,
			Latent: netconf.Latent{Size: latent, Min: 4, Max: 64}, Head: bounds(8, 64)}
	}
	cnn := netconf.Spec{Encoder: netconf.EncoderCNN,
		CNN: &netconf.CNN{Channels: []int{4, 4}, Kernels: []int{3, 2}, Strides: []int{1, 1}, Activation: netconf.ReLU,
			MinLayers: 1, MaxLayers: 3, MinChannels: 4, MaxChannels: 16},
		Latent: netconf.Latent{Size: 8, Min: 4, Max: 64}, Head: bounds(8, 64)}
	lstm := netconf.Spec{Encoder: netconf.EncoderLSTM,
		LSTM:   &netconf.LSTM{Hidden: 8, Layers: 1, MinHidden: 4, MaxHidden: 64, MinLayers: 1, MaxLayers: 2},
		Latent: netconf.Latent{Size: 8, Min: 4, Max: 64}, Head: bounds(8, 64)}
	gru := lstm.Clone()
	gru.Encoder, gru.GRU, gru.LSTM = netconf.EncoderGRU, gru.LSTM, nil
	image := envs.NewBox(float32(math.Inf(-1)), inf, 2, 6, 5) // unbounded: no scaling
	var cases []refCase
	for _, clip := range []string{"", "_clip"} {
		cases = append(cases,
			refCase{"discrete" + clip, flat(4), envs.Discrete{N: 3}, mlp(16), "", ""},
			refCase{"discrete_masked" + clip, flat(4), envs.Discrete{N: 5}, mlp(16), "", ""},
			refCase{"multidiscrete" + clip, flat(4), envs.MultiDiscrete{Nvec: []int{3, 2}}, mlp(16), "", ""},
			refCase{"continuous" + clip, flat(3), envs.NewBox(-1, 1, 2), mlp(16), "", ""},
			refCase{"multibinary" + clip, flat(4), envs.MultiBinary{N: 3}, mlp(8), "encoder", "encoder.mlp"},
			refCase{"cnn_masked" + clip, image, envs.Discrete{N: 4}, cnn, "encoder", "encoder.cnn"},
			refCase{"lstm_bptt" + clip, flat(3), envs.NewBox(-1, 1, 2), lstm, "lstm", "encoder.lstm"},
		)
	}
	tf := netconf.Spec{Encoder: netconf.EncoderTransformer,
		Transformer: &netconf.Transformer{Layers: 1, Heads: 2, Width: 8, MLP: 12, Context: 4, MinLayers: 1, MaxLayers: 2,
			MinWidth: 4, MaxWidth: 64, MinContext: 2, MaxContext: 8},
		Latent: netconf.Latent{Size: 8, Min: 4, Max: 64}, Head: bounds(8, 64)}
	for _, clip := range []string{"", "_clip"} {
		// Written by testdata/gen_ppo_gru.py and gen_ppo_transformer.py in the shared
		// references' format.
		cases = append(cases, refCase{"gru_bptt" + clip, flat(3), envs.NewBox(-1, 1, 2), gru, "gru", "encoder.gru"},
			refCase{"transformer_bptt" + clip, flat(3), envs.NewBox(-1, 1, 2), tf, "transformer", "encoder.transformer"})
	}
	return cases
}

// refLayout lists, for a reference tensor name, where its values live in
// the agent: the Params, our tensor name and how PyTorch's index maps to
// ours. Linear weights are transposed ([out, in] → [in, out]; a latent
// after a CNN reads C·H·W rows), conv weights keep their layout, and an
// LSTM's fused [4H, ·] (a GRU's [3H, ·]) matrices split into per-gate [·, H] ones.
func refLayout(a *PPO, c refCase, name string, shape []int) (func(i int) *float32, error) {
	net, rest, _ := strings.Cut(name, ".")
	params := a.actor
	if net == "critic" {
		params = a.critic
	}
	if name == "actor.log_std" {
		return func(i int) *float32 { return &a.logStd[i] }, nil
	}
	tensor := func(n string) (*netconf.Tensor, error) {
		t := params.Tensor(n)
		if t == nil {
			return nil, fmt.Errorf("%s: no tensor %s", name, n)
		}
		return t, nil
	}
	linear := func(ours string) (func(i int) *float32, error) {
		t, err := tensor(ours)
		if err != nil {
			return nil, err
		}
		if len(shape) == 1 {
			return func(i int) *float32 { return &t.Data[i] }, nil
		}
		out, in := shape[0], shape[1]
		if len(t.Data) != out*in {
			return nil, fmt.Errorf("%s %v: ours %s has %d values", name, shape, ours, len(t.Data))
		}
		return func(i int) *float32 { return &t.Data[(i%in)*out+i/in] }, nil
	}
	if c.encoder == "lstm" || c.encoder == "gru" {
		if l, ok := strings.CutPrefix(rest, c.encoder+"."); ok {
			kind, layer, _ := strings.Cut(l, "_l") // weight_ih, 0
			h := c.net.Memory().Hidden
			gates := netconf.Gates(c.net.Encoder)
			ts := make([]*netconf.Tensor, len(gates))
			short := map[string]string{"weight_ih": "w_ih", "weight_hh": "w_hh", "bias_ih": "b_ih", "bias_hh": "b_hh"}[kind]
			for q, g := range gates {
				t, err := tensor(c.prefix + "." + layer + "." + short + "." + g)
				if err != nil {
					return nil, err
				}
				ts[q] = t
			}
			if len(shape) == 1 {
				return func(i int) *float32 { return &ts[i/h].Data[i%h] }, nil
			}
			in := shape[1]
			return func(i int) *float32 {
				row, col := i/in, i%in // PyTorch [G·H, in]: gate row/h, unit row%h
				return &ts[row/h].Data[col*h+row%h]
			}, nil
		}
	}
	if ours, ok := strings.CutPrefix(rest, "encoder.transformer."); ok && c.encoder == "transformer" {
		if len(shape) == 2 && ours != "pos" {
			return linear(rest)
		}
		t, err := tensor(rest)
		if err != nil {
			return nil, err
		}
		return func(i int) *float32 { return &t.Data[i] }, nil
	}
	parts := strings.Split(rest, ".") // [0 weight], [encoder 0 weight], [latent weight]
	field := parts[len(parts)-1]
	switch {
	case len(parts) == 2 && c.encoder == "": // the plain MLP files: actor.K.*
		return linear(map[string]string{"0": "encoder.mlp.0", "1": "latent", "2": "out"}[parts[0]] + "." + field)
	case parts[0] == "encoder" && c.net.Encoder == netconf.EncoderCNN:
		t, err := tensor(c.prefix + "." + parts[1] + "." + field)
		if err != nil {
			return nil, err
		}
		return func(i int) *float32 { return &t.Data[i] }, nil
	case parts[0] == "encoder":
		return linear(c.prefix + "." + parts[1] + "." + field)
	case parts[0] == "latent" || parts[0] == "out":
		return linear(parts[0] + "." + field)
	}
	return nil, fmt.Errorf("reference tensor %s: no counterpart", name)
}

// setRefParams copies the reference's parameters into the agent.
func setRefParams(t *testing.T, a *PPO, c refCase, ref map[string]refTensor) {
	t.Helper()
	n := 0
	for name, rt := range ref {
		at, err := refLayout(a, c, name, rt.Shape)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range rt.Data {
			*at(i) = float32(v)
		}
		n += len(rt.Data)
	}
	if held := len(flatten(a.tensors())); held != n {
		t.Fatalf("the reference sets %d parameters, the agent has %d", n, held)
	}
}

func flatten(ts [][]float32) []float32 {
	var out []float32
	for _, t := range ts {
		out = append(out, t...)
	}
	return out
}

// maxParamError returns the largest |ours − ref| / (|ref| + 1e-3).
func maxParamError(t *testing.T, a *PPO, c refCase, ref map[string]refTensor) (float64, string) {
	worst, where := 0.0, ""
	for name, rt := range ref {
		at, err := refLayout(a, c, name, rt.Shape)
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range rt.Data {
			got := float64(*at(i))
			if e := math.Abs(got-want) / (math.Abs(want) + 1e-3); e > worst || math.IsNaN(e) {
				worst, where = e, name
			}
		}
	}
	return worst, where
}

// TestUpdateReplaysPyTorchReferences runs every minibatch of each reference
// PPO update (MLP, CNN, LSTM, GRU and Transformer networks over padded BPTT sequences; every
// action space) through our update, on each backend, and compares losses,
// entropy, approximate KL, clip fraction, gradient norm and the parameters
// after the first and the last step to the data README's tolerances.
func TestUpdateReplaysPyTorchReferences(t *testing.T) {
	for _, backend := range []string{"go", "gorgonia"} {
		for _, c := range refCases() {
			t.Run(backend+"/"+c.name, func(t *testing.T) {
				replayRef(t, loadPPORef(t, c.name), c, backend, nil)
			})
		}
	}
}

// TestUpdateReplaysSB3Rule replays, on each backend, PPO updates made by
// Stable-Baselines3's rule with its defaults that differ from CleanRL's:
// a gSDE policy (SB3's StateDependentNoiseDistribution) and the unclipped
// MSE value loss (testdata/ppo_sde_mse*.json, written by gen_ppo_sb3.py),
// to the same tolerances as the shared references.
func TestUpdateReplaysSB3Rule(t *testing.T) {
	for _, backend := range []string{"go", "gorgonia"} {
		for _, name := range []string{"ppo_sde_mse", "ppo_sde_mse_clip"} {
			t.Run(backend+"/"+name, func(t *testing.T) {
				var ref ppoRef
				readTestdata(t, name+".json", &ref)
				c := refCases()[3] // the continuous case's spaces and network
				if !strings.HasPrefix(c.name, "continuous") {
					t.Fatalf("refCases()[3] is %s, want the continuous case", c.name)
				}
				replayRef(t, &ref, c, backend, func(cfg *Config) { cfg.UseSDE, cfg.ValueLoss = true, ValueLossMSE })
			})
		}
	}
}

// replayRef runs every minibatch of the reference update ref through our
// update on the backend, with the reference's hyperparameters and then
// edit's changes, and compares losses, entropy, approximate KL, clip
// fraction, gradient norm and the parameters after the first and the last
// step to the data README's tolerances.
func replayRef(t *testing.T, ref *ppoRef, c refCase, backend string, edit func(*Config)) {
	cfg := DefaultConfig()
	cfg.Backend = backend
	cfg.Net = c.net
	cfg.LR = ref.Hyper["lr"].(float64)
	cfg.ClipCoef = ref.Hyper["clip_coef"].(float64)
	cfg.EntCoef = ref.Hyper["ent_coef"].(float64)
	cfg.VFCoef = ref.Hyper["vf_coef"].(float64)
	cfg.MaxGradNorm = ref.Hyper["max_grad_norm"].(float64)
	if edit != nil {
		edit(&cfg)
	}
	a, err := New(c.obs, c.act, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	setRefParams(t, a, c, ref.InitParams)
	for k, step := range ref.Steps {
		var mb minibatch
		if a.recurrent() {
			mb = refSequences(t, ref, step.Sequences, a.actSpace.FlatSize())
		} else {
			mb = refMinibatch(t, ref, step.Indices, a.actSpace.FlatSize())
		}
		got, err := a.update(mb)
		if err != nil {
			t.Fatalf("step %d: %v", k, err)
		}
		for _, q := range []struct {
			what      string
			got, want float64
		}{
			{"pg_loss", got.PolicyLoss, step.PgLoss},
			{"v_loss", got.ValueLoss, step.VLoss},
			{"entropy", got.Entropy, step.Entropy},
			{"loss", got.Loss, step.Loss},
			{"approx_kl", got.ApproxKL, step.ApproxKL},
			{"clipfrac", got.ClipFrac, step.ClipFrac},
			{"grad_norm", got.GradNorm, step.GradNorm},
		} {
			// 1e-5 relative, with an absolute floor for values near 0
			// (a float32 pass leaves ~1e-7 where float64 gives 1e-17).
			if d := math.Abs(q.got - q.want); d > 1e-5*math.Abs(q.want)+2e-6 {
				t.Errorf("step %d (epoch %d): %s = %.9g, want %.9g", k, step.Epoch, q.what, q.got, q.want)
			}
		}
		if k == 0 {
			if e, where := maxParamError(t, a, c, ref.AfterFirstStep); e > 5e-4 {
				t.Errorf("after the first step: %s off by %.3g relative", where, e)
			}
		}
	}
	if e, where := maxParamError(t, a, c, ref.FinalParams); e > 5e-4 {
		t.Errorf("final parameters: %s off by %.3g relative (tolerance 5e-4)", where, e)
	} else {
		t.Logf("final parameters within %.2g relative", e)
	}
}

// rows decodes a field of one row per sample ([][]float64 or []float64).
func rows(t *testing.T, raw json.RawMessage) [][]float64 {
	t.Helper()
	var m [][]float64
	if err := json.Unmarshal(raw, &m); err == nil {
		return m
	}
	var v []float64
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("reference field: %v", err)
	}
	m = make([][]float64, len(v))
	for i, x := range v {
		m[i] = []float64{x}
	}
	return m
}

// tensorField decodes a {"shape", "data"} field.
func tensorField(t *testing.T, raw json.RawMessage) refTensor {
	t.Helper()
	var rt refTensor
	if err := json.Unmarshal(raw, &rt); err != nil {
		t.Fatalf("reference tensor: %v", err)
	}
	return rt
}

func refMinibatch(t *testing.T, ref *ppoRef, idx []int, actWidth int) minibatch {
	obs, acts := rows(t, ref.Obs), rows(t, ref.Actions)
	logp, vals, adv, ret := rows(t, ref.OldLogprobs), rows(t, ref.OldValues), rows(t, ref.Advantages), rows(t, ref.Returns)
	mb := minibatch{rows: len(idx), steps: 1}
	for _, i := range idx {
		for _, x := range obs[i] {
			mb.obs = append(mb.obs, float32(x))
		}
		if len(acts[i]) != actWidth {
			t.Fatalf("reference action %v for width %d", acts[i], actWidth)
		}
		for _, x := range acts[i] {
			mb.actions = append(mb.actions, float32(x))
		}
		if ref.ActionMasks != nil {
			mb.masks = append(mb.masks, ref.ActionMasks[i]...)
		}
		mb.logp = append(mb.logp, float32(logp[i][0]))
		mb.values = append(mb.values, float32(vals[i][0]))
		mb.adv = append(mb.adv, float32(adv[i][0]))
		mb.ret = append(mb.ret, float32(ret[i][0]))
	}
	return mb
}

// refSequences builds the time-major minibatch of the reference's
// sequences seqs ([L, S] fields, padded steps with weight 0) with each
// sequence's initial state: actor h, c, then critic h, c.
func refSequences(t *testing.T, ref *ppoRef, seqs []int, actWidth int) minibatch {
	obs, acts := tensorField(t, ref.Obs), tensorField(t, ref.Actions)
	logp, vals := tensorField(t, ref.OldLogprobs), tensorField(t, ref.OldValues)
	adv, ret := tensorField(t, ref.Advantages), tensorField(t, ref.Returns)
	L, S, od := obs.Shape[0], obs.Shape[1], obs.Shape[2]
	h := ref.ActorH0.Shape[1]
	mb := minibatch{rows: L * len(seqs), steps: L}
	for tt := range L {
		for _, s := range seqs {
			i := tt*S + s
			for _, x := range obs.Data[i*od : (i+1)*od] {
				mb.obs = append(mb.obs, float32(x))
			}
			for _, x := range acts.Data[i*actWidth : (i+1)*actWidth] {
				mb.actions = append(mb.actions, float32(x))
			}
			mb.logp = append(mb.logp, float32(logp.Data[i]))
			mb.values = append(mb.values, float32(vals.Data[i]))
			mb.adv = append(mb.adv, float32(adv.Data[i]))
			mb.ret = append(mb.ret, float32(ret.Data[i]))
			mb.wts = append(mb.wts, float32(ref.Valid.Data[i]))
		}
	}
	for _, s := range seqs {
		// A GRU's files have no cell states: their c0 fields are empty.
		for _, st := range []refTensor{ref.ActorH0, ref.ActorC0, ref.CriticH0, ref.CriticC0} {
			if st.Data == nil {
				continue
			}
			for _, x := range st.Data[s*h : (s+1)*h] {
				mb.hidden = append(mb.hidden, float32(x))
			}
		}
	}
	return mb
}

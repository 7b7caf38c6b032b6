package agent

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
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
	Name           string               `json:"name"`
	ObsDim         int                  `json:"obs_dim"`
	Action         json.RawMessage      `json:"action"`
	Hyper          map[string]any       `json:"hyperparameters"`
	InitParams     map[string]refTensor `json:"init_params"`
	Obs            [][]float64          `json:"obs"`
	Actions        [][]float64          `json:"actions"`
	ActionMasks    [][]bool             `json:"action_masks"`
	OldLogprobs    []float64            `json:"old_logprobs"`
	OldValues      []float64            `json:"old_values"`
	Advantages     []float64            `json:"advantages"`
	Returns        []float64            `json:"returns"`
	Steps          []refStep            `json:"steps"`
	AfterFirstStep map[string]refTensor `json:"params_after_first_step"`
	FinalParams    map[string]refTensor `json:"final_params"`
	ActionKind     string               `json:"action_kind"`
}

type refStep struct {
	Epoch    int     `json:"epoch"`
	Indices  []int   `json:"indices"`
	PgLoss   float64 `json:"pg_loss"`
	VLoss    float64 `json:"v_loss"`
	Entropy  float64 `json:"entropy"`
	Loss     float64 `json:"loss"`
	ApproxKL float64 `json:"approx_kl"`
	ClipFrac float64 `json:"clipfrac"`
	GradNorm float64 `json:"grad_norm_before_clip"`
}

func loadPPORef(t *testing.T, name string) *ppoRef {
	t.Helper()
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

// refNet is the reference networks' shape: obs → 16 → 16 → out with tanh,
// which in our terms is a one-layer MLP encoder, a latent of 16 and a head
// without hidden layers.
func refNet() netconf.Spec {
	return netconf.Spec{
		Encoder: netconf.EncoderMLP,
		MLP:     &netconf.MLP{Hidden: []int{16}, Activation: netconf.Tanh, MinLayers: 1, MaxLayers: 3, MinNodes: 8, MaxNodes: 64},
		Latent:  netconf.Latent{Size: 16, Min: 8, Max: 64},
		Head:    netconf.MLP{Activation: netconf.Tanh, MinLayers: 0, MaxLayers: 3, MinNodes: 8, MaxNodes: 64},
	}
}

// refTensorNames maps PyTorch's layer index to our tensor prefix.
var refLayers = map[string]string{"0": "encoder.mlp.0", "1": "latent", "2": "out"}

// setRefParams copies the reference's PyTorch parameters (weights [out, in])
// into the agent (weights [in, out]).
func setRefParams(t *testing.T, a *PPO, ref map[string]refTensor) {
	for _, net := range []string{"actor", "critic"} {
		params := a.actor
		if net == "critic" {
			params = a.critic
		}
		for layer, prefix := range refLayers {
			w, b := ref[net+"."+layer+".weight"], ref[net+"."+layer+".bias"]
			pw, pb := params.Tensor(prefix+".weight"), params.Tensor(prefix+".bias")
			out, in := w.Shape[0], w.Shape[1]
			if pw == nil || pw.Shape[0] != in || pw.Shape[1] != out {
				t.Fatalf("%s.%s: our tensor %v does not fit PyTorch's %v", net, layer, pw, w.Shape)
			}
			for o := range out {
				for i := range in {
					pw.Data[i*out+o] = float32(w.Data[o*in+i])
				}
			}
			for i, v := range b.Data {
				pb.Data[i] = float32(v)
			}
		}
	}
	if ls, ok := ref["actor.log_std"]; ok {
		for i, v := range ls.Data {
			a.logStd[i] = float32(v)
		}
	}
}

// maxParamError returns the largest |ours − ref| / (|ref| + 1e-3).
func maxParamError(a *PPO, ref map[string]refTensor) (float64, string) {
	worst, where := 0.0, ""
	check := func(name string, got float32, want float64) {
		if e := math.Abs(float64(got)-want) / (math.Abs(want) + 1e-3); e > worst || math.IsNaN(e) {
			worst, where = e, name
		}
	}
	for _, net := range []string{"actor", "critic"} {
		params := a.actor
		if net == "critic" {
			params = a.critic
		}
		for layer, prefix := range refLayers {
			w, b := ref[net+"."+layer+".weight"], ref[net+"."+layer+".bias"]
			pw, pb := params.Tensor(prefix+".weight"), params.Tensor(prefix+".bias")
			out, in := w.Shape[0], w.Shape[1]
			for o := range out {
				for i := range in {
					check(net+"."+layer+".weight", pw.Data[i*out+o], w.Data[o*in+i])
				}
			}
			for i, v := range b.Data {
				check(net+"."+layer+".bias", pb.Data[i], v)
			}
		}
	}
	if ls, ok := ref["actor.log_std"]; ok {
		for i, v := range ls.Data {
			check("actor.log_std", a.logStd[i], v)
		}
	}
	return worst, where
}

// TestUpdateReplaysPyTorchReferences runs every minibatch of each reference
// PPO update through our update and compares losses, entropy, approximate
// KL, clip fraction, gradient norm and the parameters after the first and
// the last step to the data README's tolerances.
func TestUpdateReplaysPyTorchReferences(t *testing.T) {
	cases := []struct {
		name  string
		space envs.Space
	}{
		{"discrete", envs.Discrete{N: 3}},
		{"discrete_clip", envs.Discrete{N: 3}},
		{"discrete_masked", envs.Discrete{N: 5}},
		{"discrete_masked_clip", envs.Discrete{N: 5}},
		{"multidiscrete", envs.MultiDiscrete{Nvec: []int{3, 2}}},
		{"multidiscrete_clip", envs.MultiDiscrete{Nvec: []int{3, 2}}},
		{"continuous", envs.NewBox(-1, 1, 2)},
		{"continuous_clip", envs.NewBox(-1, 1, 2)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ref := loadPPORef(t, c.name)
			cfg := DefaultConfig()
			cfg.Net = refNet()
			cfg.LR = ref.Hyper["lr"].(float64)
			cfg.ClipCoef = ref.Hyper["clip_coef"].(float64)
			cfg.EntCoef = ref.Hyper["ent_coef"].(float64)
			cfg.VFCoef = ref.Hyper["vf_coef"].(float64)
			cfg.MaxGradNorm = ref.Hyper["max_grad_norm"].(float64)
			a, err := New(envs.NewBox(float32(math.Inf(-1)), float32(math.Inf(1)), ref.ObsDim), c.space, cfg, 1)
			if err != nil {
				t.Fatal(err)
			}
			setRefParams(t, a, ref.InitParams)
			for k, step := range ref.Steps {
				mb := refMinibatch(ref, step.Indices, a.actSpace.FlatSize())
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
					if e, where := maxParamError(a, ref.AfterFirstStep); e > 5e-4 {
						t.Errorf("after the first step: %s off by %.3g relative", where, e)
					}
				}
			}
			if e, where := maxParamError(a, ref.FinalParams); e > 5e-4 {
				t.Errorf("final parameters: %s off by %.3g relative (tolerance 5e-4)", where, e)
			} else {
				t.Logf("final parameters within %.2g relative", e)
			}
		})
	}
}

func refMinibatch(ref *ppoRef, idx []int, actWidth int) minibatch {
	mb := minibatch{rows: len(idx), steps: 1}
	for _, i := range idx {
		for _, x := range ref.Obs[i] {
			mb.obs = append(mb.obs, float32(x))
		}
		for _, x := range ref.Actions[i] {
			mb.actions = append(mb.actions, float32(x))
		}
		if len(ref.Actions[i]) != actWidth {
			panic(fmt.Sprintf("reference action %v for width %d", ref.Actions[i], actWidth))
		}
		if ref.ActionMasks != nil {
			mb.masks = append(mb.masks, ref.ActionMasks[i]...)
		}
		mb.logp = append(mb.logp, float32(ref.OldLogprobs[i]))
		mb.values = append(mb.values, float32(ref.OldValues[i]))
		mb.adv = append(mb.adv, float32(ref.Advantages[i]))
		mb.ret = append(mb.ret, float32(ref.Returns[i]))
	}
	return mb
}

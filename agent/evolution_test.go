package agent

import (
	"math"
	"strings"
	"testing"

	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/netconf"
)

func TestWeightMatricesAreViews(t *testing.T) {
	cfg := probeConfig(netconf.EncoderMLP)
	cfg.Net.MLP.LayerNorm = true
	a, err := New(envs.NewBox(-1, 1, 3), envs.NewBox(-1, 1, 2), cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	ws := a.WeightMatrices()
	var names []string
	for _, w := range ws {
		names = append(names, w.Name)
		if strings.Contains(w.Name, "bias") || strings.Contains(w.Name, "norm") {
			t.Errorf("%s is not a weight matrix", w.Name)
		}
	}
	want := "actor.encoder.mlp.0.weight actor.latent.weight actor.head.0.weight actor.out.weight critic.encoder.mlp.0.weight critic.latent.weight critic.head.0.weight critic.out.weight"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("weight matrices %s, want %s", got, want)
	}
	ws[0].Data[0] = 42
	if a.actor.Tensor("encoder.mlp.0.weight").Data[0] != 42 {
		t.Fatal("WeightMatrices returned a copy, not a view")
	}
}

func TestSetConfigChangesHyperparametersOnly(t *testing.T) {
	a, _ := New(envs.NewBox(-1, 1, 3), envs.Discrete{N: 2}, probeConfig(netconf.EncoderMLP), 1)
	cfg := a.Config()
	cfg.LR, cfg.BatchSize = 1e-2, 32
	cfg.Net.MLP = &netconf.MLP{Hidden: []int{999}}
	if err := a.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if a.Config().LR != 1e-2 || a.adam.LR != 1e-2 || a.Config().BatchSize != 32 {
		t.Fatalf("config %+v, adam lr %v", a.Config(), a.adam.LR)
	}
	if a.Config().Net.MLP.Hidden[0] == 999 {
		t.Fatal("SetConfig changed the architecture")
	}
	cfg.LR = -1
	if err := a.SetConfig(cfg); err == nil || a.Config().LR != 1e-2 {
		t.Fatalf("negative lr: %v, lr now %v", err, a.Config().LR)
	}
}

func TestCheckFiniteNamesTheTensor(t *testing.T) {
	a, _ := New(envs.NewBox(-1, 1, 3), envs.Discrete{N: 2}, probeConfig(netconf.EncoderMLP), 1)
	if err := a.CheckFinite(); err != nil {
		t.Fatal(err)
	}
	a.critic.Tensor("out.bias").Data[0] = float32(math.NaN())
	if err := a.CheckFinite(); err == nil || !strings.Contains(err.Error(), "critic.out.bias") {
		t.Fatalf("CheckFinite: %v, want an error naming critic.out.bias", err)
	}
}

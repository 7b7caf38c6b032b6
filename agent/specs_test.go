package agent

import (
	"encoding/json"
	"testing"

	"github.com/evolverl/evolve/envs"
)

// TestDeriveSpecsIsTheAgents: the specs DeriveSpecs gives for a config and
// spaces are the ones the agent built from them has, for every kind of
// observation and action, and logStd is the Gaussian's log-std size.
func TestDeriveSpecsIsTheAgents(t *testing.T) {
	for _, ta := range testAgents(t, smallNet) {
		a := ta.build(t, 1)
		cfg := DefaultConfig()
		ta.cfg(&cfg)
		actor, critic, logStd, err := DeriveSpecs(ta.obs, ta.act, cfg.Net)
		if err != nil {
			t.Fatalf("%s: %v", ta.name, err)
		}
		wantActor, wantCritic := a.Specs()
		for _, c := range []struct {
			what      string
			got, want any
		}{{"actor", actor, wantActor}, {"critic", critic, wantCritic}} {
			g, _ := json.Marshal(c.got)
			w, _ := json.Marshal(c.want)
			if string(g) != string(w) {
				t.Errorf("%s: %s spec %s, the agent's %s", ta.name, c.what, g, w)
			}
		}
		if a.cfg.UseSDE {
			logStd *= actor.FeatureWidth()
		}
		if _, box := ta.act.(envs.Box); (logStd != 0) != box || logStd != len(a.logStd) {
			t.Errorf("%s: logStd %d, the agent has %d", ta.name, logStd, len(a.logStd))
		}
	}
	if _, _, _, err := DeriveSpecs(envs.NewBox(0, 1, 2, 2), envs.Discrete{N: 2}, DefaultConfig().Net); err == nil {
		t.Error("an MLP on 2-D observations was derived")
	}
}

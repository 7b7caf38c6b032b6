package cli

import (
	"testing"

	"github.com/evolverl/evolve/evo"
)

// TestSlotNameAfterSelection: with tournament selection and elitism, the
// legend names slot 0 the elite's only when a selection has put the elite
// there, in a generation after the first; in a run of one generation slot
// 0 is a slot like the others.
func TestSlotNameAfterSelection(t *testing.T) {
	gens := func(gs ...int) *slotTable {
		m := &evo.Metrics{}
		for _, g := range gs {
			for a := range 2 {
				m.Rows = append(m.Rows, evo.MetricsRow{Generation: g, Agent: 2*g + a, Parent: -1, TotalSteps: float64(100 * g)})
			}
		}
		return newSlotTable(m)
	}
	mutated := runConfig{eliteSlot: true, eliteMutated: true}
	kept := runConfig{eliteSlot: true}
	for _, tc := range []struct {
		name  string
		t     *slotTable
		rc    runConfig
		slot0 string
	}{
		{"one generation", gens(1), mutated, "slot 0"},
		{"one generation, elite kept", gens(1), kept, "slot 0"},
		{"two generations", gens(1, 2), mutated, "slot 0 (the elite, mutated)"},
		{"two generations, elite kept", gens(1, 2), kept, "slot 0 (elite kept)"},
		{"a later generation alone", gens(5), mutated, "slot 0 (the elite, mutated)"},
		{"PBT", gens(1, 2), runConfig{}, "slot 0"},
	} {
		if got := slotName(0, tc.rc, tc.t.selected()); got != tc.slot0 {
			t.Errorf("%s: slot 0 is %q, want %q", tc.name, got, tc.slot0)
		}
		if got := slotName(1, tc.rc, tc.t.selected()); got != "slot 1" {
			t.Errorf("%s: slot 1 is %q", tc.name, got)
		}
	}
}

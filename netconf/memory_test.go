package netconf

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestMemorySwitch: memory.switch is offered only to a recurrent network listing more than
// one model; it changes the encoder to another listed model with the same sizes and bounds,
// keeps everything else, and alternates between the two models of a two-model list; the
// weights Transfer gives the switched spec keep the latent, head and output layers and are
// new for the memory.
func TestMemorySwitch(t *testing.T) {
	s := transferSpec(EncoderLSTM, Tanh)
	has := func(s Spec) bool {
		return slices.ContainsFunc(MutationsFor(s), func(m Mutation) bool { return m.Name == "memory.switch" })
	}
	if has(s) {
		t.Fatal("memory.switch offered without a memory list")
	}
	s.Memories = []EncoderKind{EncoderLSTM}
	if has(s) {
		t.Fatal("memory.switch offered with a single model")
	}
	s.Memories = []EncoderKind{EncoderLSTM, EncoderGRU}
	if !has(s) {
		t.Fatal("memory.switch not offered for lstm and gru")
	}
	m, _ := LookupMutation("memory.switch")
	rng := rand.New(rand.NewPCG(3, 4))
	p0, err := Init(s, rng)
	if err != nil {
		t.Fatal(err)
	}
	sizes := *s.LSTM
	cur := s
	for i, want := range []EncoderKind{EncoderGRU, EncoderLSTM, EncoderGRU} {
		next, desc, changed := m.Apply(cur, rng)
		if !changed || next.Encoder != want || desc != "memory.switch: "+string(cur.Encoder)+" -> "+string(want) {
			t.Fatalf("switch %d from %s: %q, changed %v, encoder %s; want %s", i, cur.Encoder, desc, changed, next.Encoder, want)
		}
		if *next.Memory() != sizes || (want == EncoderGRU) != (next.LSTM == nil) || (want == EncoderGRU) != (next.GRU != nil) {
			t.Fatalf("switch %d: sizes %+v, LSTM %v, GRU %v; want %+v in the %s table only", i, *next.Memory(), next.LSTM, next.GRU, sizes, want)
		}
		if next.Latent != cur.Latent || !slices.Equal(next.Head.Hidden, cur.Head.Hidden) || !slices.Equal(next.Memories, s.Memories) {
			t.Fatalf("switch %d changed more than the memory: %s -> %s", i, cur, next)
		}
		cur = next
	}
	p1, err := Transfer(p0, cur, rng)
	if err != nil {
		t.Fatal(err)
	}
	for _, tn := range p1 {
		old := p0.Tensor(tn.Name)
		memory := strings.HasPrefix(tn.Name, "encoder.")
		if memory != (old == nil) || !memory && !slices.Equal(old.Data, tn.Data) {
			t.Errorf("%s: kept %v, want the memory new and the rest kept", tn.Name, old != nil)
		}
	}
}

// TestMemoriesValidate: a memory list holds recurrent kinds, each once, the encoder among them.
func TestMemoriesValidate(t *testing.T) {
	for _, c := range []struct {
		name     string
		encoder  EncoderKind
		memories []EncoderKind
		errHas   string
	}{
		{"unknown model", EncoderLSTM, []EncoderKind{EncoderLSTM, "transformer"}, `memory: "transformer" is not a memory model: want "lstm" or "gru"`},
		{"not a memory", EncoderLSTM, []EncoderKind{EncoderLSTM, EncoderMLP}, `memory: "mlp" is not a memory model`},
		{"twice", EncoderGRU, []EncoderKind{EncoderGRU, EncoderGRU}, `memory: "gru" is listed twice`},
		{"without the encoder", EncoderGRU, []EncoderKind{EncoderLSTM}, `does not list the encoder "gru"`},
		{"an mlp with a list", EncoderMLP, []EncoderKind{EncoderLSTM, EncoderGRU}, `does not list the encoder "mlp"`},
		{"valid", EncoderGRU, []EncoderKind{EncoderLSTM, EncoderGRU}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := validSpec(c.encoder)
			s.Memories = c.memories
			err := s.Validate()
			if c.errHas == "" && err != nil || c.errHas != "" && (err == nil || !strings.Contains(err.Error(), c.errHas)) {
				t.Fatalf("Validate() = %v, want an error containing %q", err, c.errHas)
			}
		})
	}
	if _, err := validSpec(EncoderMLP).WithMemory(EncoderGRU); err == nil {
		t.Fatal("WithMemory of an MLP network: no error")
	}
}

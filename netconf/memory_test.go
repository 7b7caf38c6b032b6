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

// TestMemorySwitchWithATransformer: a network listing all three models switches between
// them keeping each model's sizes: the LSTM's and GRU's shared ones, the Transformer's
// table; the layout is the active model's alone.
func TestMemorySwitchWithATransformer(t *testing.T) {
	s := transferSpec(EncoderGRU, Tanh)
	s.Transformer = &Transformer{Layers: 1, Heads: 2, Width: 8, MLP: 16, Context: 4, MinLayers: 1, MaxLayers: 2,
		MinWidth: 4, MaxWidth: 16, MinContext: 2, MaxContext: 8}
	s.Memories = []EncoderKind{EncoderGRU, EncoderTransformer, EncoderLSTM}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	tr, err := s.WithMemory(EncoderTransformer)
	if err != nil || tr.Encoder != EncoderTransformer || tr.Validate() != nil || *tr.GRU != *s.GRU {
		t.Fatalf("to the transformer: %v, %v (GRU sizes %+v kept?)", tr, err, tr.GRU)
	}
	names, _ := Layout(tr)
	for _, n := range names {
		if strings.HasPrefix(n.Name, "encoder.") && !strings.HasPrefix(n.Name, "encoder.transformer.") {
			t.Fatalf("the transformer's layout holds %s", n.Name)
		}
	}
	back, err := tr.WithMemory(EncoderLSTM)
	if err != nil || back.Encoder != EncoderLSTM || *back.LSTM != *s.GRU || back.GRU != nil || *back.Transformer != *s.Transformer {
		t.Fatalf("back to an LSTM: %v, %v", back, err)
	}
	m, _ := LookupMutation("memory.switch")
	seen := map[EncoderKind]bool{}
	rng := rand.New(rand.NewPCG(1, 1))
	for cur := s; len(seen) < 3; {
		next, _, changed := m.Apply(cur, rng)
		if !changed || next.Encoder == cur.Encoder || next.Validate() != nil {
			t.Fatalf("switch from %s: %s, changed %v", cur.Encoder, next.Encoder, changed)
		}
		seen[next.Encoder] = true
		cur = next
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
		{"unknown model", EncoderLSTM, []EncoderKind{EncoderLSTM, "gpt"}, `memory: "gpt" is not a memory model: want "lstm", "gru" or "transformer"`},
		{"a transformer without its table", EncoderLSTM, []EncoderKind{EncoderLSTM, EncoderTransformer}, "lists the transformer, but the [transformer] table is missing"},
		{"not a memory", EncoderLSTM, []EncoderKind{EncoderLSTM, EncoderMLP}, `memory: "mlp" is not a memory model`},
		{"twice", EncoderGRU, []EncoderKind{EncoderGRU, EncoderGRU}, `memory: "gru" is listed twice`},
		{"without the encoder", EncoderGRU, []EncoderKind{EncoderLSTM}, `does not list the encoder "gru"`},
		{"an mlp with a list", EncoderMLP, []EncoderKind{EncoderLSTM, EncoderGRU}, `["lstm", "gru"] with encoder "mlp": a memory gene needs`},
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

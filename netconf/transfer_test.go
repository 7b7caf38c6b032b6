package netconf

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// transferSpec is a mid-sized network with room to grow in every direction.
func transferSpec(kind EncoderKind, act Activation) Spec {
	s := Spec{Encoder: kind, Latent: Latent{Size: 12, Min: 4, Max: 64},
		Head:   MLP{Hidden: []int{16}, Activation: act, MinLayers: 1, MaxLayers: 3, MinNodes: 4, MaxNodes: 64},
		Output: 3, OutputGain: ValueGain}
	switch kind {
	case EncoderMLP:
		s.MLP = &MLP{Hidden: []int{16, 12}, Activation: act, MinLayers: 1, MaxLayers: 3, MinNodes: 4, MaxNodes: 64}
		s.Input = []int{6}
	case EncoderCNN:
		s.CNN = &CNN{Channels: []int{4, 6}, Kernels: []int{3, 3}, Strides: []int{2, 1}, Activation: act,
			MinLayers: 1, MaxLayers: 4, MinChannels: 2, MaxChannels: 32}
		s.Input = []int{2, 11, 10}
	case EncoderLSTM:
		s.LSTM = &LSTM{Hidden: 8, Layers: 2, MinHidden: 4, MaxHidden: 64, MinLayers: 1, MaxLayers: 3}
		s.Input = []int{5}
	case EncoderGRU:
		s.GRU = &GRU{Hidden: 8, Layers: 2, MinHidden: 4, MaxHidden: 64, MinLayers: 1, MaxLayers: 3}
		s.Input = []int{5}
	case EncoderTransformer:
		s.Transformer = &Transformer{Layers: 1, Heads: 2, Width: 8, MLP: 16, Context: 4, MinLayers: 1, MaxLayers: 3,
			MinWidth: 4, MaxWidth: 32, MinContext: 2, MaxContext: 8}
		s.Input = []int{5}
	case EncoderDict: // a flat key and an image key; MLP is the configured template
		s.Encoder = EncoderMLP
		mlp := MLP{Hidden: []int{16, 12}, Activation: act, MinLayers: 1, MaxLayers: 3, MinNodes: 4, MaxNodes: 64}
		s.MLP = &mlp
		m := mlp.clone()
		s.Inputs = []KeyInput{
			{Key: "pos", Encoder: EncoderMLP, MLP: &m, Input: []int{6}},
			{Key: "img", Encoder: EncoderCNN, CNN: &CNN{Channels: []int{4, 6}, Kernels: []int{3, 3}, Strides: []int{2, 1},
				Activation: act, MinLayers: 1, MaxLayers: 4, MinChannels: 2, MaxChannels: 32}, Input: []int{2, 11, 10}},
		}
		s.Input = []int{6 + 2*11*10}
	}
	return s
}

func TestTransferKeepsOverlapAndZeroesNewInputs(t *testing.T) {
	s0 := transferSpec(EncoderMLP, ReLU)
	rng := rand.New(rand.NewPCG(3, 3))
	p0, _ := Init(s0, rng)
	s1 := s0.Clone()
	s1.MLP.Hidden = []int{24, 8} // layer 0 grows, layer 1 shrinks
	p1, err := Transfer(p0, s1, rng)
	if err != nil {
		t.Fatal(err)
	}
	w0, w1 := p0.Tensor("encoder.mlp.1.weight"), p1.Tensor("encoder.mlp.1.weight") // [16,12] -> [24,8]
	for i := range 24 {
		for j := range 8 {
			got := w1.Data[i*8+j]
			switch {
			case i < 16 && got != w0.Data[i*12+j]:
				t.Fatalf("w[%d][%d] = %v, want the old %v", i, j, got, w0.Data[i*12+j])
			case i >= 16 && got != 0:
				t.Fatalf("w[%d][%d] = %v: weights from the new units of layer 0 must start at 0", i, j, got)
			}
		}
	}
	// New units of layer 0 get a fresh, non-zero incoming init.
	in := p1.Tensor("encoder.mlp.0.weight") // [6, 24]
	nonzero := 0
	for i := range 6 {
		for j := 16; j < 24; j++ {
			if in.Data[i*24+j] != 0 {
				nonzero++
			}
		}
	}
	if nonzero == 0 {
		t.Fatal("new units of layer 0 have all-zero incoming weights")
	}
}

func TestTransferMovesLSTMWeightsGateByGate(t *testing.T) {
	s0 := transferSpec(EncoderLSTM, ReLU)
	rng := rand.New(rand.NewPCG(4, 4))
	p0, _ := Init(s0, rng)
	s1 := s0.Clone()
	s1.LSTM.Hidden = 12
	p1, err := Transfer(p0, s1, rng)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"i", "f", "g", "o"} {
		name := "encoder.lstm.1.w_hh." + q
		o, n := p0.Tensor(name), p1.Tensor(name) // [8,8] -> [12,12]
		for i := range 12 {
			for j := range 12 {
				got := n.Data[i*12+j]
				switch {
				case i < 8 && j < 8 && got != o.Data[i*8+j]:
					t.Fatalf("%s[%d][%d] = %v, want the same gate's old %v", name, i, j, got, o.Data[i*8+j])
				case i >= 8 && j < 8 && got != 0:
					t.Fatalf("%s[%d][%d] = %v: new units' recurrent weights to old units must be 0", name, i, j, got)
				}
			}
		}
	}
}

func TestTransferCentresConvKernels(t *testing.T) {
	s0 := transferSpec(EncoderCNN, ReLU)
	s0.CNN.Kernels = []int{3, 1}
	rng := rand.New(rand.NewPCG(5, 5))
	p0, _ := Init(s0, rng)
	s1 := s0.Clone()
	s1.CNN.Kernels = []int{1, 3}
	p1, err := Transfer(p0, s1, rng)
	if err != nil {
		t.Fatal(err)
	}
	// layer 0: 3×3 → 1×1 keeps the centre tap
	o, n := p0.Tensor("encoder.cnn.0.weight"), p1.Tensor("encoder.cnn.0.weight") // [4,2,3,3] -> [4,2,1,1]
	for oi := range 4 {
		for ii := range 2 {
			if got, want := n.Data[oi*2+ii], o.Data[((oi*2+ii)*3+1)*3+1]; got != want {
				t.Fatalf("shrunk kernel [%d][%d] = %v, want the old centre %v", oi, ii, got, want)
			}
		}
	}
	// layer 1: 1×1 → 3×3 puts the old tap in the centre, zeros around it
	o, n = p0.Tensor("encoder.cnn.1.weight"), p1.Tensor("encoder.cnn.1.weight") // [6,4,1,1] -> [6,4,3,3]
	for k := range 6 * 4 {
		for tap := range 9 {
			got := n.Data[k*9+tap]
			if want := map[bool]float32{true: o.Data[k], false: 0}[tap == 4]; got != want {
				t.Fatalf("grown kernel %d tap %d = %v, want %v", k, tap, got, want)
			}
		}
	}
}

func TestResizeKeepsOverlapAndZeroFills(t *testing.T) {
	s0 := transferSpec(EncoderLSTM, ReLU)
	rng := rand.New(rand.NewPCG(6, 6))
	m0, _ := Init(s0, rng)
	randomise(m0, rng)
	s1 := s0.Clone()
	s1.LSTM.Hidden, s1.Latent.Size = 10, 8
	m1, err := Resize(m0, s1)
	if err != nil {
		t.Fatal(err)
	}
	o, n := m0.Tensor("latent.weight"), m1.Tensor("latent.weight") // [8,12] -> [10,8]
	for i := range 10 {
		for j := range 8 {
			want := float32(0)
			if i < 8 {
				want = o.Data[i*12+j]
			}
			if got := n.Data[i*8+j]; got != want {
				t.Fatalf("resized latent.weight[%d][%d] = %v, want %v", i, j, got, want)
			}
		}
	}
	for _, b := range m1.Tensor("encoder.lstm.0.b_ih.f").Data[8:] {
		if b != 0 {
			t.Fatalf("new moment entry %v, want 0", b)
		}
	}
}

func TestTransferIsReproducible(t *testing.T) {
	s0 := transferSpec(EncoderCNN, ReLU)
	p0, _ := Init(s0, rand.New(rand.NewPCG(1, 1)))
	s1 := s0.Clone()
	s1.CNN.Channels = []int{12, 6, 6}
	s1.CNN.Kernels = []int{3, 3, 1}
	s1.CNN.Strides = []int{2, 1, 1}
	a, err := Transfer(p0, s1, rand.New(rand.NewPCG(9, 9)))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Transfer(p0, s1, rand.New(rand.NewPCG(9, 9)))
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different transfer")
	}
}

func TestTransferRejectsInconsistentParams(t *testing.T) {
	s := transferSpec(EncoderMLP, ReLU)
	p, _ := Init(s, rand.New(rand.NewPCG(1, 1)))
	p.Tensor("head.0.bias").Data = p.Tensor("head.0.bias").Data[:3]
	if _, err := Transfer(p, s, rand.New(rand.NewPCG(1, 1))); err == nil || !strings.Contains(err.Error(), `param "head.0.bias": shape [16] holds 16 values, data has 3`) {
		t.Fatalf("Transfer error %v", err)
	}
}

func TestCopyOverlap(t *testing.T) {
	cases := []struct {
		name     string
		dst      []float32
		dstShape []int
		src      []float32
		srcShape []int
		want     []float32
	}{
		{"grow a matrix", make([]float32, 6), []int{2, 3}, []float32{1, 2, 3, 4}, []int{2, 2}, []float32{1, 2, 0, 3, 4, 0}},
		{"shrink a matrix", make([]float32, 2), []int{1, 2}, []float32{1, 2, 3, 4, 5, 6}, []int{2, 3}, []float32{1, 2}},
		{"mixed 3-d", make([]float32, 8), []int{2, 2, 2}, []float32{1, 2, 3, 4, 5, 6}, []int{1, 3, 2}, []float32{1, 2, 3, 4, 0, 0, 0, 0}},
		{"vector", []float32{9, 9, 9}, []int{3}, []float32{1}, []int{1}, []float32{1, 9, 9}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			CopyOverlap(c.dst, c.dstShape, c.src, c.srcShape)
			if !reflect.DeepEqual(c.dst, c.want) {
				t.Fatalf("got %v, want %v", c.dst, c.want)
			}
		})
	}
}

// TestTransferKeepsPositionsByDistanceBack: a Transformer's position rows are
// a window ending at the current step (row context−1), so a context that
// grows or shrinks keeps each row for the same distance back — for the
// weights (Transfer) and for state kept per weight (Resize) — and a row
// further back than the old window had starts at zero.
func TestTransferKeepsPositionsByDistanceBack(t *testing.T) {
	s0 := transferSpec(EncoderTransformer, ReLU) // context 4, width 8
	rng := rand.New(rand.NewPCG(8, 8))
	p0, _ := Init(s0, rng)
	randomise(p0, rng)
	const name, D = "encoder.transformer.pos", 8
	for _, k := range []int{8, 2} {
		s1 := s0.Clone()
		s1.Transformer.Context = k
		moved, err := Transfer(p0, s1, rng)
		if err != nil {
			t.Fatal(err)
		}
		resized, err := Resize(p0, s1)
		if err != nil {
			t.Fatal(err)
		}
		o := p0.Tensor(name).Data
		for _, got := range [][]float32{moved.Tensor(name).Data, resized.Tensor(name).Data} {
			for back := range k { // row k−1−back is the step back steps before the current one
				for j := range D {
					want := float32(0)
					if back < 4 {
						want = o[(4-1-back)*D+j]
					}
					if g := got[(k-1-back)*D+j]; g != want {
						t.Fatalf("context 4 -> %d: position %d back [%d] = %v, want %v", k, back, j, g, want)
					}
				}
			}
		}
	}
}

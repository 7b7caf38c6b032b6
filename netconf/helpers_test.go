package netconf

import "math/rand/v2"

// smallSpec is a small network of the given encoder kind (EncoderDict: an image key between
// two flat keys, one of a single feature). The reference network backend's tests use the
// same networks.
func smallSpec(kind EncoderKind, act Activation, norm bool) Spec {
	s := Spec{Encoder: kind, Latent: Latent{Size: 3, Min: 1, Max: 8},
		Head:   MLP{Hidden: []int{4}, Activation: act, LayerNorm: norm, MinLayers: 1, MaxLayers: 3, MinNodes: 1, MaxNodes: 8},
		Output: 2, OutputGain: 1}
	switch kind {
	case EncoderMLP:
		s.MLP = &MLP{Hidden: []int{5, 4}, Activation: act, LayerNorm: norm, MinLayers: 1, MaxLayers: 3, MinNodes: 1, MaxNodes: 8}
		s.Input = []int{3}
	case EncoderCNN:
		s.CNN = &CNN{Channels: []int{2, 3}, Kernels: []int{3, 2}, Strides: []int{2, 1}, Activation: act,
			MinLayers: 1, MaxLayers: 3, MinChannels: 1, MaxChannels: 8}
		s.Input = []int{2, 7, 6}
	case EncoderLSTM:
		s.LSTM = &LSTM{Hidden: 3, Layers: 2, MinHidden: 1, MaxHidden: 8, MinLayers: 1, MaxLayers: 3}
		s.Input = []int{3}
	case EncoderGRU:
		s.GRU = &GRU{Hidden: 3, Layers: 2, MinHidden: 1, MaxHidden: 8, MinLayers: 1, MaxLayers: 3}
		s.Input = []int{3}
	case EncoderTransformer:
		s.Transformer = &Transformer{Layers: 2, Heads: 2, Width: 4, MLP: 6, Context: 3, MinLayers: 1, MaxLayers: 3,
			MinWidth: 2, MaxWidth: 8, MinContext: 2, MaxContext: 6}
		s.Input = []int{3}
	case EncoderDict:
		s.Encoder = EncoderMLP
		s.MLP = &MLP{Hidden: []int{5, 4}, Activation: act, LayerNorm: norm, MinLayers: 1, MaxLayers: 3, MinNodes: 1, MaxNodes: 8}
		m1, m2 := s.MLP.clone(), s.MLP.clone()
		m2.Hidden = []int{2}
		s.Inputs = []KeyInput{
			{Key: "pos", Encoder: EncoderMLP, MLP: &m1, Input: []int{3}},
			{Key: "img", Encoder: EncoderCNN, CNN: &CNN{Channels: []int{2}, Kernels: []int{3}, Strides: []int{2}, Activation: act,
				MinLayers: 1, MaxLayers: 3, MinChannels: 1, MaxChannels: 8}, Input: []int{2, 5, 5}},
			{Key: "flag", Encoder: EncoderMLP, MLP: &m2, Input: []int{1}},
		}
		s.Input = []int{3 + 50 + 1}
	}
	return s
}

// randomise gives every tensor (biases and norms included) random values.
func randomise(p Params, rng *rand.Rand) {
	for _, t := range p {
		for i := range t.Data {
			t.Data[i] = float32(rng.NormFloat64() * 0.7)
		}
	}
}

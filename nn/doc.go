// Package nn is the numeric core of the agents' networks: plain Go over float32 slices,
// with the products and tanh in the AVX2/FMA kernels of internal/simd.
//
// Layers come in pairs of Forward and Backward over caller-owned buffers, shapes in their
// doc comments, no allocation per call once sized: Linear (mlp.go) with LayerNorm
// (layernorm.go) and the seven activations (activation.go), Conv2d (conv.go: NCHW, square kernels, stride, no padding, by
// im2col), one layer of a stacked LSTM (lstm.go) or GRU (gru.go): PyTorch's equations
// and gate order, state zeroed at episode starts, backpropagation through time over padded
// sequences from stored initial states; and one pre-LayerNorm Transformer encoder layer
// (attention.go: causal multi-head self-attention over windows of the last K steps, cut at
// episode starts, then the MLP, each with its residual). Each is checked by finite differences and against
// the PyTorch references in shared/testdata/nets (the GRU's in testdata, by gen_gru.py).
//
// Net (net.go) assembles the network of a netconf.Spec: encoder (encoder.go) — an MLP, a
// CNN, an LSTM, a GRU, a Transformer (transformer_encoder.go: its state per sequence is
// the window of inputs before the step), or for Dict observations one MLP or CNN per key with its own latent layer,
// concatenated — → latent → head → output layer, reading the weights from netconf.Params in place and
// adding gradients into a Params laid out alike. It splits at the latent so that a critic
// head can share the actor's encoder. binding.go maps a part's tensor names to the
// Params it reads, once per Params.
//
// Model and Backend (backend.go) are the seam between the PPO loss in package agent and
// whatever computes the networks: a Model maps observations (or time-major sequences with
// their initial recurrent state) to the actor's output and the values, and maps gradients
// of those back to parameter gradients. The plain-Go backend, "go", is built in;
// nn/gorgonia registers the gorgonia reference backend, "gorgonia", when imported.
//
// A row's results never depend on the batch around it (every sum has a fixed order), so an
// agent that acts on N rows and later trains on a minibatch computes the same
// log-probabilities, and PPO's first ratio is exactly 1.
package nn

// Package netconf describes evolvable networks as plain data: specs, their mutations, the
// layout of their weights (tensor names, shapes and roles), initialisation and weight
// transfer. It does no network maths: the network backends of package nn (its plain-Go
// core, and the reference backend of autodiff graphs beside it) compute the networks it
// describes, each reading the layout and weights from here.
//
// A network is encoder → latent → head → output layer:
//
//	input ─┬─ MLP:  Linear → [LayerNorm] → act, per hidden layer       ─┐
//	       ├─ CNN:  Conv2d (NCHW, no padding) → act, per layer, flatten ├─ latent: Linear → act
//	       ├─ LSTM: stacked, PyTorch gates i f g o                      │        │
//	       ├─ GRU:  stacked, PyTorch gates r z n                        │        │
//	       └─ Transformer: embedding, learned positions, pre-LN causal ─┘        │
//	          blocks over the last context steps, final LayerNorm                │
//	                                                                   head (MLP) → out: Linear
//
// A network for Dict observations (Spec.Inputs) has one MLP or CNN encoder and one latent
// layer per key, each reading its key's columns of the flat observation; the latents are
// concatenated (key order) and fed to the head.
//
// Data flows through the package in four steps:
//
//  1. Spec (spec.go) is plain data with TOML and JSON tags, validated with errors that name
//     the field, the value and the allowed range. Users configure encoder, latent and head;
//     the agent sets Input, Output and OutputGain from the environment's spaces.
//  2. Mutations (mutate.go) are pure functions (Spec, *rand.Rand) → (Spec, description,
//     changed) in a registry evolution draws from by name and kind. They never leave the
//     bounds or produce an invalid spec.
//  3. Layout (layout.go) lists a spec's tensors in their canonical order, each with its name,
//     shape and Role (weight, bias, norm scale, norm shift); ParamCount counts their values
//     without allocating them, so a spec from an untrusted file can be refused first.
//  4. Params (params.go) are named tensors over plain []float32 — the single source of truth
//     for weights, which networks read in place and an optimizer writes. Init (init.go) fills
//     them for a spec from the caller's RNG; after a mutation, Transfer (transfer.go) carries
//     them over to the new spec, keeping every overlapping block so that a grown layer
//     computes the same function, and Resize does the same for optimizer moments with zeros
//     for the new entries.
//
// Conventions match PyTorch's (and the reference data in shared/testdata/nets) except that
// dense, LSTM and GRU weight matrices are stored [in, out] so a layer is x·W + b without a
// transpose; conv weights are PyTorch's [out, in, k, k]. Every random draw comes from a
// *rand.Rand the caller hands in: the same seed gives the same weights bit for bit.
package netconf

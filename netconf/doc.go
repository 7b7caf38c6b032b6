// Package netconf describes evolvable networks and turns them into gorgonia graphs.
//
// A network is encoder → latent → head → output layer:
//
//	input ─┬─ MLP:  Linear → [LayerNorm] → act, per hidden layer     ─┐
//	       ├─ CNN:  Conv2d (NCHW, no padding) → act, per layer, flatten ├─ latent: Linear → act
//	       └─ LSTM: stacked, PyTorch gates i f g o, resets per step    ─┘        │
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
//  3. Params (params.go) are named tensors over plain []float32 — the single source of truth
//     for weights. Init (init.go) fills them for a spec from the caller's RNG; after a
//     mutation, Transfer (transfer.go) carries them over to the new spec, keeping every
//     overlapping block so that a grown layer computes the same function, and Resize does
//     the same for optimizer moments with zeros for the new entries.
//  4. Build, BuildEncoder and BuildHead (graph*.go) add a spec's nodes to a gorgonia graph on
//     top of the caller's input node. Parameter nodes are backed by the Params slices
//     themselves, so graphs at any batch size share the weights, an optimizer that writes
//     Params updates them all, and Net.Params pairs every tensor name with its node for
//     reading gradients. An LSTM graph takes its initial state, a per-step reset mask and
//     a number of steps to unroll (one step for acting, more for BPTT) and copies its final
//     state out.
//
// Conventions match PyTorch's (and the reference data in shared/testdata/nets) except that
// dense and LSTM weight matrices are stored [in, out] so a layer is x·W + b without a
// transpose; conv weights are PyTorch's [out, in, k, k]. Every random draw comes from a
// *rand.Rand the caller hands in: the same seed gives the same weights bit for bit.
// gorgonia's own initialisers are never used (they seed from the clock).
package netconf

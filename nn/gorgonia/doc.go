// Package gorgonia computes the networks package netconf describes as gorgonia graphs. It
// is the reference network backend — the oracle package nn's plain-Go networks are tested
// against — and registers itself with package nn as "gorgonia" when imported, as
// database/sql drivers do:
//
//	import _ "github.com/evolverl/evolve/nn/gorgonia"
//
// It works at two levels.
//
// Build, BuildEncoder and BuildHead add a spec's nodes to a caller's gorgonia graph on top
// of the caller's input node. Parameter nodes are backed by the netconf.Params slices
// themselves, so graphs at any batch size share the weights, an optimizer that writes the
// Params updates them all, and Net.Params pairs every tensor name with its node for reading
// gradients. An LSTM or GRU graph unrolls a number of steps (Options.Steps; one for acting, more
// for BPTT), takes its initial state and a per-step reset mask as inputs, and copies its
// final state out on every run. The graphs reproduce PyTorch's conventions and are checked
// against the reference networks in shared/testdata/nets and against finite differences.
//
// Backend implements nn.Backend with those builders: a model builds, once per batch shape,
// one graph computing the actor's output, the values and — through G.Grad — the gradient of
// Σ out⊙dOut + Σ values⊙dValues for every parameter. It copies the caller's weights into
// the graph's own at every Forward, so it never aliases them, and writes nn.Batch.Starts
// into the recurrent graphs' reset masks; a Transformer graph (transformer.go) reads the
// windows internal/window assembles, as the plain-Go backend does.
//
// gorgonia v0.9.18 has sharp edges (see GORGONIA.md beside DESIGN.md); the builders work
// around its wrong InverseSqrt gradient and its racy Rectify, and never use its
// initialisers, which seed from the clock.
package gorgonia

package gorgonia

import (
	"sync"

	G "gorgonia.org/gorgonia"
)

// rectifyMu serialises G.Rectify: gorgonia v0.9.18 numbers the node group
// each call creates with an unsynchronised package-level counter (it only
// labels graph drawings), so agents building graphs in parallel goroutines
// race on it. This lock and buildMu (backend.go), both guarding third-party
// state, are the only mutable package-level state here.
var rectifyMu sync.Mutex

// Rectify is G.Rectify (ReLU), safe to call from concurrent goroutines
// building separate graphs.
func Rectify(x *G.Node) (*G.Node, error) {
	rectifyMu.Lock()
	defer rectifyMu.Unlock()
	return G.Rectify(x)
}

//go:build !race

package envs

// raceBuild reports whether the race detector is on; see box2dStepMu.
const raceBuild = false

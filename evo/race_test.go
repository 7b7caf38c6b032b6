//go:build race

package evo

// raceEnabled trims the tests that train populations under -race, which is
// ~10× slower: TestWorkersDoNotChangeResults (several agents training at
// once) still runs.
const raceEnabled = true

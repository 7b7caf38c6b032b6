//go:build !race

package evo

const raceEnabled = false

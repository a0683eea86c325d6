//go:build !race

package tui

// raceEnabled: the tests run under the race detector.
const raceEnabled = false

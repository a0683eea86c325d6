//go:build race

package scenario_test

// raceEnabled: the tests run under the race detector.
const raceEnabled = true

//go:build !race

package store_test

// raceEnabled: the tests run under the race detector.
const raceEnabled = false

package storetest

import (
	"sync"
	"testing"
)

// processTB stands in for a test while a shared server starts: a failure
// or a skip is the asking test's, and what the server would undo at the
// test's end is kept for StopShared instead.
type processTB struct {
	testing.TB
}

func (processTB) Cleanup(f func()) {
	shared.Lock()
	shared.undo = append(shared.undo, f)
	shared.Unlock()
}

var shared struct {
	sync.Mutex
	pg   *Postgres
	undo []func()
	// starting serialises the starts, apart from the list lock above.
	starting sync.Mutex
}

// SharedPostgres is one Postgres server for every test of the process
// that asks for one, started on the first call (a failure to start is
// that test's, and the next call tries again) and stopped by StopShared,
// which the package's TestMain calls after its tests. A run keeps to
// schemas of its own, so tests running side by side on it do not meet.
func SharedPostgres(tb testing.TB) *Postgres {
	tb.Helper()
	shared.starting.Lock()
	defer shared.starting.Unlock()
	if shared.pg == nil {
		shared.pg = StartPostgres(processTB{tb})
	}
	return shared.pg
}

// StopShared stops the shared servers and removes their files (last
// started, first stopped).
func StopShared() {
	shared.Lock()
	undo := shared.undo
	shared.undo, shared.pg = nil, nil
	shared.Unlock()
	for i := len(undo) - 1; i >= 0; i-- {
		undo[i]()
	}
}

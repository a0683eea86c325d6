package sshview

import (
	"testing"

	"github.com/locklab/locklab/store/storetest"
	"go.uber.org/goleak"
)

// parallelTests is how many of the package's parallel tests run at once
// unless -parallel says otherwise: they mostly wait out grace periods and
// stalled clients, not the cores.
const parallelTests = 8

// TestMain fails the package if any test leaves a goroutine behind: a
// closed server ends every connection, logged in or not, and all a
// session started.
func TestMain(m *testing.M) {
	storetest.WidenParallel(parallelTests)
	goleak.VerifyTestMain(m)
}

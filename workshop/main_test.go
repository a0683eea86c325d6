package workshop

import (
	"os"
	"testing"

	"github.com/locklab/locklab/store/storetest"
)

// parallelTests is how many of the package's parallel tests run at once
// unless -parallel says otherwise: a round mostly waits on its lead time,
// its locks' TTLs and its workers' work, not on the cores.
const parallelTests = 8

func TestMain(m *testing.M) {
	storetest.QuietRedis()
	storetest.WidenParallel(parallelTests)
	os.Exit(m.Run())
}

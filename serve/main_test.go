package serve

import (
	"os"
	"testing"

	"github.com/locklab/locklab/store/storetest"
)

// parallelTests is how many of the package's parallel tests run at once
// unless -parallel says otherwise: they mostly wait out a scenario's
// delay or a lock's hold, not the cores.
const parallelTests = 8

func TestMain(m *testing.M) {
	storetest.QuietRedis()
	storetest.WidenParallel(parallelTests)
	os.Exit(m.Run())
}

package scenario_test

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// outsideBusy is how many runnable processes beyond the cores the machine
// had when the tests began (its one-minute load average, less the cores):
// other programs' load, which a story kept in real time must survive as it
// survives LOCKLAB_BUSY's busy loops. 0 where the load is not known.
var outsideBusy float64

// measureOutsideLoad sets outsideBusy, before the tests load the machine
// themselves, and says so when it slows the real-time stories.
func measureOutsideLoad() {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return
	}
	load, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return
	}
	outsideBusy = max(load-float64(runtime.NumCPU()), 0)
	if outsideBusy >= 1 {
		fmt.Fprintf(os.Stderr, "scenario tests: load average %.1f on %d cores: the stories kept in real time run %.1f× slower\n",
			load, runtime.NumCPU(), 1+outsideBusy/2)
	}
}

package scenario_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
)

// runE runs a scenario to the end on a fresh store at speed (the embedded
// clock's; a real server keeps real time) and returns the run. Unlike runAt
// it may be called from any goroutine.
func runE(urls []string, speed float64, cfg scenario.Config) (*scenario.Run, error) {
	speed = realTimeSpeed(urls, speed, cfg)
	slowmo := 1.0
	if len(urls) > 0 && speed < 1 {
		slowmo = 1 / speed // a real server keeps real time: slow the run down instead
	}
	st, err := store.Open(context.Background(), store.Config{URLs: urls, Nodes: cfg.Params.Nodes, PoolSize: 64, Speed: speed, Slowmo: slowmo, ConnectTimeout: testConnectTimeout})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	// Dial every node first: a dial on a busy machine can outlast a
	// Redlock vote (a tenth of the TTL), and the story is not about dials.
	for _, c := range st.Clients() {
		if err := c.Ping(context.Background()).Err(); err != nil {
			return nil, err
		}
	}
	r, err := scenario.Start(context.Background(), st, cfg)
	if err != nil {
		return nil, err
	}
	if err := r.Wait(); err != nil {
		return nil, err
	}
	return r, nil
}

// testConnectTimeout bounds connecting to a test's own redis-server: on a
// busy machine a dial can take seconds, and the tests are not about dials.
const testConnectTimeout = 15 * time.Second

// parallelTests is how many of the package's parallel tests run at once
// unless -parallel says otherwise: they are stories told on a clock and
// mostly sleep (a fifth of their time is CPU), so more than the cores fit.
const parallelTests = 8

// concurrentRuns bounds how many runs one test keeps going at once. Runs
// of a few workers mostly sleep on the virtual clock, so more than the
// cores fit.
const concurrentRuns = 10

// busyRuns bounds runs of many workers that retry busily.
const busyRuns = 2

// runAll runs cfg(i) for i in [0, n) on urls at speed, at most
// concurrentRuns at a time, and returns the runs in order; a run that
// fails to start or finish fails the test.
func runAll(t testing.TB, urls []string, speed float64, n int, cfg func(i int) scenario.Config) []*scenario.Run {
	t.Helper()
	return runAllBy(t, urls, speed, n, concurrentRuns, cfg)
}

// runAllBy is runAll with at most limit runs at a time: runs of many
// workers that retry without pause are busy, not asleep, and more of them
// at once than the cores only slow each other down.
func runAllBy(t testing.TB, urls []string, speed float64, n, limit int, cfg func(i int) scenario.Config) []*scenario.Run {
	t.Helper()
	runs, err := runMany(urls, speed, n, limit, cfg)
	if err != nil {
		unansweredOnARealServer(t, urls, err)
		t.Fatal(err)
	}
	return runs
}

// runMany is runAll with at most limit runs at a time, from any goroutine.
func runMany(urls []string, speed float64, n, limit int, cfg func(i int) scenario.Config) ([]*scenario.Run, error) {
	runs := make([]*scenario.Run, n)
	errs := make([]error, n)
	forEach(n, limit, func(i int) { runs[i], errs[i] = runE(urls, speed, cfg(i)) })
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("run %d: %w", i, err)
		}
	}
	return runs, nil
}

// forEach calls f(0) … f(n−1), at most limit at a time, and waits for all.
func forEach(n, limit int, f func(i int)) {
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			f(i)
		}()
	}
	wg.Wait()
}

// busyEnv names the number of CPU-bound processes to start beside the
// tests (LOCKLAB_BUSY=2 go test ./scenario): the outcome tests must tell
// the same story on a machine that busy.
const busyEnv = "LOCKLAB_BUSY"

// spinEnv makes the test binary a busy loop instead of running tests.
const spinEnv = "LOCKLAB_BUSY_SPIN"

// startBusy starts the busy loops LOCKLAB_BUSY asks for and returns a
// function that stops them. Each is this test binary spinning in a child
// process, so it competes for the cores as another program would.
func startBusy() (stop func(), err error) {
	n, _ := strconv.Atoi(os.Getenv(busyEnv))
	return startBusyN(n)
}

// startBusyN starts n busy loops beside the tests.
func startBusyN(n int) (stop func(), err error) {
	var cmds []*exec.Cmd
	stop = func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}
	for range n {
		c := exec.Command(os.Args[0], "-test.run=^$")
		c.Env = append(os.Environ(), spinEnv+"=1", busyEnv+"=0")
		if err := c.Start(); err != nil {
			stop()
			return nil, fmt.Errorf("%s: start a busy loop: %w", busyEnv, err)
		}
		cmds = append(cmds, c)
	}
	return stop, nil
}

var spinSink int

// spin burns one core until its parent goes away.
func spin() {
	runtime.GOMAXPROCS(1)
	parent := os.Getppid()
	for last := time.Now(); ; {
		for i := range 1 << 20 {
			spinSink += i * i
		}
		if time.Since(last) > 100*time.Millisecond {
			if os.Getppid() != parent {
				os.Exit(0)
			}
			last = time.Now()
		}
	}
}

// realTimeSpeed is the speed of a run: as given in a simulation, which no
// load reaches; a story kept in real time (a real server, a strategy or a
// scenario that needs one, a library that reads the wall clock) goes that much slower beside LOCKLAB_BUSY busy
// loops and the other programs that kept the machine busy as the tests
// began, so that its margins grow with the load they must survive.
func realTimeSpeed(urls []string, speed float64, cfg scenario.Config) float64 {
	sc, err := scenario.Lookup(cfg.Scenario)
	if err != nil {
		return speed
	}
	if len(urls) == 0 && sc.RealTime == "" && scenario.ServerOf(cfg.Strategy) == "redis" && scenario.WallClock(cfg.Strategy) == "" {
		return speed
	}
	n, _ := strconv.Atoi(os.Getenv(busyEnv))
	return speed / (1 + (float64(max(n, 0))+outsideBusy)/2)
}

package cli

import (
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/launch"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/serve"
	"github.com/locklab/locklab/store"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// serveFlags are serve's: what to run and on which store (no spawned
// topology; rounds keep real time, their workers being requests), how
// fast, its event logs, where to listen and how many requests to take.
type serveFlags struct {
	scenarioFlags
	storeFlags
	paceFlags
	outputFlags
	scenario string
	addr     string
	addrFlag string // the flag that named addr: addr, else serve (locklab --serve)
	rate     float64
	allow    []string // --allow-host
}

// addrName is the flag that named the address to serve on.
func (f *serveFlags) addrName() string {
	if f.addrFlag == "" {
		return "addr"
	}
	return f.addrFlag
}

// defaultServeRate is the requests per second serve accepts by default.
const defaultServeRate = 2000

// serveDelay is serve's default --delay (between the read and the write,
// or the check and the credit): wide enough for requests to race in.
const serveDelay = 100 * time.Millisecond

// serveConfig checks the flags and says what to serve.
func (f *serveFlags) serveConfig(cmd *cobra.Command) (serve.Config, error) {
	var cfg serve.Config
	if !slices.Contains(scenario.OutsideScenarios, f.scenario) {
		if _, err := scenario.Lookup(f.scenario); err != nil {
			return cfg, usagef("--scenario %q is not a scenario: serve runs one of %s", f.scenario, strings.Join(scenario.OutsideScenarios, ", "))
		}
		return cfg, usagef("--scenario %s cannot take its workers from HTTP requests: serve runs one of %s", f.scenario, strings.Join(scenario.OutsideScenarios, ", "))
	}
	sc, _ := scenario.Lookup(f.scenario)
	if err := checkAddrFlag(f.addrName(), f.addr); err != nil {
		return cfg, err
	}
	if err := checkAllowHosts(f.allow); err != nil {
		return cfg, err
	}
	if !inRange(f.rate, 0, 1e6) {
		return cfg, usagef("--rate must be a number from 0 (no limit) to 1000000 requests/s (got %g)", f.rate)
	}
	urls, err := f.urls(cmd, &f.paceFlags)
	if err != nil {
		return cfg, err
	}
	strategy, err := f.strategy(sc)
	if err != nil {
		return cfg, err
	}
	if _, err := f.usable(cmd, []string{strategy}, false); err != nil {
		return cfg, err
	}
	if err := checkOutputPath("events", f.events); err != nil {
		return cfg, err
	}
	p, err := f.params(cmd, sc, strategy, urls, f.topology)
	if err != nil {
		return cfg, err
	}
	if !cmd.Flags().Changed("workers") {
		p.Workers = event.MaxWorkers
	}
	if !cmd.Flags().Changed("delay") && p.Delay.D() < serveDelay {
		// Requests arrive tens of milliseconds apart, not microseconds as
		// goroutines do: a window of a few milliseconds would hide the race.
		p.Delay = event.Millis(serveDelay)
	}
	seed := seedFlag(cmd, f.seed)
	cfg = serve.Config{
		Store: f.store(urls, p),
		Run:   scenario.Config{Scenario: sc.Name, Strategy: strategy, Params: p, Seed: seed, Tool: "locklab " + version},
		Rate:  f.rate, Burst: int(max(f.rate, 1)), AllowHosts: f.allow,
	}
	if f.events != "" {
		path := f.events
		cfg.Events = func(n int) (io.WriteCloser, error) { return createEventLog(roundFile(path, n)) }
	}
	return cfg, nil
}

// store is where each round goes: the store of a run of p, spawning
// nothing (the view's --topology sets only the node count), with a full
// pool, since requests come in bursts whatever the lanes.
func (f *serveFlags) store(urls []string, p event.Params) store.Config {
	w := f.where(urls, &f.paceFlags)
	w.Topology = ""
	cfg := w.Store(p)
	cfg.PoolSize = launch.MaxPool
	return cfg
}

// roundFile names round n's event log: path itself for the first round.
func roundFile(path string, n int) string {
	if n == 1 {
		return path
	}
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "-round" + strconv.Itoa(n) + ext
}

// addAllowHostFlag registers --allow-host, which lets requests name the
// server by a name of the user's choosing.
func addAllowHostFlag(fl *pflag.FlagSet, allow *[]string) {
	fl.StringArrayVar(allow, "allow-host", nil, "also answer requests whose Host is NAME or NAME:PORT (repeatable); by default only the address listened on, and localhost on loopback")
}

// checkAllowHosts refuses an --allow-host that is not a host name or
// address, with an optional port.
func checkAllowHosts(hosts []string) error {
	for _, h := range hosts {
		name, port, err := net.SplitHostPort(h)
		if err != nil {
			name, port = h, ""
		}
		n, perr := strconv.Atoi(port)
		if name == "" || strings.ContainsAny(name, "/@?#:% \t") && net.ParseIP(strings.Trim(name, "[]")) == nil ||
			port != "" && (perr != nil || n < 1 || n > 65535) {
			return usagef("--allow-host %q: want a host name or address, optionally with :PORT, such as lab.local or lab.local:8080", h)
		}
	}
	return nil
}

// listenServe listens on addr, which the flag --flag named.
func listenServe(addr, flag string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, runtimeError{fmt.Errorf("cannot listen on %s: %v: is another server using that port? Pick another with --%s", addr, errors.Unwrap(err), flag)}
	}
	return ln, nil
}

// startServer opens the first round of cfg to be served on ln (closed if
// it cannot be), and says so when addr lets other machines in.
func startServer(cmd *cobra.Command, cfg serve.Config, ln net.Listener, addr string) (*serve.Server, error) {
	srv, err := serve.New(cmd.Context(), cfg)
	if err != nil {
		ln.Close()
		var pe *event.ParamError
		if errors.As(err, &pe) {
			return nil, usageError{err}
		}
		return nil, storeError(err)
	}
	if !loopback(addr) {
		note(cmd, "listening on %s: anyone who reaches this machine can send workers", addr)
	}
	return srv, nil
}

// endServe prints the last round's summary once serving has ended with
// err: the requests it took are its lanes.
func endServe(out io.Writer, srv *serve.Server, err error) error {
	last := srv.Run().Header
	last.Params.Workers = srv.Lanes() // the requests it took, not the lanes it had room for
	last.Lanes = last.Lanes[:srv.Lanes()]
	fmt.Fprintf(out, "round %d:\n", srv.Round())
	fmt.Fprint(out, srv.Run().Summary().Box(last))
	if err != nil {
		return runtimeError{err}
	}
	fmt.Fprintln(out, "  stopped; the round's keys were deleted")
	return nil
}

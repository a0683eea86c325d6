package cli

import (
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

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

func newServeCmd() *cobra.Command {
	f := &serveFlags{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve a live run over HTTP: each request is one worker",
		Long: "serve runs a scenario whose workers are HTTP requests: POST /buy (oversell), POST /webhook\n" +
			"{\"delivery_id\": …} (webhook) or POST /jobs/{id}/run (queue-double) each race as one worker, one\n" +
			"lane of the live run, and answer with the outcome as JSON (409 with Retry-After when the lock is\n" +
			"held). GET /state gives the checker's verdict, GET /events streams the event log (Server-Sent\n" +
			"Events), GET /metrics counts it for Prometheus, POST /reset starts a new round on fresh keys.\n" +
			"It listens on loopback unless --addr says otherwise; Ctrl-C stops it and deletes the round's keys.",
		Example: "  locklab serve --scenario oversell --lock none --stock 1\n" +
			"  locklab serve --lock safe --retry full-jitter --stock 5 --addr 127.0.0.1:9090\n" +
			"  locklab serve --scenario webhook --lock fail-fast\n" +
			"  locklab serve --scenario queue-double --ttl 2s --work 3s --redis redis://localhost:6379",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("serve takes no arguments (got %q): pick the scenario with --scenario (one of %s)", args[0], strings.Join(scenario.OutsideScenarios, ", "))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return f.serve(cmd) },
	}
	fl := cmd.Flags()
	addScenarioFlags(fl, &f.scenarioFlags)
	addStoreFlags(fl, &f.storeFlags, false)
	addPaceFlags(fl, &f.paceFlags, false)
	addEventsFlag(fl, &f.outputFlags)
	refuseFlag(cmd, "topology", "--topology spawns servers for locklab run and the interactive view; serve takes --redis URL")
	refuseFlag(cmd, "realtime", "serve's rounds always keep real time: their workers are HTTP requests")
	fl.Lookup("workers").Usage = fmt.Sprintf("requests (lanes) a round takes before it is full (default %d)", scenario.MaxWorkers)
	fl.Lookup("delay").Usage = fmt.Sprintf("time between reading and writing (oversell) or checking and crediting (webhook) (default %v)", serveDelay)
	fl.StringVar(&f.scenario, "scenario", "oversell", "the scenario requests race in: "+strings.Join(scenario.OutsideScenarios, ", "))
	fl.StringVar(&f.addr, "addr", "127.0.0.1:8080", "host:port to listen on (loopback unless you name another address)")
	fl.Float64Var(&f.rate, "rate", defaultServeRate, "requests per second accepted, all clients together; 0: no limit")
	addAllowHostFlag(fl, &f.allow)
	refuseFlag(cmd, "ssh", "serve shows no view to send over SSH: "+sshToServeHint)
	return cmd
}

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
	p, err := f.params(cmd, sc, strategy, urls, "")
	if err != nil {
		return cfg, err
	}
	if !cmd.Flags().Changed("workers") {
		p.Workers = scenario.MaxWorkers
	}
	if !cmd.Flags().Changed("delay") && p.Delay.D() < serveDelay {
		// Requests arrive tens of milliseconds apart, not microseconds as
		// goroutines do: a window of a few milliseconds would hide the race.
		p.Delay = scenario.Millis(serveDelay)
	}
	seed := f.seed
	if !cmd.Flags().Changed("seed") {
		seed = freshSeed()
	}
	cfg = serve.Config{
		Store: store.Config{URLs: urls, Nodes: p.Nodes, Speed: f.speed, Slowmo: f.slowmo, PoolSize: 256, Servers: f.servers()},
		Run:   scenario.Config{Scenario: sc.Name, Strategy: strategy, Params: p, Seed: seed, Tool: "locklab " + version},
		Rate:  f.rate, Burst: int(max(f.rate, 1)), AllowHosts: f.allow,
	}
	if f.events != "" {
		path := f.events
		cfg.Events = func(n int) (io.WriteCloser, error) { return createEventLog(roundFile(path, n)) }
	}
	return cfg, nil
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

// checkAddrFlag refuses a --flag that is not host:port.
func checkAddrFlag(flag, addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("--%s %q is not host:port, e.g. 127.0.0.1:8080", flag, addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return usagef("--%s %q: the port must be a number from 0 to 65535", flag, addr)
	}
	return nil
}

// loopback reports whether addr listens on this machine only.
func loopback(addr string) bool {
	host, _, _ := net.SplitHostPort(addr)
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (f *serveFlags) serve(cmd *cobra.Command) error {
	cfg, err := f.serveConfig(cmd)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	ln, err := listenServe(f.addr, f.addrName())
	if err != nil {
		return err
	}
	srv, err := startServer(cmd, cfg, ln, f.addr)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	h := srv.Run().Header
	fmt.Fprintf(out, "locklab: serving %s (%s) on %s, %s\n", h.Scenario, h.Strategy, "http://"+ln.Addr().String(), h.Store)
	fmt.Fprintf(out, "  %s · GET /state · POST /reset · GET /events · GET /metrics   (Ctrl-C stops)\n", workerRoute(h.Scenario))
	err = srv.Serve(ctx, ln)
	fmt.Fprintln(out)
	return endServe(out, srv, err)
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
		var pe *scenario.ParamError
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

// workerRoute is the endpoint whose requests are sc's workers.
func workerRoute(sc string) string {
	switch sc {
	case "webhook":
		return `POST /webhook {"delivery_id": "…"}`
	case "queue-double":
		return "POST /jobs/{id}/run"
	}
	return "POST /buy"
}

// freshSeed is a seed for a run that was not given one, as run picks it.
func freshSeed() uint64 {
	var b [8]byte
	_, _ = crand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:]) % 1_000_000
}

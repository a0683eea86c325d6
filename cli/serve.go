package cli

import (
	"fmt"
	"strings"

	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/scenario"
	"github.com/spf13/cobra"
)

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
	refuseFlag(cmd, "topology", "it spawns servers for locklab run and the interactive view; serve takes --redis URL")
	refuseFlag(cmd, "realtime", "serve's rounds always keep real time: their workers are HTTP requests")
	fl.Lookup("workers").Usage = fmt.Sprintf("requests (lanes) a round takes before it is full (default %d)", event.MaxWorkers)
	fl.Lookup("delay").Usage = fmt.Sprintf("time between reading and writing (oversell) or checking and crediting (webhook) (default %v)", serveDelay)
	fl.StringVar(&f.scenario, "scenario", "oversell", "the scenario requests race in: "+strings.Join(scenario.OutsideScenarios, ", "))
	fl.StringVar(&f.addr, "addr", "127.0.0.1:8080", "host:port to listen on (loopback unless you name another address)")
	fl.Float64Var(&f.rate, "rate", defaultServeRate, "requests per second accepted, all clients together; 0: no limit")
	addAllowHostFlag(fl, &f.allow)
	refuseFlag(cmd, "ssh", "serve shows no view to send over SSH: "+sshToServeHint)
	return cmd
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

package cli

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/serve"
	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui"
	"github.com/locklab/locklab/workshop"
	"github.com/spf13/cobra"
)

// serveViewLanes is how many requests a round shown on screen takes by
// default before it is full (503 until a new round): as many lanes as a
// screen can still tell apart when folded.
const serveViewLanes = 500

// serveTUI is locklab --serve ADDR: the HTTP server of locklab serve and,
// on this terminal, the view of its rounds, each request a lane.
func (f *tuiFlags) serveTUI(cmd *cobra.Command, th *themes.Theme) error {
	for _, o := range []string{"cast", "present"} {
		if cmd.Flags().Changed(o) {
			return usagef("--%s does not apply to --serve: the view of a served run is not recorded or presented", o)
		}
	}
	sf := &serveFlags{scenarioFlags: f.scenarioFlags, storeFlags: f.storeFlags, paceFlags: f.paceFlags, outputFlags: f.outputFlags, scenario: f.scenario, addr: f.serve, addrFlag: "serve", rate: defaultServeRate, allow: f.allow}
	if sf.scenario == "" {
		sf.scenario = scenario.OutsideScenarios[0]
	}
	cfg, err := sf.serveConfig(cmd)
	if err != nil {
		return err
	}
	if !cmd.Flags().Changed("workers") {
		cfg.Run.Params.Workers = serveViewLanes
	}
	ssh, err := f.sshConfig(cmd)
	if err != nil {
		return err
	}
	if !interactive() {
		return usagef("--serve shows the run in a terminal; without one use: locklab serve --addr %s --scenario %s", f.serve, cfg.Run.Scenario)
	}
	ctx := cmd.Context()
	ln, err := listenServe(sf.addr, sf.addrName())
	if err != nil {
		return err
	}
	url := "http://" + ln.Addr().String()
	stage := tui.NewStage(fmt.Sprintf("serving %s on %s", cfg.Run.Scenario, url), curlHint(cfg.Run.Scenario, url))
	stage.Requests = true
	cfg.OnRound = func(_ int, run *scenario.Run) { stage.SetRound(run) }
	srv, err := startServer(cmd, cfg, ln, f.serve)
	if err != nil {
		return err
	}
	if ssh != nil {
		v, err := serveSSH(ctx, ssh, stage, th)
		if err != nil {
			srv.Close()
			ln.Close()
			return runtimeError{err}
		}
		defer v.Close()
		host, port := splitListen(v.Addr())
		line := fmt.Sprintf("ssh -p %s %s", port, bracket(workshop.Addresses(host)[0]))
		stage.Title += " · " + line
		stage.Hint += "   · " + line
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(sctx, ln) }()
	viewErr := tui.RunHost(ctx, stage, servedRounds{srv}, th, os.Stdin, os.Stdout)
	stop()
	serveErr := <-served
	return endServe(cmd.OutOrStdout(), srv, errors.Join(viewErr, serveErr))
}

// curlHint says how to send the served run one worker.
func curlHint(sc, url string) string {
	switch sc {
	case "webhook":
		return fmt.Sprintf(`curl -X POST %s/webhook -H 'Content-Type: application/json' -d '{"delivery_id":"pay_42"}'   · GET %s/state`, url, url)
	case "queue-double":
		return fmt.Sprintf("curl -X POST %s/jobs/42/run   · GET %s/state", url, url)
	}
	return fmt.Sprintf("curl -X POST %s/buy   · GET %s/state", url, url)
}

// servedRounds shows a serve.Server to the host's view: no lobby, and a
// new round is POST /reset's.
type servedRounds struct{ srv *serve.Server }

func (servedRounds) Lobby(context.Context) ([]tui.Attendee, error) { return nil, nil }

func (s servedRounds) Open(context.Context) (*scenario.Run, error) {
	if _, err := s.srv.Reset(0); err != nil {
		return nil, err
	}
	return s.srv.Run(), nil
}

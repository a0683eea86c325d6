package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/locklab/locklab/check"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui"
	"github.com/locklab/locklab/tui/sshview"
	"github.com/locklab/locklab/workshop"
	"github.com/spf13/cobra"
)

// hostFlags are host's: the race (a few of the parameters: attendees
// bring their workers), the shared Redis, and the room's own.
type hostFlags struct {
	scenarioFlags
	redis     []string
	events    string
	room      string
	scenario  string
	theme     string
	attendees int
	joinAddr  string
	results   string
	countdown time.Duration
	sshFlags
}

func newHostCmd() *cobra.Command {
	f := &hostFlags{}
	cmd := &cobra.Command{
		Use:   "host --redis URL",
		Short: "Host a workshop race: attendees' workers join from their machines through a shared Redis",
		Long: "host opens the view of a race whose workers come from other machines: attendees run\n" +
			"locklab join --redis URL --name NAME against the same Redis, and every round you open\n" +
			"starts everyone's workers at the same instant. Their events come back through a Redis\n" +
			"Stream, stamped with the server's clock, into one log that the checker folds.",
		Example: "  locklab host --redis redis://0.0.0.0:6379 --lock none --stock 1\n" +
			"  locklab host --redis redis://localhost:6379 --lock safe --retry full-jitter --stock 5 --ssh :2222\n" +
			"  locklab host --redis redis://localhost:6379 --attendees 2 --events round.jsonl   # no terminal: one round",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("host takes no arguments (got %q): locklab host --redis URL", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return f.run(cmd) },
	}
	fl := cmd.Flags()
	addScenarioFlags(fl, &f.scenarioFlags, "stock", "delay", "ttl", "work", "order", "retry", "max-retries", "retry-base", "retry-cap")
	fl.Lookup("lock").Usage = "lock strategy, one of the scenario's on one Redis (oversell: " + strings.Join(scenario.JoinableStrategies("oversell"), ", ") + "; default: the scenario's first)"
	fl.Lookup("seed").Usage = "random seed (default: a fresh one)"
	fl.StringArrayVar(&f.redis, "redis", nil, "the shared Redis, redis://[:password@]host:port/db (default $LOCKLAB_REDIS_URL)")
	fl.StringVar(&f.room, "room", workshop.DefaultRoom, "the room's name (several hosts can share one Redis)")
	fl.StringVar(&f.scenario, "scenario", "oversell", "the race: "+scenario.JoinableNames())
	fl.StringVar(&f.theme, "theme", "", "dark, light, high-contrast, colour-blind or mono (NO_COLOR: mono)")
	fl.IntVar(&f.attendees, "attendees", 0, "without a terminal: run one round once this many have joined, print its summary and exit")
	fl.StringVar(&f.events, "events", "", "with --attendees: write the round's event log (JSON Lines) to FILE")
	fl.StringVar(&f.joinAddr, "join-addr", "", "answer the room code (locklab join CODE@HOST) on ADDR (default: port 7420, beside --ssh, else on every interface if the Redis URL is not loopback)")
	fl.DurationVar(&f.countdown, "countdown", 3*time.Second, "how long everyone sees a new round coming before its workers start (at least 500ms)")
	fl.StringVar(&f.results, "results", "", "on quitting, write the rounds and leaderboard to PREFIX.md and PREFIX.json (default: locklab-ROOM-DATE-TIME in this directory)")
	addSSHFlags(fl, &f.sshFlags)
	fl.Lookup("ssh").Usage = "also let the room take part over SSH on ADDR: ssh NAME@HOST races, watch@HOST watches (:2222 is loopback; on a wider ADDR the room code is the password)"
	refuseFlag(cmd, "serve", "host takes its workers from attendees (locklab join), not from HTTP requests: "+sshToServeHint)
	return cmd
}

func (f *hostFlags) run(cmd *cobra.Command) error {
	if len(f.redis) > 1 {
		return usagef("host races on one Redis: give --redis once")
	}
	url, err := workshopURL(cmd, strings.Join(f.redis, ""))
	if err != nil {
		return err
	}
	if err := workshop.CheckName("room", f.room); err != nil {
		return usageError{err}
	}
	sc, err := scenario.Lookup(f.scenario)
	if err != nil {
		return usageError{fmt.Errorf("--scenario: %w", err)}
	}
	strategy := sc.Strategies[0]
	if f.lock != "" {
		strategy = f.lock
	}
	if err := scenario.Joinable(sc.Name, strategy); err != nil {
		return usageError{err}
	}
	p, err := f.params(cmd, sc, strategy, nil, "")
	if err != nil {
		return err
	}
	p.Workers = 1 // the attendees bring theirs
	th, err := pickTheme(f.theme)
	if err != nil {
		return err
	}
	f.roomCode = true
	ssh, err := f.sshConfig(cmd)
	if err != nil {
		return err
	}
	codeListen, codeFallback, err := codeAddr(f.joinAddr, url, ssh)
	if err != nil {
		return err
	}
	if ssh != nil && f.attendees > 0 {
		return usagef("--ssh serves the view; a headless host (--attendees) has none")
	}
	switch {
	case f.attendees < 0 || f.attendees > workshop.MaxAttendees:
		return usagef("--attendees must be between 1 and %d (got %d)", workshop.MaxAttendees, f.attendees)
	case f.events != "" && f.attendees == 0:
		return usagef("--events writes the round of a headless host: add --attendees N (the view saves a round with s)")
	case f.attendees == 0 && !interactive():
		return usagef("host needs a terminal; without one, give --attendees N to run one round once N have joined")
	}
	if err := checkOutputPath("events", f.events); err != nil {
		return err
	}
	seed := seedFlag(cmd, f.seed)
	ctx := cmd.Context()
	lead, err := f.lead(cmd)
	if err != nil {
		return err
	}
	h, err := workshop.OpenHost(ctx, workshop.HostConfig{URL: url, Room: f.room, Scenario: sc.Name, Strategy: strategy,
		Params: p, Seed: seed, Tool: "locklab " + version, Lead: lead})
	if err != nil {
		return workshopError(err)
	}
	defer h.Close()
	code := workshop.NewCode()
	ln, err := listenCode(codeListen, codeFallback)
	if err != nil {
		return runtimeError{err}
	}
	cs := workshop.ServeCode(ln, code, url, f.room)
	defer cs.Close()
	if f.attendees > 0 {
		return f.headless(ctx, cmd.OutOrStdout(), h, waysIn(code, cs.Addr(), nil, ""))
	}
	return f.hostRoom(cmd, h, url, code, cs.Addr(), ssh, th)
}

// hostRoom runs the host's screen, and the SSH way in when there is one, until
// the host quits; then it prints and writes the results.
func (f *hostFlags) hostRoom(cmd *cobra.Command, h *workshop.Host, url, code string, codeAt net.Addr, ssh *sshview.Config, th *themes.Theme) error {
	ctx := cmd.Context()
	stage := tui.NewStage(fmt.Sprintf("room %s · %s · code %s", f.room, redactedAddr(url), code), "")
	stage.SetNext(tui.NextLine(h.Next()))
	stage.Code = code
	var sshAddr net.Addr
	sshPass := ""
	if ssh != nil {
		admitByCode(ssh, code)
		ssh.Participate = participate(url, f.room, workshop.NewWatch(ctx, url, f.room, sshParticipantPoll))
		srv, err := serveSSH(ctx, ssh, stage, th)
		if err != nil {
			return runtimeError{err}
		}
		defer srv.Close()
		sshAddr, sshPass = srv.Addr(), ssh.Password
	}
	stage.WaysIn = waysIn(code, codeAt, sshAddr, sshPass)
	stage.Hint = stage.WaysIn[len(stage.WaysIn)-1]
	viewErr := tui.RunHost(ctx, stage, hostWorkshop{h, stage}, th, os.Stdin, os.Stdout)
	return errors.Join(viewErr, f.writeResults(cmd.OutOrStdout(), stage.Runs(), h.Renames()))
}

// lead is how far ahead of its opening a round starts: --countdown, or
// for a headless host, whose screen nobody watches, the joiners' shortest.
func (f *hostFlags) lead(cmd *cobra.Command) (time.Duration, error) {
	if f.countdown < 500*time.Millisecond || f.countdown > time.Minute {
		return 0, usagef("--countdown must be between 500ms and 1m (got %v): joiners need a moment to see the round", f.countdown)
	}
	if f.attendees > 0 && !cmd.Flags().Changed("countdown") {
		return 0, nil
	}
	return f.countdown, nil
}

// writeResults prints the finished rounds and the leaderboard, and keeps
// them in PREFIX.md and PREFIX.json; a round still racing is left out.
func (f *hostFlags) writeResults(out io.Writer, runs []*scenario.Run, renames []workshop.Rename) error {
	res := workshop.Collect(f.room, runs, renames)
	if left := len(runs) - len(res.Rounds); left > 0 {
		fmt.Fprintf(out, "%d round(s) still racing when the room ended: left out of the results\n", left)
	}
	if len(res.Rounds) == 0 {
		return nil
	}
	fmt.Fprint(out, res.Markdown())
	prefix := f.results
	if prefix == "" {
		prefix = fmt.Sprintf("locklab-%s-%s", f.room, time.Now().Format("20060102-150405"))
	}
	md, js, err := res.Write(prefix)
	if err != nil {
		return runtimeError{err}
	}
	fmt.Fprintf(out, "\nresults written to %s and %s\n", md, js)
	return nil
}

func redactedAddr(url string) string {
	if addr, err := store.URLAddr(url); err == nil {
		return "redis " + addr
	}
	return "redis"
}

// hostWorkshop shows a workshop.Host to the view.
type hostWorkshop struct {
	h     *workshop.Host
	stage *tui.Stage
}

func (w hostWorkshop) Lobby(ctx context.Context) ([]tui.Attendee, error) {
	l, err := w.h.Lobby(ctx)
	w.stage.SetRenames(w.h.Renames())
	out := make([]tui.Attendee, len(l))
	for i, a := range l {
		out[i] = tui.Attendee{Name: a.Name, Workers: a.Workers}
	}
	return out, err
}

func (w hostWorkshop) Next() workshop.Next           { return w.h.Next() }
func (w hostWorkshop) SetNext(n workshop.Next) error { return w.h.SetNext(n) }

func (w hostWorkshop) Open(ctx context.Context) (*scenario.Run, error) {
	r, _, err := w.h.Open(ctx)
	if err == nil {
		w.stage.SetStart(time.Now().Add(w.h.Config().Lead))
	}
	return r, err
}

// headless waits for the attendees, runs one round and prints it.
func (f *hostFlags) headless(ctx context.Context, out io.Writer, h *workshop.Host, ways []string) error {
	fmt.Fprintf(out, "room %s: waiting for %d attendee(s)\n", h.Room(), f.attendees)
	for _, w := range ways {
		fmt.Fprintln(out, "join with: "+w)
	}
	var seen []string
	for {
		l, err := h.Lobby(ctx)
		if err != nil {
			return storeError(err)
		}
		for _, a := range l {
			if !slices.Contains(seen, a.Name) {
				seen = append(seen, a.Name)
				fmt.Fprintf(out, "%s joined with %d worker(s)\n", a.Name, a.Workers)
			}
		}
		if len(l) >= f.attendees {
			break
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(200 * time.Millisecond):
		}
	}
	run, r, err := h.Open(ctx)
	if err != nil {
		return storeError(err)
	}
	fmt.Fprintf(out, "round %d: %d worker(s) from %d attendee(s)\n", r.N, len(run.Header.Lanes), len(r.Attendees))
	runErr := run.Wait()
	sum := run.Summary()
	fmt.Fprint(out, sum.Box(run.Header))
	printScores(out, scenario.ScoreTerm(run.Header.Scenario), scenario.Scores(run.Header, run.Log.Events()))
	for _, l := range h.Refused() {
		fmt.Fprintln(out, "refused: "+l)
	}
	if f.events != "" {
		if err := writeRound(f.events, run, sum); err != nil {
			return runtimeError{err}
		}
	}
	if runErr != nil && ctx.Err() == nil {
		return runtimeError{runErr}
	}
	return nil
}

// printScores prints the scoreboard; term names what Score.Did counts.
func printScores(out io.Writer, term string, scores []scenario.Score) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "attendee\tworkers\t%s\tdenied\tviolations\tstate\t\n", term)
	for _, s := range scores {
		state := "done"
		if s.Gone {
			state = "disconnected"
		} else if s.Done < s.Workers {
			state = "unfinished"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t\n", s.Name, s.Workers, s.Did, s.Denials, s.Violations, state)
	}
	tw.Flush()
}

func writeRound(path string, run *scenario.Run, sum *check.Summary) error {
	fh, err := createEventLog(path)
	if err != nil {
		return err
	}
	w, err := check.NewWriter(fh, run.Header)
	if err == nil {
		err = w.Write(run.Log.Events())
	}
	if err == nil {
		err = w.Close(sum)
	}
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cannot write the event log: %w", err)
	}
	return nil
}

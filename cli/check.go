package cli

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/locklab/locklab/check/linear"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
	"github.com/spf13/cobra"
)

func newCheckCmd() *cobra.Command {
	var html string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "check FILE",
		Short: "A second opinion on an event log: is its history linearizable (porcupine)?",
		Long: "check reads an event log and asks porcupine, a linearizability checker, about each resource:\n" +
			"  lock keys    against a lease (SET NX PX, compare-and-delete, renewal; a TTL runs from somewhere\n" +
			"               inside its acquire, with the clock's slack; what the strategy's lock is, from the header)\n" +
			"  stock        against a register (reads return the last write)\n" +
			"  sections     against a mutex (one worker inside at a time)\n" +
			"and prints linearizable / not per resource, beside locklab's own checker and its tally.\n" +
			"The log is read once and not kept: check's memory stays bounded (under 1 GB) whatever its\n" +
			"length, and --timeout bounds the whole check; what it could not check in time, or hold, it\n" +
			"names as given up.",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("check needs one event log: locklab check FILE")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if timeout <= 0 {
				return usagef("--timeout must be more than 0 (got %v)", timeout)
			}
			if err := checkOutputPath("html", html); err != nil {
				return err
			}
			defer guardMemory()()
			rep, err := checkFile(cmd.Context(), args[0], timeout, html != "")
			if err != nil {
				return err
			}
			rep.Print(cmd.OutOrStdout())
			if html != "" && rep.Complete() {
				if !rep.CanVisualize() {
					return runtimeError{fmt.Errorf("cannot write %s: the log has no operation porcupine drew", html)}
				}
				if err := writeOutput("html", html, "visualization", rep.Visualize); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "  html: %s\n", html)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&html, "html", "", "write porcupine's visualization of the history to FILE")
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Second, "give up after this long, reading and checking included; what was not checked is named")
	return cmd
}

// checkMemoryLimit is the soft memory limit check runs under: a guard
// under the design's bound (the GC works harder before the process would
// pass it), not the bound itself.
const checkMemoryLimit = 768 << 20

var memoryGuard struct {
	sync.Mutex
	users int
	old   int64
}

// guardMemory sets the soft memory limit while a check runs, and returns
// what puts it back once the last check running in the process is done.
func guardMemory() (release func()) {
	g := &memoryGuard
	g.Lock()
	defer g.Unlock()
	if g.users == 0 {
		g.old = debug.SetMemoryLimit(checkMemoryLimit)
	}
	g.users++
	return func() {
		g.Lock()
		defer g.Unlock()
		if g.users--; g.users == 0 {
			debug.SetMemoryLimit(g.old)
		}
	}
}

// checkFile reads and checks the event log at path within timeout.
func checkFile(ctx context.Context, path string, timeout time.Duration, draw bool) (*linear.Report, error) {
	deadline := time.Now().Add(timeout)
	rctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	fh, err := openInput(rctx, path, "event log")
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	var c *linear.Checker
	err = scenario.ReadEach(fh, func(h event.Header) { c = linear.New(scenario.WithTraits(h)) }, func(e event.Event) { c.Add(e) })
	switch {
	case ctx.Err() != nil:
		return nil, runtimeError{errors.New("interrupted")}
	case err != nil && rctx.Err() != nil: // the deadline passed while reading
		n := 0
		if c != nil {
			n = c.Read()
		}
		return linear.Unread(timeout, n), nil
	case err != nil:
		return nil, runtimeError{fmt.Errorf("%s: %w", path, err)}
	}
	rep := c.Judge(ctx, deadline, timeout, draw)
	if ctx.Err() != nil {
		return nil, runtimeError{errors.New("interrupted")}
	}
	return rep, nil
}

// Package cli is locklab's command line: one file per command (run, replay,
// check, record, talk, explore, host, join, serve, bench, clean, list) and
// the TUI's entry, each turning flags into configs and calling into the
// packages that do the work. main.go at the module root only calls Main.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"sync"
	"syscall"

	_ "github.com/locklab/locklab/lock/all" // the strategies beyond Redis, and their servers' drivers

	xterm "github.com/charmbracelet/x/term"

	"github.com/locklab/locklab/untrusted"
	"github.com/mattn/go-isatty"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

const version = "0.1.0"

// quietLogger keeps go-redis from printing its own retries: locklab says
// what went wrong in one line of its own.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

// Main runs locklab with the process's arguments and returns its exit
// status: 0, 1 for a failure, 2 for a usage mistake. Interrupt, SIGTERM
// and SIGHUP stop what runs, which then says what it had; a second one
// ends the process at once (something stopping hangs).
func Main() int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sig)
	restore := terminalState(os.Stdin)
	go func() {
		<-sig
		cancel()
		<-sig
		restore()
		os.Exit(forceExit(os.Stdout, os.Stderr))
	}()
	return execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
}

// terminalState returns what gives the terminal on f back its mode as it
// was when locklab started (a screen sets it raw); nothing when f is not a
// terminal.
func terminalState(f *os.File) func() {
	st, err := xterm.GetState(f.Fd())
	if err != nil {
		return func() {}
	}
	return func() { _ = xterm.Restore(f.Fd(), st) }
}

// forceExit says, on a second signal, that locklab stops without waiting
// for what was stopping, and what that may leave; it leaves a screen's
// alternate screen first. It returns the exit status.
func forceExit(stdout, stderr *os.File) int {
	if isatty.IsTerminal(stdout.Fd()) {
		// Leave the alternate screen, show the cursor, stop mouse reports.
		fmt.Fprint(stdout, "\x1b[?1049l\x1b[?25h\x1b[?1000l\x1b[?1006l")
	}
	fmt.Fprintln(stderr, "locklab: stopped at once on a second signal; what a run left expires with its TTL, and `locklab clean` finds it")
	return 1
}

// quietRedis silences go-redis's own log once: locklab says what went wrong.
var quietRedis sync.Once

// execute runs the CLI and returns the exit status.
func execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	quietRedis.Do(func() { redis.SetLogger(quietLogger{}) })
	out, errOut := &checkedWriter{w: stdout}, &checkedWriter{w: stderr}
	root := newRoot(out, errOut)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		err = out.failed("standard output")
	}
	if err == nil {
		err = errOut.failed("standard error")
	}
	if err == nil {
		return 0
	}
	fmt.Fprintln(errOut, "locklab: "+untrusted.Line(err.Error())) // a server's or a file's words may be in it
	var ue usageError
	var re runtimeError
	switch {
	case errors.As(err, &re):
		return 1
	case errors.As(err, &ue), isCobraUsage(err):
		return 2
	}
	return 1
}

func isCobraUsage(err error) bool {
	msg := err.Error()
	return strings.HasPrefix(msg, "unknown command") || strings.HasPrefix(msg, "unknown flag") ||
		strings.HasPrefix(msg, "unknown shorthand") || strings.Contains(msg, "flag needs an argument") ||
		strings.HasPrefix(msg, "accepts ") || strings.HasPrefix(msg, "requires ")
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	tf := &tuiFlags{}
	root := &cobra.Command{
		Use:   "locklab",
		Short: "Make distributed locking visible: watch workers race on Redis",
		Long: "locklab runs scenarios in which goroutine workers race on a real Redis protocol server\n" +
			"under a lock strategy of your choice, checks every step for safety violations, and\n" +
			"summarises what really happened. The embedded Redis needs nothing installed;\n" +
			"--redis redis://host:port points the same code at a real server.",
		Version:       version,
		SilenceErrors: true,
		SilenceUsage:  true,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown command %q: want one of %s (see locklab --help)", args[0], commandNames(cmd))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return tf.runTUI(cmd) },
	}
	addTUIFlags(root, tf)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(newRunCmd(), newListCmd(), newReplayCmd(), newExploreCmd(), newRecordCmd(), newCleanCmd(), newCheckCmd(), newTalkCmd(), newHostCmd(), newJoinCmd(), newServeCmd(), newBenchCmd())
	root.CompletionOptions.HiddenDefaultCmd = false
	root.InitDefaultCompletionCmd()
	addCompletions(root)
	return root
}

var pflagValueErr = regexp.MustCompile(`^invalid argument "(.*)" for "(.*?)" flag: (.*)$`)

// flagError turns pflag's messages into one plain line naming the flag.
func flagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	if m := pflagValueErr.FindStringSubmatch(msg); m != nil {
		flag := m[2]
		if i := strings.Index(flag, "--"); i >= 0 {
			flag = flag[i:]
		}
		want := "a valid value"
		if f := cmd.Flags().Lookup(strings.TrimPrefix(flag, "--")); f != nil {
			if _, ok := f.Value.(*paramValue); ok {
				return usagef("%s: %s", flag, m[3]) // the parameter's own words
			}
			want = flagWant(f)
		}
		return usagef("%s: %q is not %s", flag, m[1], want)
	}
	if name, why, ok := refusedWhy(cmd, msg); ok {
		return usagef("--%s does not apply to %s: %s", name, cmd.CommandPath(), why)
	}
	return usagef("%s (see %s --help)", msg, cmd.CommandPath())
}

func flagWant(f *pflag.Flag) string {
	switch f.Value.Type() {
	case "int", "int64":
		return "a whole number"
	case "uint64":
		return "a whole number from 0 to 18446744073709551615"
	case "float64":
		return "a number"
	case "duration":
		return "a duration such as 5ms, 2s or 1m"
	case "intSlice":
		return "whole numbers separated by commas, such as 1,8,32,128"
	case "bool":
		return "true or false"
	}
	return "a valid value"
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"text/tabwriter"

	"github.com/locklab/locklab/check"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/tui"
	"github.com/spf13/cobra"
)

func newListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List every scenario, lock strategy and retry policy",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			printList(cmd.OutOrStdout())
			return nil
		},
	}
}

func printList(out io.Writer) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIOS\t")
	for _, s := range scenario.Catalogue() {
		fmt.Fprintf(tw, "  %s\t%s — watch %s\n", s.Name, s.Title, s.Watch)
	}
	fmt.Fprintln(tw, "\t")
	fmt.Fprintln(tw, "STRATEGIES (--lock)\t")
	for _, s := range scenario.Strategies() {
		fmt.Fprintf(tw, "  %s\t%s\n", s.Name, s.Short)
	}
	fmt.Fprintln(tw, "\t")
	fmt.Fprintln(tw, "RETRY POLICIES (--retry)\t")
	for _, p := range lock.Policies {
		fmt.Fprintf(tw, "  %s\t%s\n", p.Name, p.Doc)
	}
	tw.Flush()
}

func newReplayCmd() *cobra.Command {
	var summary bool
	var theme string
	var present bool
	var castFile string
	cmd := &cobra.Command{
		Use:   "replay FILE",
		Short: "Replay a recorded event log in the view (or print its summary and verdict)",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("replay needs one event log: locklab replay FILE.jsonl")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if summary || !interactive() {
				why := "--summary opens none"
				if !summary {
					why = "which needs a terminal"
				}
				if castFile != "" {
					return usagef("replay --cast records the view, %s: use locklab record --from %s --cast %s", why, args[0], castFile)
				}
				if extra := notApplying(cmd, "summary"); len(extra) > 0 {
					note(cmd, "%s %s not apply to the summary; ignored", flagList(extra), doesOrDo(extra))
				}
				return replaySummary(cmd.Context(), cmd.OutOrStdout(), args[0])
			}
			if err := checkOutputPath("cast", castFile); err != nil {
				return err
			}
			return replayTUI(cmd.Context(), args[0], theme, present, castFile)
		},
	}
	cmd.Flags().BoolVar(&summary, "summary", false, "print the summary box and verdict instead of opening the view (the default without a terminal)")
	cmd.Flags().StringVar(&theme, "theme", "", "dark, light, high-contrast, colour-blind or mono (NO_COLOR: mono)")
	cmd.Flags().BoolVar(&present, "present", false, "presenter mode: stop at each beat with its caption (p toggles it)")
	cmd.Flags().StringVar(&castFile, "cast", "", "record the session as an asciicast v2 file")
	return cmd
}

// logGCPercent is the garbage collector's target while a recorded log is
// read and drawn: the log and the view's fold of it hold no pointers, so a
// collection costs little, and collecting at +25% instead of +100% keeps
// the peak of a 5-million-event replay under a gigabyte.
const logGCPercent = 25

// replayMemoryLimit is the soft memory limit a replay's view runs under:
// near it the collector works harder and hands freed memory back, so that
// the longest log the reader takes (16M events) peaks under a gigabyte.
// A limit already set lower (GOMEMLIMIT) stays.
const replayMemoryLimit = 900 << 20

func replayTUI(ctx context.Context, path, theme string, present bool, castFile string) error {
	th, err := pickTheme(theme)
	if err != nil {
		return err
	}
	defer debug.SetGCPercent(debug.SetGCPercent(logGCPercent))
	if old := debug.SetMemoryLimit(-1); old > replayMemoryLimit {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(replayMemoryLimit))
	}
	fh, err := openInput(ctx, path, "event log")
	if err != nil {
		return err
	}
	defer fh.Close()
	// The view opens once the header is read; the events come in as they
	// are read, and the verdict once they all are.
	ld, err := scenario.StreamLog(fh)
	if err != nil {
		return runtimeError{fmt.Errorf("%s: %v", path, err)}
	}
	if err := tui.Run(ctx, tui.Options{Theme: th, Loading: ld, Name: filepath.Base(path), Tool: "locklab " + version,
		Present: present, Cast: castFile}, os.Stdin, os.Stdout); err != nil {
		return err
	}
	select {
	case <-ld.Done():
		if err := ld.Err(); err != nil && ctx.Err() == nil {
			return runtimeError{fmt.Errorf("%s: %v", path, err)}
		}
	default: // quit while it was still being read
	}
	return nil
}

func replaySummary(ctx context.Context, out io.Writer, path string) error {
	defer debug.SetGCPercent(debug.SetGCPercent(logGCPercent))
	fh, err := openInput(ctx, path, "event log")
	if err != nil {
		return err
	}
	defer fh.Close()
	// One pass through the file, holding no event: the memory does not
	// grow with the log.
	h, sum, err := scenario.SummarizeLog(fh)
	if err != nil {
		if ctx.Err() != nil {
			return runtimeError{errors.New("interrupted")}
		}
		var le *check.LineError
		if errors.As(err, &le) || errors.Is(err, check.ErrNotEventLog) {
			return runtimeError{fmt.Errorf("%s: %v", path, err)}
		}
		return runtimeError{fmt.Errorf("%s: %w", path, err)}
	}
	fmt.Fprint(out, sum.Box(h))
	if err := sum.Doubt(); err != nil {
		return runtimeError{err}
	}
	return nil
}

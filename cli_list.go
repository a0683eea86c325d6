package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/scenario"
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
	for _, s := range scenario.Strategies {
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
	cmd := &cobra.Command{
		Use:   "replay FILE",
		Short: "Read a recorded event log and fold it into the run's summary and verdict",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("replay needs one event log: locklab replay FILE.jsonl")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return replaySummary(cmd.OutOrStdout(), args[0])
		},
	}
	cmd.Flags().BoolVar(&summary, "summary", true, "print the summary box and verdict")
	return cmd
}

func replaySummary(out io.Writer, path string) error {
	fh, err := os.Open(path)
	if err != nil {
		return runtimeError{fmt.Errorf("cannot open the event log: %w", err)}
	}
	defer fh.Close()
	rec, err := scenario.ReadRecording(fh)
	if err != nil {
		var le *scenario.LineError
		if errors.As(err, &le) || errors.Is(err, scenario.ErrNotEventLog) {
			return runtimeError{fmt.Errorf("%s: %v", path, err)}
		}
		return runtimeError{fmt.Errorf("%s: %w", path, err)}
	}
	fmt.Fprint(out, scenario.Summarize(rec.Header, rec.Events).Box(rec.Header))
	return nil
}

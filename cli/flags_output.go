package cli

import "github.com/spf13/pflag"

// outputFlags say what a run leaves behind: its event log, and for run
// the JSON results and how much it prints.
type outputFlags struct {
	events   string
	jsonFile string
	quiet    bool
}

// addEventsFlag registers --events.
func addEventsFlag(fl *pflag.FlagSet, f *outputFlags) {
	fl.StringVar(&f.events, "events", "", "write the run's event log (JSON Lines) to FILE")
}

// addReportFlags registers run's --json and --quiet.
func addReportFlags(fl *pflag.FlagSet, f *outputFlags) {
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "print the summary only, not one line per attempt")
	fl.StringVar(&f.jsonFile, "json", "", "write the results in the lab's JSON schema to FILE")
}

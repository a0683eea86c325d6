// Command locklab makes distributed locking visible: workers race on a real
// Redis protocol server under a chosen lock strategy, and every step they
// take lands in an event log that locklab summarises, checks and replays.
// The command line lives in package cli.
package main

import (
	"os"

	"github.com/locklab/locklab/cli"
)

func main() { os.Exit(cli.Main()) }

package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/locklab/locklab/check"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
)

// stopGrace is how long an interrupted run may take to wind down before
// the command reports what it has: thousands of workers each leaving
// their step take longer than anyone waits after Ctrl-C, and the summary
// of what was logged so far is the answer either way.
const stopGrace = 400 * time.Millisecond

// awaitRun waits for run to end; once ctx is done (Ctrl-C, SIGTERM) it
// waits stopGrace more at most. ended says whether the run ended: if not,
// its workers may still be appending to its log.
func awaitRun(ctx context.Context, run *scenario.Run) (ended bool, err error) {
	select {
	case <-run.Done():
		return true, run.Wait()
	case <-ctx.Done():
	}
	t := time.NewTimer(stopGrace)
	defer t.Stop()
	select {
	case <-run.Done():
		return true, run.Wait()
	case <-t.C:
		run.Stop()
		return false, ctx.Err()
	}
}

// abandon says what an interrupted run that did not wind down in time
// leaves: on the embedded store nothing (it ends with the process, and
// closing it under workers still stepping would only add to the wait); on
// a real server, what closing the store deleted, as for any interrupted run.
func abandon(st *store.Store) error {
	if st.Kind() == store.Embedded {
		return errors.New("interrupted; stopped without waiting for every worker to leave its step (the embedded store ends with locklab)")
	}
	return interrupted(st, st.Close())
}

// unfinishedVerdict is the verdict of a run abandoned before its workers
// logged how they stopped: no violation seen is not "correct", only
// "interrupted". A violation already seen stays the verdict.
func unfinishedVerdict(sum *check.Summary, workers int) {
	cut := strings.HasPrefix(sum.Verdict, "INDETERMINATE") // operations the stop cut off, not the server's silence
	if !cut && !strings.HasPrefix(sum.Verdict, "CORRECT") && !strings.HasPrefix(sum.Verdict, "INCOMPLETE") {
		return
	}
	open := workers - len(sum.Entries)
	if cut {
		open = max(open, min(sum.UnansweredOps, workers)) // a worker has one operation in flight at most
	}
	sum.Verdict = fmt.Sprintf("INTERRUPTED — %d of %d worker(s) had not finished", max(open, 1), workers)
	sum.Detail = "No safety violation up to the moment the run was stopped."
	if cut {
		sum.Detail += fmt.Sprintf(" %d operation(s) in flight were cut off by the stop: what they did is unknown.", sum.UnansweredOps)
	}
}

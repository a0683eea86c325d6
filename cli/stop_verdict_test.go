package cli

import (
	"strings"
	"testing"

	"github.com/locklab/locklab/check"
)

// An interrupted run is INTERRUPTED unless a violation was already seen:
// operations the stop itself cut off are not the server's silence, so they
// do not make it INDETERMINATE; a violation seen stays the verdict.
func TestAnInterruptedRunIsInterrupted(t *testing.T) {
	for _, tc := range []struct {
		verdict string
		entries int
		cut     int
		want    string
	}{
		{"CORRECT", 3, 0, "INTERRUPTED — 7 of 10 worker(s) had not finished"},
		{"INDETERMINATE — 6 operation(s) unanswered: acquire", 10, 6, "INTERRUPTED — 6 of 10 worker(s) had not finished"},
		{"INCOMPLETE — no end record", 10, 0, "INTERRUPTED — 1 of 10 worker(s) had not finished"},
		{"UNSAFE — 2 entries into an occupied section", 4, 0, "UNSAFE — 2 entries into an occupied section"},
	} {
		sum := &check.Summary{Verdict: tc.verdict, Entries: make([]check.Entry, tc.entries), UnansweredOps: tc.cut}
		unfinishedVerdict(sum, 10)
		if sum.Verdict != tc.want {
			t.Errorf("%q: %q, want %q", tc.verdict, sum.Verdict, tc.want)
		}
		if tc.cut > 0 && !strings.Contains(sum.Detail, "6 operation(s) in flight were cut off by the stop") {
			t.Errorf("%q: the detail does not say what the stop cut off: %q", tc.verdict, sum.Detail)
		}
	}
}

package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/locklab/locklab/check"

	"github.com/locklab/locklab/scenario"
)

// thousandsSep is a thousands separator: the comma of 1,225.
var thousandsSep = regexp.MustCompile(`,(\d{3})`)

// checkTallyCounts reads the counts of check's "locklab's tally:" line:
// label → value, thousands separators dropped.
func checkTallyCounts(t *testing.T, out string) map[string]string {
	t.Helper()
	_, line, ok := strings.Cut(out, "locklab's tally: ")
	if !ok {
		t.Fatalf("check printed no tally:\n%s", out)
	}
	line, _, _ = strings.Cut(line, "\n")
	got := map[string]string{}
	for _, part := range strings.Split(line, "; ") {
		i := strings.IndexAny(part, "0123456789")
		if i <= 0 {
			t.Fatalf("a count without a number: %q in %q", part, line)
		}
		got[strings.TrimSpace(part[:i])] = thousandsSep.ReplaceAllString(part[i:], "$1")
	}
	return got
}

// The counts check prints are the summary's, number for number: both are
// the one tally's. Over scenarios × strategies whose runs oversell,
// overlap, lose updates, land and refuse stale writes, duplicate, deadlock
// and crash, each log's check is compared with its summary read back.
func TestCheckCountsAreTheSummarys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, run := range [][]string{
		{"oversell", "none"}, {"oversell", "safe"}, {"oversell", "naive"}, {"naive-flaws", "naive"},
		{"crash", "safe"}, {"ttl-expiry", "safe"}, {"ttl-expiry", "fenced"}, {"fencing", "fenced"},
		{"deadlock", "safe"}, {"queue-double", "plain"}, {"webhook", "none"}, {"webhook", "idempotency"},
		{"renewal", "watchdog"}, {"retry", "full-jitter"}, {"cron", "release"}, {"redlock", "redlock"},
	} {
		name := run[0] + "/" + run[1]
		path := filepath.Join(dir, run[0]+"-"+run[1]+".jsonl")
		// An unsafe run exits 1; its log is what is compared.
		if code, _, stderr := cli(t, "run", run[0], "--lock", run[1], "--seed", "7", "-q", "--events", path); code > 1 {
			t.Fatalf("%s: run: exit %d: %s", name, code, stderr)
		}
		code, out, stderr := cli(t, "check", path, "--timeout", "1m")
		if code != 0 {
			t.Fatalf("%s: check: exit %d: %s", name, code, stderr)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		_, s, err := scenario.SummarizeLog(f)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		f.Seek(0, 0)
		rec, err := check.ReadRecording(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// The tally folds lost updates one resource's change at a time:
		// the count over the whole log is the same.
		if n := check.LostUpdates(check.Slice(rec.Events)); n != s.LostUpdates {
			t.Errorf("%s: the tally says %d lost updates, the whole log's updates %d", name, s.LostUpdates, n)
		}
		lost := fmt.Sprint(s.LostUpdates)
		if s.LostUpdatesMax > s.LostUpdates {
			lost += " to " + fmt.Sprint(s.LostUpdatesMax)
		}
		unanswered := fmt.Sprint(s.UnansweredOps)
		if s.UnansweredKinds != "" {
			unanswered += " (" + s.UnansweredKinds + ")"
		}
		want := map[string]string{
			"overlap entries": fmt.Sprint(s.Overlaps), "overlap pairs": fmt.Sprint(s.OverlapPairs),
			"lost updates": lost, "stale writes": fmt.Sprintf("%d landed, %d refused", s.StaleLanded, s.FenceRejected),
			"duplicates": fmt.Sprint(s.Duplicates), "deadlocks": fmt.Sprint(s.Deadlocks), "violations": fmt.Sprint(s.Violations),
			"failed ops": fmt.Sprint(s.FailedOps), "indeterminate ops": unanswered,
		}
		if s.HasStock {
			want["sold"] = fmt.Sprintf("%d of %d", s.Successes, s.InitialStock)
		}
		got := checkTallyCounts(t, out)
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: check says %s %q, the summary %q", name, k, got[k], v)
			}
		}
		for k := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("%s: check prints %q, a count the summary does not show", name, k)
			}
		}
		t.Logf("%s: %s", name, strings.TrimSpace(out[strings.Index(out, "locklab's tally"):]))
	}
}

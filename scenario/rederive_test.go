package scenario_test

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/locklab/locklab/check"

	"github.com/locklab/locklab/scenario"
)

// logLines runs a scenario and returns its event log's lines.
func logLines(t *testing.T, name, strategy string, seed uint64) []string {
	t.Helper()
	sc, _ := scenario.Lookup(name)
	var buf bytes.Buffer
	run(t, nil, scenario.Config{Scenario: name, Strategy: strategy, Params: sc.Defaults, Seed: seed, Events: &buf})
	return strings.Split(strings.TrimSpace(buf.String()), "\n")
}

func isViolation(l string) bool { return strings.Contains(l, `"kind":"violation"`) }

// A log whose violation events were removed, moved or forged still gets
// the verdict its events show, and says that its own verdict differs.
func TestReplayDerivesTheVerdictAgain(t *testing.T) {
	t.Parallel()
	var unsafe []string
	for seed := uint64(1); seed <= 5 && !slicesContainsFunc(unsafe, isViolation); seed++ {
		unsafe = logLines(t, "ttl-expiry", "safe", seed) // a busy machine may miss the overlap once
	}
	correct := logLines(t, "oversell", "safe", 1)
	var removed, moved []string
	var vs []string
	for _, l := range unsafe {
		if isViolation(l) {
			vs = append(vs, l)
			continue
		}
		removed = append(removed, l)
	}
	if len(vs) == 0 {
		t.Fatal("ttl-expiry/safe recorded no violation")
	}
	moved = append(append([]string{removed[0]}, vs...), removed[1:]...) // right after the header
	forged := append([]string{correct[0], `{"seq":0,"t":1,"worker":1,"kind":"violation","res":"stock","peer":0,"code":"overlap","msg":"w01 entered stock while w00 is inside"}`}, correct[1:]...)
	// Each forgery is numbered again and keeps time in order, as a careful
	// forger would: a reader refuses lines out of order or missing.
	removed, moved, forged = renumber(removed), renumber(moved), renumber(forged)
	for _, c := range []struct {
		name  string
		lines []string
		truth []string
	}{{"removed", removed, unsafe}, {"moved", moved, unsafe}, {"forged", forged, correct}} {
		t.Run(c.name, func(t *testing.T) {
			want := summarize(t, c.truth)
			for how, s := range map[string]*check.Summary{"loaded": summarize(t, c.lines), "read": summarizeRead(t, c.lines)} {
				if s.Verdict != want.Verdict {
					t.Errorf("%s: verdict %q, its events show %q", how, s.Verdict, want.Verdict)
				}
				if !strings.Contains(s.Mismatch, "this log's verdict differs from what its events show") || !strings.Contains(s.Detail, s.Mismatch) {
					t.Errorf("%s: the mismatch is not reported: %q / %q", how, s.Mismatch, s.Detail)
				}
			}
		})
	}
	if s := summarize(t, unsafe); s.Mismatch != "" {
		t.Errorf("an untouched log reports a mismatch: %s", s.Mismatch)
	}
}

func summarize(t *testing.T, lines []string) *check.Summary {
	t.Helper()
	l, err := scenario.LoadLog(strings.NewReader(strings.Join(lines, "\n") + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	return scenario.Summarize(l.Header, l.Log)
}

func summarizeRead(t *testing.T, lines []string) *check.Summary {
	t.Helper()
	r, err := check.ReadRecording(strings.NewReader(strings.Join(lines, "\n") + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	return scenario.Summarize(r.Header, check.Slice(r.Events))
}

func slicesContainsFunc(ls []string, f func(string) bool) bool {
	for _, l := range ls {
		if f(l) {
			return true
		}
	}
	return false
}

var (
	seqField = regexp.MustCompile(`^\{"seq":\d+,"t":\d+`)
	tField   = regexp.MustCompile(`"t":(\d+)`)
)

// renumber numbers the events of a log's lines from 0 again, and moves an
// event's time up to the last one's where it went back.
func renumber(lines []string) []string {
	out := make([]string, len(lines))
	var seq, t int64
	for i, l := range lines {
		if i == 0 || !seqField.MatchString(l) {
			out[i] = l
			continue
		}
		at, _ := strconv.ParseInt(tField.FindStringSubmatch(l)[1], 10, 64)
		t = max(t, at)
		out[i] = seqField.ReplaceAllString(l, fmt.Sprintf(`{"seq":%d,"t":%d`, seq, t))
		seq++
	}
	return out
}

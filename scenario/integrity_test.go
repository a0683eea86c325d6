package scenario_test

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
)

// A log is a run's whole record only if it says so: each way of cutting,
// reordering or editing a real log is named, with its line, by every
// reader, and the untouched log reads without a word.
func TestLogIntegrity(t *testing.T) {
	t.Parallel()
	lines := logLines(t, "oversell", "safe", 1)
	n := len(lines)
	finalRead := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, `"worker":-1,"kind":"read","res":"stock"`) })
	if finalRead < 0 || !strings.Contains(lines[n-1], `{"summary":`) {
		t.Fatalf("the log has no final read or no end record:\n%s", strings.Join(lines, "\n"))
	}
	swap := func(i, j int) []string {
		c := slices.Clone(lines)
		c[i], c[j] = c[j], c[i]
		return c
	}
	edit := func(i int, from, to string) []string {
		c := slices.Clone(lines)
		if !strings.Contains(c[i], from) {
			t.Fatalf("line %d has no %q: %s", i+1, from, c[i])
		}
		c[i] = strings.Replace(c[i], from, to, 1)
		return c
	}
	tOf := regexp.MustCompile(`"t":\d+`)
	noLock := edit(0, `"strategy":"safe"`, `"strategy":"none"`) // the end record too
	noLock[n-1] = strings.Replace(noLock[n-1], `"strategy":"safe"`, `"strategy":"none"`, 1)
	isAcquired := func(l string) bool { return strings.Contains(l, `"kind":"acquired"`) }
	for name, tc := range map[string]struct {
		lines []string
		what  string // "INCOMPLETE", "INCONSISTENT", or "" for a refused line
		line  int
		msg   string
	}{
		"cut at a line boundary":  {lines[:30], "INCOMPLETE", 30, "with no end record"},
		"only the end record cut": {lines[:n-1], "INCOMPLETE", n - 1, "with no end record"},
		"events missing":          {slices.Delete(slices.Clone(lines), 10, 12), "INCOMPLETE", 11, "2 event(s) are missing"},
		"seq out of order":        {swap(10, 11), "", 12, "the lines are out of order"},
		"t goes back": {func() []string {
			c := slices.Clone(lines)
			c[20] = tOf.ReplaceAllString(c[20], `"t":0`)
			return c
		}(), "", 21, "time never goes back"},
		"final read edited":  {edit(finalRead, `"stock":0`, `"stock":1`), "INCONSISTENT", finalRead + 1, "the final read says stock 1, but the last write(s) before it left 0"},
		"strategy edited":    {edit(0, `"strategy":"safe"`, `"strategy":"none"`), "INCONSISTENT", n, "the header says strategy none, the end record says safe"},
		"workers edited":     {edit(0, `"workers":50`, `"workers":49`), "", 0, "out of range"},
		"more workers":       {edit(0, `"workers":50`, `"workers":60`), "INCONSISTENT", n, "the header says workers 60, the end record says 50"},
		"two logs joined":    {append(slices.Clone(lines), lines[1:5]...), "INCONSISTENT", n + 1, "a line after the end record"},
		"lock under no lock": {noLock, "INCONSISTENT", slices.IndexFunc(noLock, isAcquired) + 1, "the header says strategy none (no lock), yet this line is a lock's"},
	} {
		text := strings.Join(tc.lines, "\n") + "\n"
		for reader, read := range map[string]func() error{
			"ReadRecording": func() error { _, err := check.ReadRecording(strings.NewReader(text)); return err },
			"LoadLog":       func() error { _, err := scenario.LoadLog(strings.NewReader(text)); return err },
			"SummarizeLog":  func() error { _, _, err := scenario.SummarizeLog(strings.NewReader(text)); return err },
		} {
			err := read()
			var ie *check.IntegrityError
			var le *check.LineError
			switch {
			case err == nil:
				t.Errorf("%s, %s: read without a word", name, reader)
			case tc.what != "" && (!errors.As(err, &ie) || ie.What != tc.what || ie.Line != tc.line):
				t.Errorf("%s, %s: got %v, want %s at line %d", name, reader, err, tc.what, tc.line)
			case tc.what == "" && tc.line != 0 && (!errors.As(err, &le) || le.Line != tc.line):
				t.Errorf("%s, %s: got %v, want a refusal of line %d", name, reader, err, tc.line)
			case !strings.Contains(err.Error(), tc.msg) || strings.Contains(err.Error(), "\n"):
				t.Errorf("%s, %s: got %q, want one line with %q", name, reader, err, tc.msg)
			}
		}
	}
	if _, err := check.ReadRecording(strings.NewReader(strings.Join(lines, "\n") + "\n")); err != nil {
		t.Errorf("the untouched log: %v", err)
	}
}

// A replay of a log that is not whole draws what it read and says why it
// has no verdict: the checker's verdict beat is not put back in.
func TestStreamLogOfACutLogHasNoVerdict(t *testing.T) {
	t.Parallel()
	lines := logLines(t, "oversell", "safe", 1)
	cut := strings.Join(lines[:len(lines)-1], "\n") + "\n" // the verdict beat is in, the end record is not
	ld, err := scenario.StreamLog(strings.NewReader(cut))
	if err != nil {
		t.Fatal(err)
	}
	<-ld.Done()
	var ie *check.IntegrityError
	if !errors.As(ld.Err(), &ie) || ie.What != "INCOMPLETE" {
		t.Fatalf("err %v, want INCOMPLETE", ld.Err())
	}
	for i := range ld.Log.Len() {
		if e := ld.Log.At(i); e.Kind == event.KindBeat && e.Code == scenario.BeatVerdict {
			t.Fatalf("a verdict beat in a cut log: %s", e.Msg)
		}
	}
}

// A header whose node count is not the one the votes went to is named.
func TestLogIntegrityNodes(t *testing.T) {
	t.Parallel()
	sc, _ := scenario.Lookup("redlock")
	p := sc.Defaults
	p.Part = "quorum"
	var buf bytes.Buffer
	run(t, nil, scenario.Config{Scenario: "redlock", Strategy: "redlock", Params: p, Seed: 1, Events: &buf})
	text := buf.String()
	if _, err := check.ReadRecording(strings.NewReader(text)); err != nil {
		t.Fatalf("the untouched log: %v", err)
	}
	edited := strings.Replace(text, fmt.Sprintf(`"nodes":%d`, p.Nodes), fmt.Sprintf(`"nodes":%d`, p.Nodes+2), 1)
	_, err := check.ReadRecording(strings.NewReader(edited))
	var ie *check.IntegrityError
	if !errors.As(err, &ie) || ie.What != "INCONSISTENT" || !strings.Contains(ie.Msg, fmt.Sprintf("the header says %d nodes, the votes went to %d", p.Nodes+2, p.Nodes)) {
		t.Fatalf("got %v", err)
	}
}

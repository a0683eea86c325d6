package check

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/locklab/locklab/event"
)

// The JSON report says what the run cannot know (operations unanswered,
// calls the library gave up on) and where the machine held it up; a run
// with none of these keeps the lab's schema as it was.
func TestReportSaysWhatIsUnknown(t *testing.T) {
	fields := func(s *Summary) map[string]any {
		var buf bytes.Buffer
		if err := NewReport(event.Header{}, s).WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := fields(&Summary{Verdict: "INDETERMINATE", UnansweredOps: 2, GaveUpOps: 1, Machine: "The machine could not keep up at 1×"})
	if m["indeterminate_ops"] != 2.0 || m["gave_up_ops"] != 1.0 || m["machine"] != "The machine could not keep up at 1×" {
		t.Errorf("unknowns: %v, %v, %v", m["indeterminate_ops"], m["gave_up_ops"], m["machine"])
	}
	for _, k := range []string{"indeterminate_ops", "gave_up_ops", "machine"} {
		if _, ok := fields(&Summary{Verdict: "CORRECT"})[k]; ok {
			t.Errorf("a run with nothing unknown reports %s", k)
		}
	}
}

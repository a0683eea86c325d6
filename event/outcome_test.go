package event

import "testing"

// Each outcome survives a write and both readers: a call a library gave up
// on stays gave_up, not ok, after a log is read back.
func TestOutcomesReadBackAsWritten(t *testing.T) {
	for o := OutcomeOK; o < outcomeCount; o++ {
		e := Event{T: 5, Kind: KindReleaseFailed, Res: "lock:stock", Token: "ab", Outcome: o}.WithCall(3)
		line := AppendJSON(nil, &e)
		var fast Event
		if _, _, err := DecodeEventForTest(line, &fast); err != nil || fast.Outcome != o {
			t.Errorf("%s: the fast reader got %s (%v) from %s", o, fast.Outcome, err, line)
		}
		if slow, ok := SlowDecodeForTest(line); !ok || slow.Outcome != o {
			t.Errorf("%s: encoding/json got %s from %s", o, slow.Outcome, line)
		}
		if p, ok := ParseOutcome(o.String()); !ok || p != o {
			t.Errorf("%s does not parse back", o)
		}
	}
	if !OutcomeGaveUp.MayHaveHappened() || !OutcomeIndeterminate.MayHaveHappened() || OutcomeFailed.MayHaveHappened() || OutcomeOK.MayHaveHappened() {
		t.Error("MayHaveHappened: only indeterminate and gave_up leave the effect unknown")
	}
}

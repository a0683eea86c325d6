package schedule_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/schedule"
)

func sample(t *testing.T) *schedule.Schedule {
	t.Helper()
	sc, _ := scenario.Lookup("oversell")
	p := sc.Defaults
	p.Nodes = 5
	faults, err := schedule.ParseFaults("pause:w02@12.5ms+600ms, node-pause:n1@1.000001ms,node-pause:n1@40ms,crash:w00@3s,clock-jump:n4@1ms", p)
	if err != nil {
		t.Fatal(err)
	}
	return &schedule.Schedule{Scenario: "oversell", Strategy: "redlock", Params: p, Seed: 42, Faults: faults}
}

func TestAScheduleReadsBackAsWritten(t *testing.T) {
	s := sample(t)
	var b bytes.Buffer
	if err := s.Write(&b); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "\n"); n != 1+len(s.Faults) {
		t.Fatalf("%d lines, want a header and one per fault:\n%s", n, b.String())
	}
	back, err := schedule.Read(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	var again bytes.Buffer
	_ = back.Write(&again)
	if again.String() != b.String() {
		t.Fatalf("read back and written again:\n%s\nwant\n%s", again.String(), b.String())
	}
	if f := back.Faults[1]; f.Kind != scenario.FaultNodePause || f.Node != 1 || f.At != time.Millisecond+time.Nanosecond {
		t.Errorf("fault 2 read as %+v: every nanosecond of its instant counts", f)
	}
	if got := schedule.Spec(back.Faults); !strings.HasPrefix(got, "clock-jump:n4@1ms,node-pause:n1@1.000001ms,pause:w02@12.5ms+600ms,") {
		t.Errorf("spec %q", got)
	}
}

func TestBadSchedulesAreRefusedInOneLine(t *testing.T) {
	var good bytes.Buffer
	_ = sample(t).Write(&good)
	header, _, _ := strings.Cut(good.String(), "\n")
	for name, c := range map[string]struct{ text, want string }{
		"newer version":  {strings.Replace(header, `"version":1`, `"version":3`, 1), "version 3"},
		"other format":   {strings.Replace(header, `"locklab-schedule"`, `"locklab-events"`, 1), `"locklab-events" is not a schedule`},
		"an event log":   {`{"format":"locklab-events","version":2,"scenario":"oversell"}`, "not a schedule"},
		"not json":       {"hello\n", "not a locklab-schedule header"},
		"empty":          {"", "empty"},
		"unknown field":  {header + "\n" + `{"at":"1ms","fault":"crash","worker":"w00","why":"x"}`, "line 2"},
		"unknown kind":   {header + "\n" + `{"at":"1ms","fault":"explode","worker":"w00"}`, "unknown kind"},
		"bad instant":    {header + "\n" + `{"at":"-1ms","fault":"crash","worker":"w00"}`, "instant"},
		"node too high":  {header + "\n" + `{"at":"1ms","fault":"node-stop","node":9}`, "n0 to n4"},
		"control chars":  {strings.Replace(header, `"oversell"`, `"over\u001b[2Jsell"`, 1), "control characters"},
		"escape in kind": {header + "\n" + `{"at":"1ms","fault":"\u001b]0;pwned\u0007","worker":"w00"}`, "unknown kind"},
		"long line":      {header + "\n" + `{"at":"` + strings.Repeat("1", 9000) + `"}`, "longer than"},
		"huge":           {header + "\n" + strings.Repeat(" \n", schedule.MaxBytes), "bigger than"},
		"step zero":      {header + "\n" + `{"step":0,"worker":"w00"}`, "steps counted from 1"},
		"step escape":    {header + "\n" + `{"step":3,"worker":"w0\u001b[2J"}`, "control characters"},
		"step field":     {header + "\n" + `{"step":3,"worker":"w00","why":1}`, "not a step line"},
		"fault after":    {header + "\n" + `{"step":3,"worker":"w00"}` + "\n" + `{"at":"1ms","fault":"crash","worker":"w00"}`, "faults come first"},
	} {
		_, err := schedule.Read(strings.NewReader(c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
			continue
		}
		if msg := err.Error(); strings.ContainsAny(msg, "\n\x1b\x07") || len(msg) > 200 {
			t.Errorf("%s: not one clean line: %q", name, msg)
		}
	}
}

func TestFaultSpecs(t *testing.T) {
	sc, _ := scenario.Lookup("oversell")
	p := sc.Defaults
	for spec, want := range map[string]string{
		"pause:w00@10ms":          "",
		"node-pause@2ms":          "", // node 0
		"pause@10ms":              "needs a worker",
		"pause:w00":               "no instant",
		"crash:w00@1ms+2ms":       "takes no +FOR",
		"pause:w00@1ms+0s":        "above 0",
		"node-stop:n1@1ms":        "n0 to n0",
		"pause:w00@25h":           "from 0 to 24h",
		"nap:w00@1ms":             "unknown kind",
		",":                       "no fault given",
		"pause:w99999999999@1ms":  "needs a worker",
		"clock-jump:n0@1ms+500ms": "",
	} {
		_, err := schedule.ParseFaults(spec, p)
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v", spec, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%q: %v, want %q", spec, err, want)
		}
	}
}

package schedule_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/schedule"
)

func TestNetworkFaultSpecsRoundTrip(t *testing.T) {
	p := event.Params{Workers: 5, Nodes: 3}
	spec := "latency.down=80ms~20ms:w01-n0@10ms+1s,bandwidth=2KB:n1@0s,timeout.up:w02@5ms,timeout=1s:w03-n2@5ms," +
		"reset.down=10ms:w04@1ms,slow-close=500ms:w00-n1@0s,limit-data.up=200B:w01@2ms,partition:w02-n2@3ms+50ms,lift-partition:w02-n2@20ms"
	faults, err := schedule.ParseFaults(spec, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(faults) != 9 || faults[0].Kind != scenario.FaultNet || faults[0].Worker != -1 || faults[0].Node != 1 {
		t.Fatalf("parsed %+v", faults)
	}
	again, err := schedule.ParseFaults(schedule.Spec(faults), p)
	if err != nil {
		t.Fatalf("%s: %v", schedule.Spec(faults), err)
	}
	if schedule.Spec(again) != schedule.Spec(faults) {
		t.Fatalf("written back %q, read again %q", schedule.Spec(faults), schedule.Spec(again))
	}
	// and through a schedule file
	var buf bytes.Buffer
	s := &schedule.Schedule{Scenario: "oversell", Strategy: "safe", Params: p, Seed: 1, Faults: faults}
	if err := s.Write(&buf); err != nil {
		t.Fatal(err)
	}
	r, err := schedule.Read(&buf)
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	if schedule.Spec(r.Faults) != schedule.Spec(faults) {
		t.Fatalf("schedule file gave %q, want %q", schedule.Spec(r.Faults), schedule.Spec(faults))
	}
}

func TestBadNetworkFaultSpecsSayWhy(t *testing.T) {
	p := event.Params{Workers: 5, Nodes: 2}
	for spec, want := range map[string]string{
		"latency:w01-n0@0s":            "latency needs a delay above 0",
		"latency=5ms:w01-n2@0s":        `"n2" is not a node of this run`,
		"latency=5ms@0s":               "a network fault needs a link",
		"latency.left=5ms:w01@0s":      `direction "left"`,
		"partition.up:w01@0s":          "a partition cuts both ways",
		"partition=3:w01@0s":           "partition takes no =ARG",
		"bandwidth=fast:w01@0s":        "want a byte count above 0",
		"limit-data=0:w01@0s":          "want a byte count above 0",
		"slow-close:w01@0s":            "slow-close needs a delay above 0",
		"lift-latency=5ms:w01@0s":      "lift-latency takes no =ARG",
		"lift-latency:w01@0s+1s":       "a lift takes no +FOR",
		"lift-nothing:w01@0s":          "unknown network fault",
		"latency=5ms:x01@0s":           `"x01" is not a worker`,
		"latency=2h:w01@0s":            "want a duration from 0 to 1h",
		"reset=5ms:w01-n0@soon":        "instant",
		"timeout=1s:w01-n0@0s+0s":      "+FOR must be a duration above 0",
		"latency=5ms~-1ms:w01-n0@0s":   "want a duration from 0 to 1h",
		"latency=5ms:w01-n0-n1@0s":     "is not a node",
		"latency=5ms:w01-n0@0s\x1b[2J": "instant",
	} {
		_, err := schedule.ParseFaults(spec, p)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", spec, err, want)
			continue
		}
		if strings.ContainsRune(err.Error(), 0x1b) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: the error carries control characters: %q", spec, err)
		}
	}
}

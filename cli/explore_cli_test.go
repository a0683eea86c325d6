package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExploreUsageErrorsExit2(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"explore", "oversell", "--seeds", "0"}, "--seeds must be from 1"},
		{[]string{"explore", "oversell", "--seeds", "-5"}, "--seeds must be from 1"},
		{[]string{"explore", "nope"}, "nope"},
		{[]string{"explore"}, "explore needs one scenario"},
		{[]string{"explore", "oversell", "--lock", "foo"}, `--lock "foo" is not a strategy`},
		{[]string{"explore", "oversell", "--redis", "redis://localhost:6379"}, "simulation-only"},
		{[]string{"explore", "oversell", "--realtime"}, "simulation-only"},
		{[]string{"explore", "oversell", "--lock", "pg-advisory"}, "simulation-only"},
		{[]string{"explore", "oversell", "--lock", "rueidislock"}, "explore is simulation-only: oversell with rueidislock keeps real time (its library reads the wall clock: its deadlines and validity), so its seeds"},
		{[]string{"explore", "crash", "--lock", "redsync"}, "explore is simulation-only: crash with redsync keeps real time"},
		{[]string{"explore", "oversell", "--jobs", "0"}, "--jobs"},
		{[]string{"explore", "oversell", "--faults", "nap:w00@1ms"}, "--faults"},
		{[]string{"explore", "oversell", "--workers", "0"}, "--workers"},
		{[]string{"explore", "oversell", "--out", "explore_cli_test.go"}, "is a file"},
	} {
		code, _, stderr := cli(t, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", c.args, code, stderr, c.want)
		}
	}
}

func TestExploreOfASafeLockExits0(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, stdout, stderr := cli(t, "explore", "oversell", "--lock", "safe", "--workers", "10", "--seeds", "30", "--out", dir)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q\n%s", code, stderr, stdout)
	}
	for _, want := range []string{"30 seeds in", "CORRECT  30     100.0%  1", "sold          1: 30"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in\n%s", want, stdout)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("nothing broke, yet %d files were written", len(entries))
	}
}

// explore finds naive breaking, shrinks it, and run --schedule replays the
// shrunk case byte for byte after the header.
func TestExploreShrinksAndRunReplaysTheSchedule(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := cli(t, "explore", "oversell", "--lock", "naive", "--workers", "10", "--stock", "5",
		"--retry", "full-jitter", "--ttl", "5ms", "--seeds", "40", "--out", dir, "--json")
	if code != 1 || !strings.Contains(stderr, "the lock broke") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var rep exploreReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if rep.SeedsRun != 40 || len(rep.Shrunk) == 0 {
		t.Fatalf("report: %+v", rep)
	}
	for _, found := range rep.Shrunk {
		if found.Workers > 10 || found.Events == 0 || !strings.HasPrefix(found.Schedule, dir) {
			t.Errorf("shrunk: %+v", found)
		}
		replay := filepath.Join(t.TempDir(), "replay.jsonl")
		code, out, errOut := cli(t, "run", "--schedule", found.Schedule, "--events", replay, "-q")
		if code != 1 && code != 0 || !strings.Contains(out, found.Verdict) {
			t.Fatalf("run --schedule %s: exit %d, %q\n%s", found.Schedule, code, errOut, out)
		}
		a, _ := os.ReadFile(found.Log)
		b, _ := os.ReadFile(replay)
		_, ab, _ := bytes.Cut(a, []byte("\n"))
		_, bb, _ := bytes.Cut(b, []byte("\n"))
		if len(ab) == 0 || !bytes.Equal(ab, bb) {
			t.Errorf("%s: the replay's events differ from explore's log", found.Class)
		}
	}
}

func TestRunScheduleOutReplaysWithFaults(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sched, first, second := filepath.Join(dir, "a.schedule"), filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	code, _, stderr := cli(t, "run", "oversell", "--lock", "redlock", "--workers", "4", "--ttl", "10ms", "--seed", "7",
		"--faults", "node-pause:n0@300us,node-pause:n0@11ms,crash:w03@2ms", "--schedule-out", sched, "--events", first, "-q")
	if code > 1 || strings.Contains(stderr, "usage") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	text, _ := os.ReadFile(sched)
	if !strings.Contains(string(text), `"fault":"node-pause","node":0`) || strings.Count(string(text), "\n") != 4 {
		t.Fatalf("schedule:\n%s", text)
	}
	cli(t, "run", "oversell", "--schedule", sched, "--events", second, "-q")
	a, _ := os.ReadFile(first)
	b, _ := os.ReadFile(second)
	_, ab, _ := bytes.Cut(a, []byte("\n"))
	_, bb, _ := bytes.Cut(b, []byte("\n"))
	if len(ab) == 0 || !bytes.Equal(ab, bb) {
		t.Fatalf("the replay differs from the run")
	}
	if !bytes.Contains(ab, []byte("crashed by an injected fault")) {
		t.Errorf("the planned crash is not in the log")
	}
}

func TestRunScheduleBadInputExit2(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.schedule")
	if code, _, stderr := cli(t, "run", "ttl-expiry", "--lock", "safe", "--seed", "3", "--schedule-out", good, "-q"); code > 1 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	text, _ := os.ReadFile(good)
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		_ = os.WriteFile(p, []byte(s), 0o644)
		return p
	}
	newer := write("newer", strings.Replace(string(text), `"version":1`, `"version":9`, 1))
	hostile := write("hostile", "\x1b]0;owned\x07"+strings.Repeat("A", 9000)+"\n")
	huge := write("huge", string(text)+strings.Repeat("\n", 2<<20))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--schedule", newer}, "version 9: this locklab reads versions 1 and 2"},
		{[]string{"run", "--schedule", hostile}, "longer than"},
		{[]string{"run", "--schedule", huge}, "bigger than"},
		{[]string{"run", "--schedule", dir}, dir},
		{[]string{"run", "oversell", "--schedule", good}, "a schedule of ttl-expiry/safe, not of oversell"},
		{[]string{"run", "--schedule", good, "--lock", "naive"}, "not of --lock naive"},
		{[]string{"run", "--schedule", good, "--workers", "3"}, "--workers does not apply with --schedule"},
	} {
		code, _, stderr := cli(t, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 || strings.ContainsAny(stderr, "\x1b\x07") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one clean line with %q", c.args[:3], code, stderr, c.want)
		}
	}
	if code, out, stderr := cli(t, "run", "--schedule", good, "-q"); code > 1 || !strings.Contains(out, "Seed:            3") {
		t.Errorf("the good schedule: exit %d, %s\n%s", code, stderr, out)
	}
}

// A hand-chosen step that cannot be taken ends the run in one line, exit
// 1; record --schedule marks every event and the violation.
func TestScheduleStepsCLI(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "lv.schedule")
	head := `{"format":"locklab-schedule","version":2,"scenario":"oversell","strategy":"none","seed":1,"params":{"workers":2,"stock":1,"delay_ms":0,"work_ms":0,"ttl_ms":5000,"retry":"none","max_retries":10,"retry_base_ms":1,"retry_cap_ms":5000,"nodes":1}}` + "\n"
	steps := `{"step":3,"worker":"w00"}` + "\n" + `{"step":4,"worker":"w00"}` + "\n" + `{"step":5,"worker":"w01"}` + "\n" + `{"step":6,"worker":"w01"}` + "\n"
	_ = os.WriteFile(good, []byte(head+steps), 0o644)
	bad := filepath.Join(dir, "bad.schedule")
	_ = os.WriteFile(bad, []byte(head+steps+`{"step":9,"worker":"w00"}`+"\n"), 0o644)
	code, _, stderr := cli(t, "run", "--schedule", bad, "-q")
	if code != 1 || stderr != "locklab: step 9: w00 cannot move (it has finished)\n" {
		t.Errorf("bad step: exit %d, %q", code, stderr)
	}
	cast := filepath.Join(dir, "lv.cast")
	if code, _, stderr := cli(t, "record", "--schedule", good, "--cast", cast, "--size", "80x24"); code != 0 {
		t.Fatalf("record: exit %d, %s", code, stderr)
	}
	data, _ := os.ReadFile(cast)
	if !strings.Contains(string(data), `"m", "event 1: system sets up stock`) || !strings.Contains(string(data), `"m", "violation: oversold`) {
		t.Errorf("record --schedule: no marker at the first event or at the oversell:\n%.2000s", data)
	}
	if code, _, stderr := cli(t, "record", "--schedule", good, "--cast", cast, "--workers", "3"); code != 2 || !strings.Contains(stderr, "--workers does not apply") {
		t.Errorf("record --schedule --workers: exit %d, %q", code, stderr)
	}
}

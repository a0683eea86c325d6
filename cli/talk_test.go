package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTalkCheck(t *testing.T) {
	t.Parallel()
	code, out, stderr := cli(t, "talk", "--check", "../talks/locking-101.yaml")
	if code != 0 || stderr != "" || !strings.Contains(out, "7 scene(s), fine") || !strings.Contains(out, "redlock · redlock") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	typo := write("typo.yaml", "title: x\nscenes:\n  - scenario: oversell\n    strategy: nonee\n")
	trunc := write("trunc.yaml", "scenes:\n  - scenario: oversell\n    params: {workers: 3, stock: [1\n")
	wrongLog := write("wronglog.yaml", "scenes:\n  - scenario: deadlock\n    log: "+mustAbs(t, "../tui/testdata/crash.jsonl")+"\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"talk", "--check", typo}, typo + ":4: \"nonee\" is not a strategy of oversell: want one of none, naive"},
		{[]string{"talk", "--check", trunc}, trunc + ":2: not valid YAML: did not find expected"},
		{[]string{"talk", "--check", filepath.Join(dir, "missing.yaml")}, "no talk file at " + filepath.Join(dir, "missing.yaml")},
		{[]string{"talk", "--check", wrongLog}, wrongLog + ":2: log " + mustAbs(t, "../tui/testdata/crash.jsonl") + " is a run of crash · safe, but the scene says deadlock · safe"},
		{[]string{"talk", "--check", "--notes", typo}, "--check and --notes do not go together"},
		{[]string{"talk"}, "talk needs one talk file"},
		{[]string{"talk", "../talks/locking-101.yaml"}, "a talk needs a terminal"},
		{[]string{"talk", "../talks/locking-101.yaml", "--speed", "0"}, "--speed must be a number from 0.00005 to 10"},
		{[]string{"record", "--talk", "../talks/locking-101.yaml", "--cast", filepath.Join(dir, "x.cast"), "--workers", "3"}, "--talk takes each scene's parameters from the talk file: --workers does not apply"},
		{[]string{"record", "--talk", "../talks/locking-101.yaml", "oversell", "--cast", filepath.Join(dir, "x.cast")}, "record --talk records the talk's own scenes"},
		{[]string{"record", "--talk", "../tui/testdata/talk-3.yaml", "--from", "../tui/testdata/crash.jsonl", "--cast", filepath.Join(dir, "x.cast")}, "--talk ../tui/testdata/talk-3.yaml has 3 scenes: give one --from log per scene, in order (got 1)"},
		{[]string{"record", "--talk", "../tui/testdata/talk-3.yaml", "--from", "../tui/testdata/crash.jsonl", "--from", "../tui/testdata/crash.jsonl", "--from", "../tui/testdata/crash.jsonl", "--cast", filepath.Join(dir, "x.cast")}, "--from ../tui/testdata/crash.jsonl is a run of crash · safe; scene 1 of ../tui/testdata/talk-3.yaml is ttl-expiry · fenced"},
	} {
		code, _, stderr := cli(t, c.args...)
		if code != 2 {
			t.Errorf("%v: exit %d", c.args, code)
		}
		oneLine(t, strings.Join(c.args, " "), stderr, c.want)
	}
}

func mustAbs(t *testing.T, p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Two recordings of a talk whose scenes are saved runs are the same bytes.
func TestRecordTalkTwiceIsIdentical(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var casts [][]byte
	for _, name := range []string{"a.cast", "b.cast"} {
		out := filepath.Join(dir, name)
		code, stdout, stderr := cli(t, "record", "--talk", "../tui/testdata/talk-3.yaml", "--cast", out, "--size", "100x30")
		if code != 0 || !strings.Contains(stdout, "recorded Three scenes to") {
			t.Fatalf("exit %d: %s%s", code, stdout, stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		casts = append(casts, b)
	}
	if !bytes.Equal(casts[0], casts[1]) {
		t.Fatal("two recordings of the same talk differ")
	}
	if !bytes.Contains(casts[0], []byte(`"m", "scene 3: `)) {
		t.Error("no marker at the third scene")
	}
}

// A fresh `record oversell:none`, as a user types it, plays the 5 ms race at
// the view's human pace: many frames that differ, not one frame of markers.
func TestRecordOversellFillsFrames(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "o.cast")
	code, _, stderr := cli(t, "record", "oversell:none", "--cast", out, "--size", "100x30")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	distinct := map[string]bool{}
	for _, line := range bytes.Split(b, []byte("\n"))[1:] {
		var ev []any
		if json.Unmarshal(line, &ev) == nil && len(ev) == 3 && ev[1] == "o" {
			distinct[fmt.Sprint(ev[2])] = true
		}
	}
	if len(distinct) < 20 {
		t.Errorf("record oversell:none: %d frames that differ, want at least 20", len(distinct))
	}
}

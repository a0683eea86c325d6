package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFlagsThatCannotWork are refused before anything runs: one line that
// says the valid range or what to do instead, and exit status 2.
func TestFlagsThatCannotWork(t *testing.T) {
	t.Setenv("LOCKLAB_REDIS_URL", "")
	log := writeLog(t, logHeader, `{"seq":1,"t":5,"worker":0,"kind":"attempt"}`)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "oversell", "--speed", "NaN"}, "--speed must be a number from 0.00005 to 10 (got NaN)"},
		{[]string{"run", "oversell", "--speed", "+Inf"}, "--speed must be a number from 0.00005 to 10 (got +Inf)"},
		{[]string{"run", "oversell", "--speed", "1e400"}, `--speed: "1e400" is not a number`},
		{[]string{"run", "oversell", "--redis", "redis://127.0.0.1:1", "--slowmo", "1e-15"}, "--slowmo must be a number from 0.1 to 1000 (got 1e-15)"},
		{[]string{"run", "oversell", "--redis", "redis://127.0.0.1:1", "--slowmo", "NaN"}, "--slowmo must be a number from 0.1 to 1000 (got NaN)"},
		{[]string{"run", "oversell", "--slowmo", "2"}, "--slowmo stretches a real Redis's time (with --redis URL); the embedded store's clock takes --speed"},
		{[]string{"run", "oversell", "--redis", "redis://127.0.0.1:1", "--speed", "2"}, "--speed drives the embedded store's clock; a real Redis (--redis) keeps its own time"},
		{[]string{"run", "all", "--lock", "safe"}, "run all runs every scenario with its own defaults: --lock does not apply (it takes --seed, --quiet, --redis, --speed, --slowmo"},
		{[]string{"run", "all", "--workers", "3", "--json", "x.json"}, "--json and --workers do not apply"},
		{[]string{"run", "redlock", "--redis", "redis://127.0.0.1:1"}, "redlock needs at least 3 independent Redis nodes for a quorum, got 1 URL(s)"},
		{[]string{"run", "oversell", "--lock", "redlock", "--nodes", "2"}, "--nodes 2: redlock needs at least 3 nodes for a quorum (default 5)"},
		{[]string{"run", "oversell", "--json", "/nonexistent/x"}, "--json /nonexistent/x: there is no directory /nonexistent"},
		{[]string{"run", "oversell", "--events", "/nonexistent/x"}, "--events /nonexistent/x: there is no directory /nonexistent"},
		{[]string{"run", "oversell", "--all", "--events", "/nonexistent/x.jsonl"}, "--events /nonexistent/x-none.jsonl: there is no directory"},
		{[]string{"run", "oversell", "--json", os.TempDir()}, "that is a directory"},
		{[]string{"run", "oversell", "--retry", "exponential", "--retry-cap", "1000000h"}, "--retry-cap must be at most 1h"},
		{[]string{"record", "oversell", "--cast", "/nonexistent/x.cast"}, "--cast /nonexistent/x.cast: there is no directory /nonexistent"},
		{[]string{"record", "oversell", "--cast", filepath.Join(t.TempDir(), "x.cast"), "--events", "/nonexistent/x"}, "--events /nonexistent/x: there is no directory"},
		{[]string{"record", "--from", log, "--cast", "x.cast", "--workers", "4"}, "--from records logs that already ran: --workers does not apply"},
		{[]string{"record", "--from", log, "--cast", "x.cast", "--play-speed", "NaN"}, "--play-speed must be a number from 0.00005 to 10 (got NaN)"},
		{[]string{"record", "--from", log, "--cast", "x.cast", "--present", "--hold", "9999h"}, "--hold must be between 100ms and 1m0s"},
		{[]string{"record", "--from", log, "--cast", "x.cast", "--present", "--max-gap", "10ms"}, "--max-gap must be 0 (off) or between 1s and 10m (got 10ms)"},
		{[]string{"replay", "--cast", "x.cast", log}, "replay --cast records the view, which needs a terminal: use locklab record --from"},
		{[]string{"replay", "--summary", "--cast", "x.cast", log}, "replay --cast records the view, --summary opens none"},
		{[]string{"--workers", "5"}, "--workers applies to one scenario: add --scenario NAME (one of oversell,"},
		{[]string{"--slowmo", "3"}, "--slowmo stretches a real Redis's time"},
		{[]string{"--cast", "/nonexistent/x.cast"}, "--cast /nonexistent/x.cast: there is no directory"},
	} {
		code, _, stderr := cli(t, tc.args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (%q)", tc.args, code, stderr)
		}
		oneLine(t, strings.Join(tc.args, " "), stderr, tc.want)
	}
}

// A flag that changes nothing gets a one-line note, and the command runs.
func TestHarmlessFlagsGetANote(t *testing.T) {
	t.Parallel()
	log := writeLog(t, logHeader, `{"seq":1,"t":5,"worker":0,"kind":"attempt"}`, endRecord)
	code, out, stderr := cli(t, "replay", "--summary", "--theme", "mono", log)
	if code != 0 || !strings.Contains(out, "SIMULATION RESULTS") {
		t.Fatalf("exit %d: %s", code, out)
	}
	oneLine(t, "replay --theme", stderr, "note: --theme does not apply to the summary; ignored")
}

// A redlock run on one real server would be a single lock: refused before
// any connection, whatever the server.
func TestRunAllLeavesOutRedlockOnOneServer(t *testing.T) {
	t.Parallel()
	code, _, stderr := cli(t, "run", "all", "--redis", "redis://127.0.0.1:1", "--quiet")
	if code != 1 || !strings.Contains(stderr, "redlock run(s) left out: redlock needs at least 3 Redis nodes, got 1 URL(s)") {
		t.Fatalf("exit %d: %q", code, stderr)
	}
}

// A parameter the scenario has no use for is named in a note; the run goes on.
func TestIgnoredParameterGetsANote(t *testing.T) {
	t.Parallel()
	code, out, stderr := cli(t, "run", "naive-flaws", "--workers", "50", "--order", "sorted", "-q", "--seed", "1")
	if code != 0 || !strings.Contains(out, "naive-flaws (5 workers") {
		t.Fatalf("exit %d: %s", code, out)
	}
	for _, want := range []string{
		"locklab: note: --workers does not apply to naive-flaws: each of its 5 workers plays a part; ignored\n",
		"locklab: note: --order is deadlock's lock order; naive-flaws does not use it; ignored\n",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q lacks %q", stderr, want)
		}
	}
}

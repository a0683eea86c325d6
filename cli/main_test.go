package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
)

func cli(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = execute(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestUsageErrorsAreOneLineExit2(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"run", "oversell", "--lock", "foo"},
		{"run", "nope"},
		{"run"},
		{"run", "oversell", "--workers", "abc"},
		{"run", "oversell", "--workers", "0"},
		{"run", "oversell", "--stock", "-1"},
		{"run", "oversell", "--ttl", "0s"},
		{"run", "oversell", "--retry", "sometimes"},
		{"run", "oversell", "--bogus"},
		{"run", "oversell", "--all", "--lock", "safe"},
		{"run", "oversell", "--speed", "50"},
		{"run", "oversell", "--slowmo", "-1"},
		{"run", "oversell", "--redis", "redis://a:1", "--nodes", "3"},
		{"frobnicate"},
		{"replay"},
	} {
		code, _, stderr := cli(t, args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", args, code, stderr)
		}
		if lines := strings.Count(strings.TrimSpace(stderr), "\n"); lines != 0 || !strings.HasPrefix(stderr, "locklab: ") {
			t.Errorf("%v: want one line starting locklab:, got %q", args, stderr)
		}
	}
	_, _, stderr := cli(t, "run", "oversell", "--lock", "foo")
	if !strings.Contains(stderr, "--lock") || !strings.Contains(stderr, "safe") {
		t.Errorf("the message should name the flag and the allowed values: %q", stderr)
	}
}

func TestUnreachableRedis(t *testing.T) {
	t.Parallel()
	start := time.Now()
	code, _, stderr := cli(t, "run", "oversell", "-q", "--redis", "redis://:topsecret@127.0.0.1:1")
	if code == 0 || time.Since(start) > 3*time.Second {
		t.Fatalf("exit %d after %v", code, time.Since(start))
	}
	if strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "127.0.0.1:1") ||
		!strings.Contains(stderr, "docker compose") || strings.Contains(stderr, "topsecret") {
		t.Fatalf("stderr: %q", stderr)
	}
}

func TestRunWritesJSONAndEvents(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	js, evs := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.jsonl")
	// A read-to-write window of 100ms: a busy machine does not serialise
	// twenty workers through it by chance.
	code, out, stderr := cli(t, "run", "oversell", "--lock", "none", "--workers", "20", "--delay", "100ms", "--seed", "5", "--json", js, "--events", evs)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "OVERSOLD") || strings.Count(out, "w0") < 10 {
		t.Fatalf("output:\n%s", out)
	}
	var rep map[string]any
	b, _ := os.ReadFile(js)
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"scenario", "strategy", "initial_stock", "final_stock", "total_attempts", "successes",
		"failures", "oversold", "entries", "timestamp", "duration_ms", "contention_rate", "params", "seed"} {
		if _, ok := rep[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	entries := rep["entries"].([]any)
	e := entries[0].(map[string]any)
	for _, k := range []string{"process_id", "lock_acquired", "stock_before", "stock_after", "duration_ms", "success", "error"} {
		if _, ok := e[k]; !ok {
			t.Errorf("entry lacks %q", k)
		}
	}
	// The summary printed live and the one folded from the file are the same bytes.
	code, replayed, _ := cli(t, "replay", evs)
	if code != 0 {
		t.Fatal("replay failed")
	}
	box := out[strings.Index(out, "╔"):strings.Index(out, "  events:")]
	if replayed != box {
		t.Fatalf("replayed summary differs:\n%s\nvs live:\n%s", replayed, box)
	}
}

func TestReplayBadFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	trunc := filepath.Join(dir, "t.jsonl")
	os.WriteFile(trunc, []byte(`{"format":"locklab-events","version":1,"params":{"workers":1}}`+"\n"+`{"seq":0,"t":1,"wor`), 0o644)
	code, _, stderr := cli(t, "replay", trunc)
	if code != 1 || !strings.Contains(stderr, "line 2") || !strings.Contains(stderr, "truncated") {
		t.Fatalf("truncated: exit %d, %q", code, stderr)
	}
	code, _, stderr = cli(t, "replay", filepath.Join(dir, "missing.jsonl"))
	if code != 1 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Fatalf("missing: exit %d, %q", code, stderr)
	}
}

func TestAllComparesStrategies(t *testing.T) {
	t.Parallel()
	code, out, stderr := cli(t, "run", "oversell", "--all", "-q", "--workers", "10", "--seed", "1")
	if code != 0 {
		t.Fatal(stderr)
	}
	sc, _ := scenario.Lookup("oversell")
	for _, s := range sc.Strategies {
		if !strings.Contains(out, "  "+s+" ") && scenario.NeedsServer(s, store.Servers{}.FromEnv()) == "" {
			t.Errorf("comparison lacks %s:\n%s", s, out)
		}
	}
}

func TestList(t *testing.T) {
	t.Parallel()
	code, out, _ := cli(t, "list")
	if code != 0 || !strings.Contains(out, "oversell") || !strings.Contains(out, "decorrelated-jitter") || !strings.Contains(out, "atomic") {
		t.Fatalf("list:\n%s", out)
	}
}

func FuzzRunFlags(f *testing.F) {
	f.Add("--workers", "12", "--ttl", "3s")
	f.Add("--retry", "fixed", "--max-retries", "-4")
	f.Add("--delay", "1h1ns", "--stock", "99999999999999999999")
	f.Add("--retry-base", "0s", "--retry-cap", "1ms")
	sc, _ := scenario.Lookup("oversell")
	f.Fuzz(func(t *testing.T, a, b, c, d string) {
		fl := &runFlags{}
		cmd := newRunCmdFor(fl)
		cmd.SetFlagErrorFunc(flagError)
		if err := cmd.ParseFlags([]string{a, b, c, d}); err != nil {
			return
		}
		p, err := fl.params(cmd, sc, "safe", nil, "")
		if err != nil {
			if _, ok := err.(usageError); !ok {
				t.Fatalf("params error is not a usage error: %v", err)
			}
			return
		}
		if p.Validate() != nil || p.Workers < 1 || p.TTL <= 0 {
			t.Fatalf("accepted invalid params %+v", p)
		}
	})
}

func TestRunAllIsAVerdictTable(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs every scenario")
	}
	code, out, stderr := cli(t, "run", "all", "-q", "--speed", "10")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr, out)
	}
	for _, sc := range scenario.Catalogue() {
		if !strings.Contains(out, sc.Name) {
			t.Errorf("run all lacks %s", sc.Name)
		}
	}
	rows := 0
	for _, sc := range scenario.Catalogue() {
		for _, st := range sc.Strategies {
			if scenario.NeedsServer(st, store.Servers{}.FromEnv()) == "" {
				rows++
			}
		}
	}
	// The table's rows: from its heading to the first blank line (a word
	// on the runs the machine held up may follow).
	got := 0
	if _, table, ok := strings.Cut(out, "VERDICT\n"); ok {
		table, _, _ = strings.Cut(table, "\n\n")
		got = len(strings.Split(table, "\n"))
	}
	if got != rows || !strings.Contains(out, fmt.Sprintf("%d runs in", rows)) {
		t.Errorf("run all: %d rows, want %d:\n%s", got, rows, out)
	}
}

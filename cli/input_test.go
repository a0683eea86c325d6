package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const logHeader = `{"format":"locklab-events","version":1,"scenario":"oversell","strategy":"none","params":{"workers":2,"stock":1,"nodes":1},"seed":1,"store":"embedded","lanes":["w00","w01"]}`

// endRecord is the line that ends a whole log (its summary).
const endRecord = `{"summary":{}}`

// writeLog writes a header and lines as an event log and returns its path.
func writeLog(t *testing.T, header string, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run.jsonl")
	text := header + "\n" + strings.Join(lines, "\n")
	if strings.HasSuffix(text, "}") { // a cut-off line stays cut off
		text += "\n"
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// oneLine checks that stderr is one locklab: line holding want.
func oneLine(t *testing.T, what, stderr, want string) {
	t.Helper()
	if strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.HasPrefix(stderr, "locklab: ") || !strings.Contains(stderr, want) {
		t.Errorf("%s: stderr %q, want one line with %q", what, stderr, want)
	}
}

// TestHostileLogsThroughTheCLI gives each hostile log to every command that
// reads logs: one line naming the line, exit 1, no panic.
func TestHostileLogsThroughTheCLI(t *testing.T) {
	t.Parallel()
	attempt := `{"seq":1,"t":5,"worker":0,"kind":"attempt","res":"lock:stock"}`
	for name, tc := range map[string]struct {
		path string
		want string
	}{
		"negative worker": {writeLog(t, logHeader, `{"seq":1,"t":5,"worker":-5,"kind":"attempt","res":"lock:stock"}`),
			"line 2: worker -5 is out of range"},
		"two billion workers": {writeLog(t, strings.Replace(logHeader, `"workers":2`, `"workers":2000000000`, 1), attempt),
			"line 1: header says 2000000000 workers; a log holds 0 to 10000"},
		"a year long": {writeLog(t, logHeader, attempt, `{"seq":2,"t":31536000000000,"worker":0,"kind":"done","ok":true}`),
			"line 3: t 31536000000000 is outside a run: a log spans 0 to 168h0m0s"},
		"truncated": {writeLog(t, logHeader, attempt, `{"seq":2,"t":9,"wor`), "line 3: truncated"},
	} {
		for _, args := range [][]string{
			{"replay", "--summary", tc.path},
			{"record", "--from", tc.path, "--cast", filepath.Join(t.TempDir(), "out.cast")},
		} {
			code, _, stderr := cli(t, args...)
			if code != 1 {
				t.Errorf("%s, %s: exit %d, want 1", name, args[0], code)
			}
			oneLine(t, name+", "+args[0], stderr, tc.want)
		}
	}
}

func TestReplaySummaryOfDevZero(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	// A device is not a log: refused before a byte is read.
	code, _, stderr := cli(t, "replay", "--summary", "/dev/zero")
	if code != 2 {
		t.Errorf("exit %d", code)
	}
	oneLine(t, "/dev/zero", stderr, "/dev/zero is a character device, not a regular file")
	// Its bytes in a file: one line far too long.
	zeros := filepath.Join(t.TempDir(), "zeros.jsonl")
	if err := os.WriteFile(zeros, make([]byte, 1100<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = cli(t, "replay", "--summary", zeros)
	if code != 1 {
		t.Errorf("exit %d", code)
	}
	oneLine(t, "zeros", stderr, "line 1: longer than 1024 KiB")
}

// A log longer than a recording can be is refused before the first frame;
// nothing is left behind.
func TestRecordRefusesALongLog(t *testing.T) {
	t.Parallel()
	path := writeLog(t, logHeader, `{"seq":1,"t":5,"worker":0,"kind":"attempt"}`, `{"seq":2,"t":7200000000,"worker":0,"kind":"done","ok":true}`, endRecord)
	out := filepath.Join(t.TempDir(), "out.cast")
	code, _, stderr := cli(t, "record", "--from", path, "--cast", out, "--play-speed", "1")
	if code != 1 {
		t.Errorf("exit %d", code)
	}
	oneLine(t, "two hours", stderr, "the recording would last 2h0m3s at playback speed 1; a recording lasts at most 1h0m0s")
	if entries, _ := os.ReadDir(filepath.Dir(out)); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}

// Ctrl-C during a long recording ends it and leaves no file.
func TestRecordStopsOnInterrupt(t *testing.T) {
	t.Parallel()
	path := writeLog(t, logHeader, `{"seq":1,"t":5,"worker":0,"kind":"attempt"}`, `{"seq":2,"t":3000000000,"worker":0,"kind":"done","ok":true}`, endRecord)
	out := filepath.Join(t.TempDir(), "out.cast")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { time.Sleep(300 * time.Millisecond); cancel() }()
	var stdout, stderr bytes.Buffer
	code := execute(ctx, []string{"record", "--from", path, "--cast", out, "--play-speed", "1"}, &stdout, &stderr)
	if code != 1 {
		t.Errorf("exit %d", code)
	}
	oneLine(t, "interrupted", stderr.String(), "interrupted; nothing was recorded")
	if entries, _ := os.ReadDir(filepath.Dir(out)); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}

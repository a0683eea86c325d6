package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// hostileSeeds are text that drives a terminal: retitling, clipboard
// writes, questions it answers by typing, its 8-bit controls, reordering.
var hostileSeeds = []string{
	"\x1b]2;PWNED\x07",
	"\x1b]52;c;cHduZWQ=\x07",
	"\x1b]52;c;cHduZWQ=\x1b\\",
	"\x1b[6n\x1b[c\x1b[21t",
	"\x1bP+q544e\x1b\\",
	"\u009d2;PWNED\u009c\u009b2J",
	"evil\u202egnp.exe\u2066",
	"bell\x07\x08\x7f\x00\r\n\t",
	"\x1b[31;5mred",
	"\xff\xfe\x1b",
}

// notLocklabs matches what locklab's recordings emit themselves: the
// cursor hidden, homed, the screen and lines cleared, a line addressed,
// and SGR styling. Anything else that starts with ESC came from the input.
var notLocklabs = regexp.MustCompile(`\x1b\[(\?25[lh]|H|2J|[0-9]+;1H|2K|[0-9;]*m)|\r\n`)

// uncleanAt reports the first control character, C1 character or
// bidirectional control in s (newlines allowed), or "".
func uncleanAt(s string) string {
	for i, r := range s {
		switch {
		case r == '\n':
		case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f,
			r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return strings.ToValidUTF8(s[max(0, i-40):min(len(s), i+40)], "?")
		}
	}
	return ""
}

// hostileLog writes a small oversell log with s in every text field of
// its header and of its events, and a beat and an error that say s.
func hostileLog(t *testing.T, base []byte, dir, s string) string {
	lines := bytes.Split(bytes.TrimSpace(base), []byte("\n"))
	var ms []map[string]any
	for i, l := range lines {
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatal(err)
		}
		switch {
		case i == 0:
			m["lanes"] = []any{"w00" + s, s}
			m["tool"], m["store"], m["time"] = s, s, s
		case m["summary"] != nil:
			sum := m["summary"].(map[string]any)
			sum["verdict"], sum["detail"], sum["server_error"] = s, s, s
		default:
			for _, k := range []string{"res", "token", "code", "msg"} {
				if _, ok := m[k]; ok || k == "msg" {
					m[k] = s + k
				}
			}
		}
		ms = append(ms, m)
		if i == 2 {
			ms = append(ms,
				map[string]any{"t": m["t"], "worker": -1, "kind": "beat", "code": "race", "msg": s},
				map[string]any{"t": m["t"], "worker": 0, "kind": "error", "outcome": "failed", "code": "SET", "res": s, "msg": "OOM " + s})
		}
	}
	// The log stays whole: its events numbered in order, as a run writes
	// them; only its words are hostile.
	var out bytes.Buffer
	seq := 0
	for i, m := range ms {
		if i > 0 && m["summary"] == nil {
			m["seq"] = seq
			seq++
		}
		b, _ := json.Marshal(m)
		out.Write(append(b, '\n'))
	}
	path := filepath.Join(dir, "hostile.jsonl")
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// hostileTalk writes a talk with s in its title, its scene's title and
// notes, and a beat's caption and notes; the scene plays log.
func hostileTalk(t *testing.T, dir, log, s string) string {
	talk := map[string]any{"title": "T" + s, "scenes": []any{map[string]any{
		"scenario": "oversell", "strategy": "none", "title": "S" + s, "notes": "N" + s, "log": log,
		"beats": []any{map[string]any{"beat": 1, "caption": "C" + s, "notes": "B" + s}},
	}}}
	b, err := yaml.Marshal(talk)
	if err != nil {
		t.Skip("not YAML text")
	}
	path := filepath.Join(dir, "hostile.yaml")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkCast checks a recording: its title and markers are plain text and
// its frames hold no escape sequence locklab does not emit.
func checkCast(t *testing.T, path, in string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for n := 0; sc.Scan(); n++ {
		if n == 0 {
			var h struct{ Title string }
			json.Unmarshal(sc.Bytes(), &h)
			if bad := uncleanAt(h.Title); bad != "" {
				t.Fatalf("input %q: the recording's title holds %q", in, bad)
			}
			continue
		}
		var ev [3]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %d: %v", n+1, err)
		}
		data, _ := ev[2].(string)
		if ev[1] == "o" {
			data = notLocklabs.ReplaceAllString(data, "")
		}
		if bad := uncleanAt(data); bad != "" {
			t.Fatalf("input %q: the recording's %v event at %v holds %q", in, ev[1], ev[0], bad)
		}
	}
}

// FuzzUntrustedTextNeverDrivesTheTerminal puts text into every text field
// of an event log (header, events, summary) and of a talk file (titles,
// notes, captions), and reads what every way out shows: replay --summary,
// check, talk --check, and the recordings of the replay's and the talk's
// views (record --from, record --talk). None holds a control character,
// C1 or bidirectional control, or an escape sequence locklab did not emit.
func FuzzUntrustedTextNeverDrivesTheTerminal(f *testing.F) {
	for _, s := range hostileSeeds {
		f.Add(s)
	}
	dir := f.TempDir()
	basePath := filepath.Join(dir, "base.jsonl")
	if code := execute(f.Context(), []string{"run", "oversell", "--lock", "none", "--workers", "2", "--stock", "1", "--seed", "5", "-q", "--events", basePath}, new(bytes.Buffer), new(bytes.Buffer)); code != 0 {
		f.Fatalf("run: exit %d", code)
	}
	base, err := os.ReadFile(basePath)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 512 {
			return
		}
		dir := t.TempDir()
		log := hostileLog(t, base, dir, s)
		talk := hostileTalk(t, dir, log, s)
		for _, args := range [][]string{
			{"replay", log, "--summary"},
			{"check", log},
			{"talk", "--check", talk},
			{"record", "--from", log, "--cast", filepath.Join(dir, "replay.cast"), "--size", "80x24", "--fps", "2", "--play-speed", "10", "--present", "--hold", "100ms"},
			{"record", "--talk", talk, "--cast", filepath.Join(dir, "talk.cast"), "--size", "80x24", "--fps", "2", "--play-speed", "10", "--hold", "100ms"},
		} {
			var out, errb bytes.Buffer
			code := execute(t.Context(), args, &out, &errb)
			for _, text := range []string{out.String(), errb.String()} {
				if bad := uncleanAt(text); bad != "" {
					t.Fatalf("input %q: locklab %s (exit %d) printed %q", s, args[0], code, bad)
				}
			}
			if args[0] == "record" {
				if code != 0 {
					t.Fatalf("input %q: %v: exit %d: %s", s, args, code, errb.String())
				}
				checkCast(t, args[4], s)
			}
		}
	})
}

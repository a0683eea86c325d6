package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A log cut at a line boundary, or whose final read was edited, gets no
// verdict from replay or check: one line naming the line and what is
// wrong, exit 1. The whole log still gets its verdict.
func TestCutAndEditedLogsHaveNoVerdict(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "run.jsonl")
	if code, _, stderr := cli(t, "run", "oversell", "--lock", "safe", "--seed", "1", "--events", path, "-q"); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	write := func(name string, ls []string) string {
		p := filepath.Join(filepath.Dir(path), name)
		if err := os.WriteFile(p, []byte(strings.Join(ls, "")), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	edited := append([]string(nil), lines...)
	for i, l := range edited {
		if strings.Contains(l, `"worker":-1,"kind":"read","res":"stock","stock":0}`) {
			edited[i] = strings.Replace(l, `"stock":0}`, `"stock":1}`, 1)
		}
	}
	for _, tc := range []struct{ path, want string }{
		{write("cut.jsonl", lines[:30]), "line 30: INCOMPLETE — the log stops here, with no end record"},
		{write("edited.jsonl", edited), "INCONSISTENT — the final read says stock 1, but the last write(s) before it left 0"},
	} {
		for _, cmd := range []string{"replay", "check"} {
			args := []string{cmd, tc.path}
			if cmd == "replay" {
				args = append(args, "--summary")
			}
			code, out, stderr := cli(t, args...)
			if code != 1 || strings.Contains(out, "CORRECT") || strings.Contains(out, "linearizable") {
				t.Errorf("%s %s: exit %d, out %q", cmd, filepath.Base(tc.path), code, out)
			}
			oneLine(t, cmd+" "+filepath.Base(tc.path), stderr, tc.want)
		}
	}
	if code, out, _ := cli(t, "replay", path, "--summary"); code != 0 || !strings.Contains(out, "CORRECT") {
		t.Errorf("the whole log: exit %d: %s", code, out)
	}
}

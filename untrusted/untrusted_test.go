package untrusted

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLine(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"lock:stock", "lock:stock"},
		{"naïve ✓ 日本", "naïve ✓ 日本"},
		{"\x1b]2;PWNED\x07", ""},             // retitles the terminal
		{"a\x1b]52;c;cHduZWQ=\x07b", "ab"},   // writes the clipboard
		{"a\x1b]52;c;cHduZWQ=\x1b\\b", "ab"}, // … ended by ST
		{"\x1b[31mred\x1b[0m", "red"},        // colours
		{"\x1b[6n", ""},                      // asks the terminal to type its answer
		{"\x1bP+q544e\x1b\\x", "x"},          // DCS
		{"\x1b_Gi=1;AAAA\x1b\\x", "x"},       // APC (images)
		{"\u009b31mred", "red"},              // 8-bit CSI
		{"\u009d2;PWNED\u009c", ""},          // 8-bit OSC and ST
		{"\u009d2;PWNED\x07ok", "ok"},        // 8-bit OSC ended by BEL
		{"bell\x07 bs\x08 del\x7f nul\x00", "bell bs del nul"},
		{"two\nlines\ttab\rcr", "two lines tab cr"},
		{"evil\u202egnp.exe", "evilgnp.exe"}, // right-to-left override
		{"\u2066iso\u2069 \u200fmark\u200e \u061c", "iso mark "},
		{"bad\xffutf8\xc3", "badutf8\ufffd"}, // the parser drops what cannot start a character
		{"\x1b", ""},
		{"\x1b]2;unterminated", ""},
	} {
		if got := Line(c.in); got != c.want {
			t.Errorf("Line(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestText(t *testing.T) {
	t.Parallel()
	if got, want := Text("first\nsecond\x1b[2J\tend\r\n"), "first\nsecond end \n"; got != want {
		t.Fatalf("Text = %q, want %q", got, want)
	}
}

func TestCleanTextIsNotCopied(t *testing.T) {
	s := strings.Repeat("plain text ✓ ", 10)
	if allocs := testing.AllocsPerRun(100, func() { _ = Line(s) }); allocs != 0 {
		t.Fatalf("Line on clean text allocates %v times", allocs)
	}
}

// FuzzLine: whatever goes in, what comes out is valid UTF-8 without a
// control or bidirectional character, cleaning it again changes nothing,
// and clean text passes unchanged.
func FuzzLine(f *testing.F) {
	for _, s := range []string{"ok", "\x1b]2;PWNED\x07", "\x1b]52;c;Zm9v\x07", "\u009b2J", "\u202e", "a\nb", "\xff\xfe", "\x1b[", "\x1bP\x1b\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, multiline := range []bool{false, true} {
			out := clean(s, multiline)
			if !utf8.ValidString(out) {
				t.Fatalf("%q → %q: not UTF-8", s, out)
			}
			for _, r := range out {
				if unwanted(r) && !(multiline && r == '\n') {
					t.Fatalf("%q → %q holds %U", s, out, r)
				}
			}
			if again := clean(out, multiline); again != out {
				t.Fatalf("%q → %q → %q: not stable", s, out, again)
			}
			if isClean(s, multiline) && out != s {
				t.Fatalf("clean %q changed to %q", s, out)
			}
		}
	})
}

// Package untrusted cleans text that came from outside locklab — a file, a
// server, a participant — before it is drawn, printed or recorded. Escape
// sequences (with their parameters), C0 and C1 control characters and the
// bidirectional overrides that reorder what a reader sees are removed, and
// bytes that are not UTF-8 become U+FFFD, so that only locklab's own
// styling ever drives the terminal: a message cannot retitle it, write to
// its clipboard or move its cursor, on screen or in a recording.
package untrusted

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Line cleans s for one line of text: newlines and tabs become spaces.
func Line(s string) string { return clean(s, false) }

// Text cleans s keeping its newlines, for text of several lines (notes);
// tabs become spaces.
func Text(s string) string { return clean(s, true) }

// IsClean reports whether Line leaves s as it is.
func IsClean(s string) bool { return isClean(s, false) }

func clean(s string, multiline bool) string {
	if isClean(s, multiline) {
		return s // most text: no copy
	}
	// A sequence goes whole, its parameters with it: "ESC ]2;PWNED BEL"
	// leaves nothing, not "2;PWNED". Whatever the parser leaves, the loop
	// below drops every control that remains.
	s = ansi.Strip(c1.Replace(s))
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch {
		case r == '\n' && multiline:
			b.WriteByte('\n')
		case r == '\n' || r == '\t' || r == '\r':
			b.WriteByte(' ')
		case r == utf8.RuneError && n == 1:
			b.WriteRune(utf8.RuneError)
		case unwanted(r):
		default:
			b.WriteString(s[i-n : i])
		}
	}
	return b.String()
}

// c1 spells the C1 controls that open a sequence (CSI U+009B, OSC U+009D,
// DCS U+0090, PM U+009E, APC U+009F) as ESC and their 7-bit letter, for
// ansi.Strip to remove with the sequence: a terminal that obeys them would
// read what follows as their parameters.
var c1 = strings.NewReplacer("\u009b", "\x1b[", "\u009d", "\x1b]", "\u0090", "\x1bP", "\u009e", "\x1b^", "\u009f", "\x1b_")

// isClean reports whether s holds only printable UTF-8 (and newlines, when
// multiline).
func isClean(s string, multiline bool) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		if c < 0x80 {
			if c == '\n' && multiline {
				i++
				continue
			}
			return false
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || unwanted(r) {
			return false
		}
		i += n
	}
	return true
}

// unwanted reports whether r is a control character or a bidirectional
// control: never drawn, only obeyed.
func unwanted(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true // ALM, LRM, RLM, the embeddings, overrides and isolates
	}
	return false
}

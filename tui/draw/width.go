package draw

import (
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// cellWidth is ansi.StringWidth for the lines the view draws, without
// segmenting graphemes: it skips CSI escape sequences and adds each rune's
// width, looked up once per rune. A string with anything else (another
// escape, a combining or zero-width rune, a control byte) is measured by
// ansi.StringWidth itself.
func cellWidth(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == 0x1b:
			if i+1 >= len(s) || s[i+1] != '[' {
				return ansi.StringWidth(s)
			}
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j + 1
		case c >= 0x20 && c < 0x7f:
			n++
			i++
		case c < 0x80:
			return ansi.StringWidth(s)
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			w, ok := runeWidth(r)
			if !ok {
				return ansi.StringWidth(s)
			}
			n += w
			i += size
		}
	}
	return n
}

var runeWidths sync.Map // rune → int8 width, or −1 when it cannot stand alone

// runeWidth is r's width alone in a cell run, or false when r joins or
// changes its neighbours (combining marks, joiners, selectors, …).
func runeWidth(r rune) (int, bool) {
	if v, ok := runeWidths.Load(r); ok {
		w := v.(int8)
		return int(w), w >= 0
	}
	w := int8(-1)
	if r != utf8.RuneError && !joins(r) {
		one := ansi.StringWidth(string(r))
		// Standing alone and beside a letter, it must take the same cells.
		if ansi.StringWidth("a"+string(r)+"a") == one+2 && one > 0 {
			w = int8(one)
		}
	}
	runeWidths.Store(r, w)
	return int(w), w >= 0
}

// joins reports runes that combine with or alter the runes around them.
func joins(r rune) bool {
	switch {
	case unicode.In(r, unicode.M, unicode.Cf, unicode.Co, unicode.Cs):
		return true
	case r >= 0x300 && r <= 0x36f, r >= 0x1ab0 && r <= 0x1aff, r >= 0x1dc0 && r <= 0x1dff,
		r >= 0x20d0 && r <= 0x20ff, r >= 0xfe00 && r <= 0xfe0f, r >= 0xfe20 && r <= 0xfe2f,
		r >= 0x200b && r <= 0x200f, r >= 0x2028 && r <= 0x202e, r >= 0x2060 && r <= 0x206f,
		r >= 0x1f3fb && r <= 0x1f3ff, r >= 0x1f1e6 && r <= 0x1f1ff, r >= 0x1100 && r <= 0x11ff, r >= 0xa960 && r <= 0xa97f,
		r >= 0xd7b0 && r <= 0xd7ff, r >= 0xe0000, r == 0xad:
		return true
	}
	return false
}

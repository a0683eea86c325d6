package draw

import (
	"strings"
	"sync"

	"github.com/charmbracelet/lipgloss"
	"github.com/locklab/locklab/themes"
)

// Backdrop paints the theme's own background and text colour under a
// whole screen of w cells per line: every line is filled to the width, and
// the colours come back after every reset an inner style ends with. A
// theme without its own background, or a terminal without colour, leaves
// the screen as it is.
func Backdrop(th *themes.Theme, screen string, w int) string {
	if !th.OwnBackground {
		return screen
	}
	backdrops.Lock()
	defer backdrops.Unlock()
	p := backdropPaint(th)
	if p.pre == "" {
		return screen
	}
	if c := &backdrops; c.in == screen && c.w == w && c.painted == p.pre {
		return c.out // the same screen as the last frame
	}
	lines := strings.Split(screen, "\n")
	for i, l := range lines {
		if pad := w - cellWidth(l); pad > 0 {
			l += strings.Repeat(" ", pad)
		}
		l = strings.ReplaceAll(l, "\x1b[0m", "\x1b[0m"+p.pre)
		l = strings.ReplaceAll(l, "\x1b[m", "\x1b[m"+p.pre)
		lines[i] = p.pre + l + "\x1b[0m"
	}
	out := strings.Join(lines, "\n")
	backdrops.in, backdrops.w, backdrops.painted, backdrops.out = screen, w, p.pre, out
	return out
}

// backdrops keeps the last theme's backdrop paint, rebuilt when the theme
// or the colour profile changes (as lookOf does), and the last screen it
// painted. Views in one process may draw at once: it is used under its lock.
var backdrops struct {
	sync.Mutex
	theme   *themes.Theme
	profile string
	paint   paint
	// The last screen painted, and what it became.
	in, out, painted string
	w                int
}

// backdropPaint is th's backdrop paint; backdrops must be locked.
func backdropPaint(th *themes.Theme) paint {
	profile := lipgloss.NewStyle().Bold(true).Render("x")
	if backdrops.theme != th || backdrops.profile != profile {
		backdrops.theme, backdrops.profile = th, profile
		backdrops.paint = paintOf(lipgloss.NewStyle().Foreground(lipgloss.Color(th.Terminal.FG)).Background(lipgloss.Color(th.Terminal.BG)))
	}
	return backdrops.paint
}

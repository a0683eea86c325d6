// Package themes holds locklab's looks: one Theme struct with the palette,
// every style the views use and a glyph for every state, and one
// constructor per theme: dark, light, high-contrast, colour-blind
// (Okabe–Ito) and mono. Every state has its own glyph as well as its colour,
// so it reads in mono, with NO_COLOR and in compressed recordings.
package themes

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"
)

// State is a visual state of a worker lane.
type State uint8

// The worker states, in the order of their legend.
const (
	Idle       State = iota // not doing anything yet
	Attempting              // sending an acquire
	Waiting                 // denied, backing off
	Holding                 // holds the lock, outside the critical section
	Critical                // inside the critical section
	Paused                  // stopped the world
	Crashed                 // died without releasing
	Violation               // the checker found a violation here
	DoneOK                  // finished with success
	DoneFail                // finished with failure
	StateCount
)

func (s State) String() string {
	if s < StateCount {
		return Table[s].Meaning
	}
	return "?"
}

// Glyphs are the states' glyphs, the same in every theme (from Table).
var Glyphs = func() (g [StateCount]rune) {
	for s := range g {
		g[s] = Table[s].Rune
	}
	return g
}()

// Theme is every style locklab draws with.
type Theme struct {
	Name string

	Text, Muted, Title, Border, Accent lipgloss.Style
	OK, Warn, Alarm                    lipgloss.Style

	// Header badges.
	Live, Paused, Rewound, Done lipgloss.Style
	// Verdict banners.
	VerdictGood, VerdictBad lipgloss.Style
	// Key help.
	Key, KeyDesc lipgloss.Style
	// Marks on lock lanes: renewal tick, TTL lapse under a working holder.
	Renewal, Lapse lipgloss.Style
	// A form field in error.
	FieldError lipgloss.Style
	// Selected row in lists.
	Selected lipgloss.Style

	// States are the lane styles, indexed by State.
	States [StateCount]lipgloss.Style
	// Workers colour each worker (lock holders, the wait-for graph), cycled.
	Workers []lipgloss.Style
	// OwnBackground paints the theme's Terminal colours under every cell,
	// so the theme reads the same on a dark or a light terminal. Mono has
	// none: it is drawn in the terminal's own colours.
	OwnBackground bool
	// Terminal is the terminal the theme is made for: its foreground and
	// background, for recordings' players.
	Terminal Terminal
}

// Terminal colours, as #rrggbb.
type Terminal struct {
	FG, BG string
}

// Palette is the 16 ANSI colours (xterm's) recordings declare, colon-separated.
const Palette = "#000000:#cd0000:#00cd00:#cdcd00:#0000ee:#cd00cd:#00cdcd:#e5e5e5:" +
	"#7f7f7f:#ff0000:#00ff00:#ffff00:#5c5cff:#ff00ff:#00ffff:#ffffff"

var (
	darkTerminal  = Terminal{FG: "#d0d0d0", BG: "#1c1c1c"}
	lightTerminal = Terminal{FG: "#262626", BG: "#fafafa"}
	blackTerminal = Terminal{FG: "#ffffff", BG: "#000000"}
)

// Worker returns worker w's style.
func (t *Theme) Worker(w int) lipgloss.Style {
	if len(t.Workers) == 0 || w < 0 {
		return t.Text
	}
	return t.Workers[w%len(t.Workers)]
}

// Cell renders a lane cell in state s.
func (t *Theme) Cell(s State, n int) string {
	return t.States[s].Render(strings.Repeat(string(Glyphs[s]), n))
}

// Names lists the themes in the order `t` cycles through them.
var Names = []string{"dark", "light", "high-contrast", "colour-blind", "mono"}

// ByName returns the named theme.
func ByName(name string) (*Theme, error) {
	switch strings.ToLower(name) {
	case "dark", "":
		return Dark(), nil
	case "light":
		return Light(), nil
	case "high-contrast", "contrast":
		return HighContrast(), nil
	case "colour-blind", "color-blind", "colorblind", "okabe-ito":
		return ColourBlind(), nil
	case "mono", "none":
		return Mono(), nil
	}
	return nil, fmt.Errorf("unknown theme %q: want one of %s", name, strings.Join(Names, ", "))
}

// Next returns the theme after t in Names.
func Next(t *Theme) *Theme {
	for i, n := range Names {
		if n == t.Name {
			next, _ := ByName(Names[(i+1)%len(Names)])
			return next
		}
	}
	return Dark()
}

// palette is what distinguishes the coloured themes.
type palette struct {
	name                          string
	text, muted, border, accent   string
	ok, warn, alarm               string
	attempt, wait, hold, critical string
	paused, crash                 string
	workers                       []string
	badgeFg                       string
}

func fg(c string) lipgloss.Style { return lipgloss.NewStyle().Foreground(lipgloss.Color(c)) }

func fromPalette(p palette, bold bool) *Theme {
	t := &Theme{Name: p.name, Terminal: darkTerminal, OwnBackground: true}
	t.Text = fg(p.text)
	t.Muted = fg(p.muted)
	t.Title = fg(p.accent).Bold(true)
	t.Border = fg(p.border)
	t.Accent = fg(p.accent)
	t.OK = fg(p.ok).Bold(bold)
	t.Warn = fg(p.warn).Bold(bold)
	t.Alarm = fg(p.alarm).Bold(true)
	badge := func(bg string) lipgloss.Style {
		return lipgloss.NewStyle().Foreground(lipgloss.Color(p.badgeFg)).Background(lipgloss.Color(bg)).Bold(true).Padding(0, 1)
	}
	t.Live, t.Paused, t.Rewound, t.Done = badge(p.ok), badge(p.warn), badge(p.accent), badge(p.muted)
	t.VerdictGood = badge(p.ok)
	t.VerdictBad = badge(p.alarm)
	t.Key = fg(p.accent).Bold(true)
	t.KeyDesc = fg(p.muted)
	t.Renewal = fg(p.ok).Bold(true)
	t.Lapse = fg(p.alarm).Bold(true).Blink(false)
	t.FieldError = fg(p.alarm)
	t.Selected = fg(p.accent).Bold(true)
	t.States = [StateCount]lipgloss.Style{
		Idle: fg(p.muted), Attempting: fg(p.attempt), Waiting: fg(p.wait), Holding: fg(p.hold),
		Critical: fg(p.critical).Bold(bold), Paused: fg(p.paused), Crashed: fg(p.crash).Bold(true),
		Violation: fg(p.alarm).Bold(true).Reverse(true), DoneOK: fg(p.ok), DoneFail: fg(p.alarm),
	}
	for _, c := range p.workers {
		t.Workers = append(t.Workers, fg(c))
	}
	return t
}

// Dark is the default theme, for dark terminals.
func Dark() *Theme {
	return fromPalette(palette{name: "dark", text: "252", muted: "244", border: "238", accent: "111",
		ok: "78", warn: "221", alarm: "203", attempt: "117", wait: "179", hold: "141", critical: "81",
		paused: "245", crash: "201", badgeFg: "232",
		workers: []string{"81", "213", "221", "120", "209", "147", "43", "217", "190", "75", "204", "157"}}, false)
}

// Light is for light terminals.
func Light() *Theme {
	t := fromPalette(palette{name: "light", text: "235", muted: "243", border: "250", accent: "25",
		ok: "28", warn: "130", alarm: "160", attempt: "31", wait: "136", hold: "91", critical: "24",
		paused: "241", crash: "126", badgeFg: "255",
		workers: []string{"25", "127", "130", "28", "166", "54", "30", "161", "64", "19", "125", "22"}}, true)
	t.Terminal = lightTerminal
	return t
}

// HighContrast is for projectors: pure colours, bold everywhere.
func HighContrast() *Theme {
	t := fromPalette(palette{name: "high-contrast", text: "15", muted: "250", border: "15", accent: "14",
		ok: "10", warn: "11", alarm: "9", attempt: "14", wait: "11", hold: "13", critical: "15",
		paused: "250", crash: "13", badgeFg: "0",
		workers: []string{"14", "13", "11", "10", "9", "12", "15"}}, true)
	t.Text = t.Text.Bold(true)
	t.Terminal = blackTerminal
	return t
}

// ColourBlind uses the Okabe–Ito palette, distinguishable with the common
// colour-vision deficiencies.
func ColourBlind() *Theme {
	const (
		orange, sky, green, yellow = "#E69F00", "#56B4E9", "#009E73", "#F0E442"
		blue, vermillion, purple   = "#0072B2", "#D55E00", "#CC79A7"
	)
	return fromPalette(palette{name: "colour-blind", text: "252", muted: "245", border: "240", accent: sky,
		ok: green, warn: yellow, alarm: vermillion, attempt: sky, wait: orange, hold: purple, critical: blue,
		paused: "245", crash: "231", badgeFg: "#000000",
		workers: []string{orange, sky, green, yellow, blue, vermillion, purple}}, true)
}

// Mono uses no colour at all: glyphs, bold, underline and reverse only.
// NO_COLOR selects it.
func Mono() *Theme {
	plain := lipgloss.NewStyle()
	bold := plain.Bold(true)
	t := &Theme{Name: "mono", Text: plain, Muted: plain.Faint(true), Title: bold, Border: plain,
		Accent: bold, OK: bold, Warn: bold, Alarm: bold.Reverse(true),
		Live: bold.Reverse(true).Padding(0, 1), Paused: bold.Reverse(true).Padding(0, 1),
		Rewound: bold.Reverse(true).Padding(0, 1), Done: bold.Padding(0, 1),
		VerdictGood: bold.Reverse(true).Padding(0, 1), VerdictBad: bold.Reverse(true).Padding(0, 1),
		Key: bold, KeyDesc: plain, Renewal: bold, Lapse: bold.Reverse(true), FieldError: bold.Underline(true),
		Selected: bold.Reverse(true), Terminal: darkTerminal}
	for i := range t.States {
		t.States[i] = plain
	}
	t.States[Critical] = bold
	t.States[DoneFail] = bold
	t.States[Crashed] = bold.Underline(true)
	t.States[Violation] = bold.Reverse(true)
	t.Workers = []lipgloss.Style{plain}
	return t
}

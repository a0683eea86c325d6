package tui

import (
	"fmt"
	"slices"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui/draw"
	"github.com/locklab/locklab/untrusted"
	"github.com/locklab/locklab/workshop"
)

// Steerable is a room whose next round the host can change between
// rounds without restarting.
type Steerable interface {
	Next() workshop.Next
	SetNext(workshop.Next) error
}

// NextLine says what the next round races, for everyone's screen.
func NextLine(n workshop.Next) string {
	s := fmt.Sprintf("next round: %s with %s · retry %s", n.Scenario, n.Strategy, n.Retry)
	if def, err := scenario.Lookup(n.Scenario); err == nil && slices.Contains(def.Uses, "stock") {
		s += fmt.Sprintf(" · stock %d", n.Stock)
	}
	return s
}

// steerMenu is the host's menu of the next round: ↑/↓ a row, ←/→ its
// value, enter applies, esc leaves it as it was.
type steerMenu struct {
	open bool
	row  int
	next workshop.Next
}

var steerRows = []string{"scenario", "strategy", "retry", "stock"}

func joinableScenarios() []string {
	return strings.Split(scenario.JoinableNames(), ", ")
}

func retryNames() []string {
	var out []string
	for _, p := range lock.Policies {
		out = append(out, string(p.Name))
	}
	return out
}

// turn moves value v by d among choices, round the ends.
func turn(choices []string, v string, d int) string {
	i := slices.Index(choices, v)
	if len(choices) == 0 {
		return v
	}
	return choices[((i+d)%len(choices)+len(choices))%len(choices)]
}

// change moves the menu's row by d.
func (m *steerMenu) change(d int) {
	n := &m.next
	switch steerRows[m.row] {
	case "scenario":
		n.Scenario = turn(joinableScenarios(), n.Scenario, d)
		if def, err := scenario.Lookup(n.Scenario); err == nil {
			n.Strategy, n.Stock = scenario.JoinableStrategies(n.Scenario)[0], def.Defaults.Stock
		}
	case "strategy":
		n.Strategy = turn(scenario.JoinableStrategies(n.Scenario), n.Strategy, d)
	case "retry":
		n.Retry = turn(retryNames(), n.Retry, d)
	case "stock":
		n.Stock = max(n.Stock+int64(d), 0)
	}
}

// steerKey handles a key while the menu is open.
func (v *HostView) steerKey(msg tea.KeyMsg) tea.Cmd {
	m := &v.menu
	switch msg.String() {
	case "up", "k":
		m.row = (m.row + len(steerRows) - 1) % len(steerRows)
	case "down", "j", "tab":
		m.row = (m.row + 1) % len(steerRows)
	case "left", "h", "-":
		m.change(-1)
	case "right", "l", "+":
		m.change(1)
	case "esc", "m":
		m.open = false
	case "enter":
		m.open = false
		if err := v.ws.(Steerable).SetNext(m.next); err != nil {
			v.err = untrusted.Line(err.Error())
			return nil
		}
		v.stage.setNext(NextLine(m.next))
	}
	return nil
}

// menuLines draw the menu.
func (v *HostView) menuLines(th *themes.Theme) []string {
	out := []string{th.Title.Render(draw.Fit(" next round · ↑/↓ choose · ←/→ change · enter applies · esc leaves it", v.w))}
	for i, r := range steerRows {
		val := map[string]string{"scenario": v.menu.next.Scenario, "strategy": v.menu.next.Strategy, "retry": v.menu.next.Retry,
			"stock": fmt.Sprint(v.menu.next.Stock)}[r]
		line := fmt.Sprintf("   %-9s ‹ %s ›", r, val)
		if i == v.menu.row {
			out = append(out, th.Accent.Render(draw.Fit(" ▸"+line[2:], v.w)))
			continue
		}
		out = append(out, th.Text.Render(draw.Fit(line, v.w)))
	}
	return out
}

package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui/draw"
)

// picker chooses a scenario and a strategy.
type picker struct {
	keys  pickerKeys
	sc    int
	strat []int // the chosen strategy of each scenario
	// servers are the servers beyond Redis the user gave.
	servers store.Servers
}

// need says what to pass for the chosen strategy's server, if it is missing.
func (p *picker) need() string { return scenario.NeedsServer(p.strategy(), p.servers) }

// wants says what to pass for a part of the scenario that runs on a server
// the user did not give: the run leaves that part out and says so.
func (p *picker) wants() string { return p.scenario().Wants(p.servers) }

func newPicker(scenarioName, strategy string) picker {
	p := picker{keys: defaultPickerKeys(), strat: make([]int, len(scenario.Catalogue()))}
	for i, s := range scenario.Catalogue() {
		if s.Name == scenarioName {
			p.sc = i
			for j, st := range s.Strategies {
				if st == strategy {
					p.strat[i] = j
				}
			}
		}
	}
	return p
}

func (p *picker) scenario() *scenario.Scenario { return scenario.Catalogue()[p.sc] }

func (p *picker) strategy() string { return p.scenario().Strategies[p.strat[p.sc]] }

func (p *picker) helpKeys() helpMap {
	k := p.keys
	return helpMap{short: []key.Binding{k.Up, k.Down, k.Left, k.Right, k.Enter},
		full: [][]key.Binding{{k.Up, k.Down}, {k.Left, k.Right}, {k.Enter}}}
}

// handleKey moves the selection; it reports true when the user chose.
func (p *picker) handleKey(msg tea.KeyMsg) bool {
	n := len(scenario.Catalogue())
	ns := len(p.scenario().Strategies)
	switch {
	case key.Matches(msg, p.keys.Up):
		p.sc = (p.sc + n - 1) % n
	case key.Matches(msg, p.keys.Down):
		p.sc = (p.sc + 1) % n
	case key.Matches(msg, p.keys.Left):
		p.strat[p.sc] = (p.strat[p.sc] + ns - 1) % ns
	case key.Matches(msg, p.keys.Right):
		p.strat[p.sc] = (p.strat[p.sc] + 1) % ns
	case key.Matches(msg, p.keys.Enter):
		return true
	}
	return false
}

// View lists the scenarios, then the chosen one's explanation and strategies.
func (p *picker) View(th *themes.Theme, w, h int) string {
	var b strings.Builder
	b.WriteString(th.Title.Render("locklab") + th.Muted.Render(" — distributed locking, made visible") + "\n\n")
	b.WriteString(th.Muted.Render("SCENARIO") + "\n")
	for i, s := range scenario.Catalogue() {
		line := fmt.Sprintf("  %-12s %s", s.Name, s.Title)
		if i == p.sc {
			line = th.Selected.Render("▸ "+fmt.Sprintf("%-12s", s.Name)) + " " + th.Text.Render(s.Title)
		} else {
			line = th.Text.Render(line)
		}
		b.WriteString(draw.Fit(line, w) + "\n")
	}
	s := p.scenario()
	b.WriteString("\n" + th.Muted.Render("STRATEGY") + "\n  ")
	// The strategies wrap at the window's width: a scenario may run with
	// every one of them.
	col := 2
	for i, st := range s.Strategies {
		cell := th.Text.Render(" "+st+" ") + " "
		if i == p.strat[p.sc] {
			cell = th.Selected.Render("‹"+st+"›") + " "
		}
		if cw := lipgloss.Width(cell); col+cw > w && col > 2 {
			b.WriteString("\n  ")
			col = 2
		}
		b.WriteString(cell)
		col += lipgloss.Width(cell)
	}
	b.WriteString("\n  " + th.Muted.Render(strategyDoc(p.strategy())) + "\n")
	if need := p.need(); need != "" {
		b.WriteString("  " + th.Accent.Render(need) + "\n")
	} else if want := p.wants(); want != "" {
		b.WriteString("  " + th.Muted.Render(want) + "\n")
	}
	b.WriteString("\n")
	wrap := lipgloss.NewStyle().Width(min(w-4, 100))
	b.WriteString(th.Title.Render(s.Title) + "\n")
	b.WriteString(th.Text.Render(wrap.Render(s.Explain)) + "\n\n")
	b.WriteString(th.Accent.Render("watch: ") + th.Text.Render(s.Watch) + "\n")
	b.WriteString(th.Muted.Render("from: "+s.Source) + "\n")
	return b.String()
}

func strategyDoc(name string) string {
	for _, s := range scenario.Strategies() {
		if s.Name == name {
			return s.Short
		}
	}
	return ""
}

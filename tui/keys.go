package tui

import "github.com/charmbracelet/bubbles/key"

func bind(keys []string, help, desc string) key.Binding {
	return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
}

// globalKeys work on every screen.
type globalKeys struct {
	Theme, Help, Quit key.Binding
}

func defaultGlobalKeys() globalKeys {
	return globalKeys{
		Theme: bind([]string{"t"}, "t", "theme"),
		Help:  bind([]string{"?"}, "?", "help"),
		Quit:  bind([]string{"q", "ctrl+c"}, "q", "quit"),
	}
}

// pickerKeys choose a scenario and a strategy.
type pickerKeys struct {
	Up, Down, Left, Right, Enter key.Binding
}

func defaultPickerKeys() pickerKeys {
	return pickerKeys{
		Up:    bind([]string{"up", "k"}, "↑/k", "scenario"),
		Down:  bind([]string{"down", "j"}, "↓/j", "scenario"),
		Left:  bind([]string{"left", "h"}, "←/h", "strategy"),
		Right: bind([]string{"right", "l"}, "→/l", "strategy"),
		Enter: bind([]string{"enter"}, "enter", "parameters"),
	}
}

// formKeys edit the parameters.
type formKeys struct {
	Next, Prev, Run, Back key.Binding
}

func defaultFormKeys() formKeys {
	return formKeys{
		Next: bind([]string{"tab", "down"}, "tab/↓", "next field"),
		Prev: bind([]string{"shift+tab", "up"}, "⇧tab/↑", "previous"),
		Run:  bind([]string{"enter"}, "enter", "run"),
		Back: bind([]string{"esc"}, "esc", "back"),
	}
}

// helpMap adapts a set of bindings to bubbles/help.
type helpMap struct {
	short []key.Binding
	full  [][]key.Binding
}

func (h helpMap) ShortHelp() []key.Binding  { return h.short }
func (h helpMap) FullHelp() [][]key.Binding { return h.full }

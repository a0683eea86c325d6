package tui

import (
	"context"
	"slices"
	"time"

	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/untrusted"
	"github.com/locklab/locklab/workshop"
)

// nameInputLimit bounds what the name field takes: past the longest name,
// so that a name too long is refused in words rather than cut unseen.
const nameInputLimit = 2 * workshop.MaxName

// renameWait bounds the wait for a new name: a round racing holds it
// until its end.
const renameWait = 2 * time.Minute

// nameEditor is a participant's field for a new name.
type nameEditor struct {
	open    bool
	waiting bool // the new name is asked for; the answer is to come
	input   textinput.Model
	said    string // the last refusal, until the next key
	names   []string
}

type renamedMsg struct {
	name string
	err  error
}

// editName opens the field.
func (v *ParticipantView) editName() {
	in := textinput.New()
	in.CharLimit = nameInputLimit
	in.Placeholder = v.p.Name
	in.Prompt = ""
	in.Width = workshop.MaxName
	in.Focus()
	v.name.open, v.name.input, v.name.said = true, in, ""
}

// nameKey handles a key while the field is open.
func (v *ParticipantView) nameKey(msg tea.KeyMsg) tea.Cmd {
	switch msg.String() {
	case "esc":
		v.name.open = false
		return nil
	case "enter":
		name := untrusted.Line(v.name.input.Value())
		if err := workshop.CheckNewName(name); err != nil {
			v.name.said = untrusted.Line(err.Error())
			return nil
		}
		v.name.open, v.name.waiting = false, true
		rename := v.p.Rename
		return func() tea.Msg {
			ctx, cancel := context.WithTimeout(context.Background(), renameWait)
			defer cancel()
			return renamedMsg{name, rename(ctx, name)}
		}
	}
	v.name.said = ""
	var cmd tea.Cmd
	v.name.input, cmd = v.name.input.Update(msg)
	return cmd
}

// renamed takes the answer to a new name.
func (v *ParticipantView) renamed(msg renamedMsg) {
	v.name.waiting = false
	if msg.err != nil { // the field opens again with what was typed
		v.name.open, v.name.said = true, untrusted.Line(msg.err.Error())
		return
	}
	v.name.names = append(v.name.names, v.p.Name)
	v.p.Name, v.host.me = msg.name, msg.name
}

// was reports whether the participant raced as name: now or before a
// change of name.
func (v *ParticipantView) was(name string) bool {
	return name == v.p.Name || slices.Contains(v.name.names, name)
}

// nameLine is the participant's line while the field is open, or after a
// refusal; "" otherwise.
func (v *ParticipantView) nameLine(th *themes.Theme) string {
	switch {
	case v.name.open && v.name.said != "":
		return th.Alarm.Render(v.name.said) + th.Muted.Render(" · esc keeps "+v.p.Name)
	case v.name.open:
		return th.Accent.Render("your name: ") + v.name.input.View() + th.Muted.Render(" · enter takes it · esc keeps "+v.p.Name)
	case v.name.waiting:
		return th.Muted.Render("changing your name… (after the round, if one is racing)")
	case v.name.said != "":
		return th.Alarm.Render(v.name.said)
	}
	return ""
}

package tui

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/store/spawn"
	"github.com/locklab/locklab/tui/draw"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/themes"
)

// field is one parameter of the form.
type field struct {
	name, hint string
	input      textinput.Model
	err        string
}

// form edits a scenario's parameters and seed.
type form struct {
	keys     formKeys
	sc       *scenario.Scenario
	strategy string
	fields   []field
	focus    int
	// autoSpeed is the speed field as it opened, the default story's
	// pace: left so, the run opens at the pace of the story the other
	// fields choose (a Redlock part, a lock order).
	autoSpeed string
}

type formResult int

const (
	formStay formResult = iota
	formBack
	formRun
)

// hint is what the form says beside a field: the parameter's own, from
// the one table of parameters, or the seed's and the speed's.
func hint(name string) string {
	switch name {
	case "seed":
		return "same seed, same story"
	case "speed":
		return fmt.Sprintf("clock speed, %s to %s (× real time)", strconv.FormatFloat(store.MinSpeed, 'f', -1, 64), strconv.FormatFloat(store.MaxSpeed, 'f', -1, 64))
	}
	pa, _ := event.ParamByName(name)
	return pa.Hint
}

// paramText is a parameter's current value as the form shows it.
func paramText(p event.Params, name string) string {
	pa, ok := event.ParamByName(name)
	if !ok {
		return ""
	}
	return pa.Get(p)
}

// setParam parses text into the named parameter, as its flag would.
func setParam(p *event.Params, name, text string) error {
	pa, ok := event.ParamByName(name)
	if !ok {
		return fmt.Errorf("is not a parameter")
	}
	return pa.Set(p, text)
}

func newForm(sc *scenario.Scenario, strategy string, opts *Options) form {
	p := sc.Defaults
	if opts.Params != nil {
		p = *opts.Params
	}
	if info, _ := lock.Lookup(strategy); info.MultiNode() && p.Nodes < info.Nodes.Min && len(opts.URLs) == 0 {
		p.Nodes = info.Nodes.Default
	}
	if len(opts.URLs) > 0 {
		p.Nodes = len(opts.URLs)
	}
	if opts.Topology != "" {
		p.Nodes = spawn.TopologyNodes(opts.Topology)
	}
	seed := opts.Seed
	if !opts.SeedSet {
		seed = newSeed()
	}
	f := form{keys: defaultFormKeys(), sc: sc, strategy: strategy}
	names := append(append([]string(nil), sc.Uses...), "seed")
	speed := openingSpeed(sc.Name, strategy, p)
	if opts.SpeedSet {
		speed = opts.Speed
	} else {
		f.autoSpeed = strconv.FormatFloat(speed, 'f', -1, 64)
	}
	if len(opts.URLs) == 0 && opts.Topology == "" { // a real server keeps its own time (--slowmo)
		names = append(names, "speed")
	}
	for _, name := range names {
		in := textinput.New()
		in.Prompt = ""
		in.CharLimit = 40
		in.Width = 24
		switch name {
		case "seed":
			in.SetValue(strconv.FormatUint(seed, 10))
		case "speed":
			in.SetValue(strconv.FormatFloat(speed, 'f', -1, 64))
		default:
			in.SetValue(paramText(p, name))
		}
		f.fields = append(f.fields, field{name: name, hint: hint(name), input: in})
	}
	f.fields[0].input.Focus()
	return f
}

func (f *form) setSeed(seed uint64) {
	for i := range f.fields {
		if f.fields[i].name == "seed" {
			f.fields[i].input.SetValue(strconv.FormatUint(seed, 10))
		}
	}
}

func (f *form) helpKeys() helpMap {
	k := f.keys
	return helpMap{short: []key.Binding{k.Next, k.Prev, k.Run, k.Back}, full: [][]key.Binding{{k.Next, k.Prev}, {k.Run, k.Back}}}
}

func (f *form) move(d int) {
	f.fields[f.focus].input.Blur()
	f.focus = (f.focus + d + len(f.fields)) % len(f.fields)
	f.fields[f.focus].input.Focus()
}

func (f *form) handleKey(msg tea.KeyMsg) formResult {
	switch {
	case key.Matches(msg, f.keys.Back):
		return formBack
	case key.Matches(msg, f.keys.Next):
		f.move(1)
	case key.Matches(msg, f.keys.Prev):
		f.move(-1)
	case key.Matches(msg, f.keys.Run):
		if _, err := f.spec(); err == nil {
			return formRun
		}
	default:
		var cmd tea.Cmd
		f.fields[f.focus].input, cmd = f.fields[f.focus].input.Update(msg)
		_ = cmd
		f.fields[f.focus].err = ""
	}
	return formStay
}

// spec validates every field; a wrong one is explained in place and gets
// the focus.
func (f *form) spec() (runSpec, error) {
	p := f.sc.Defaults
	spec := runSpec{Scenario: f.sc.Name, Strategy: f.strategy, Speed: 1}
	var first = -1
	for i := range f.fields {
		fl := &f.fields[i]
		fl.err = ""
		text := fl.input.Value()
		switch fl.name {
		case "seed":
			s, err := strconv.ParseUint(strings.TrimSpace(text), 10, 64)
			if err != nil {
				fl.err = "is not a whole number ≥ 0"
			}
			spec.Seed = s
		case "speed":
			s, err := parseSpeed(text)
			if err != nil {
				fl.err = fmt.Sprintf("%q %s", text, err)
			}
			spec.Speed = s
		default:
			if err := setParam(&p, fl.name, text); err != nil {
				fl.err, _, _ = strings.Cut(err.Error(), " (got ") // the field shows what it got
			}
		}
		if fl.err != "" && first < 0 {
			first = i
		}
	}
	if first < 0 {
		var pe *event.ParamError
		if err := p.Validate(); errors.As(err, &pe) {
			for i := range f.fields {
				if f.fields[i].name == pe.Param {
					f.fields[i].err = pe.Msg
					first = i
				}
			}
		}
	}
	if first >= 0 {
		if first != f.focus {
			f.move(first - f.focus)
		}
		return spec, fmt.Errorf("--%s %s", f.fields[first].name, f.fields[first].err)
	}
	spec.Params = p
	if f.autoSpeed != "" && strings.TrimSpace(f.fieldValue("speed")) == f.autoSpeed {
		spec.Speed = openingSpeed(f.sc.Name, f.strategy, p)
	}
	return spec, nil
}

// fieldValue is the text of the field named name ("" if there is none).
func (f *form) fieldValue(name string) string {
	for _, fl := range f.fields {
		if fl.name == name {
			return fl.input.Value()
		}
	}
	return ""
}

// View shows the fields with their hints and errors.
func (f *form) View(th *themes.Theme, w, h int) string {
	var b strings.Builder
	b.WriteString(th.Title.Render(f.sc.Title) + th.Muted.Render("  ·  strategy ") + th.Accent.Render(f.strategy) + "\n")
	b.WriteString(th.Muted.Render(strategyDoc(f.strategy)) + "\n\n")
	for i, fl := range f.fields {
		label := fmt.Sprintf("%-12s", fl.name)
		if i == f.focus {
			label = th.Selected.Render("▸ " + label)
		} else {
			label = th.Text.Render("  " + label)
		}
		line := label + " " + fl.input.View()
		if fl.err != "" {
			line += "  " + th.FieldError.Render("✗ "+fl.err)
		} else {
			line += "  " + th.Muted.Render(fl.hint)
		}
		b.WriteString(draw.Fit(line, w) + "\n")
	}
	b.WriteString("\n" + th.Muted.Render("enter runs · esc goes back · the run's keys are deleted when it ends"))
	return b.String()
}

// parseSpeed reads a clock speed such as 0.01, 0.01× or 2x.
func parseSpeed(text string) (float64, error) {
	text = strings.TrimRight(strings.TrimSpace(text), "x×")
	s, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsNaN(s) || s < store.MinSpeed || s > store.MaxSpeed {
		return 0, fmt.Errorf("is not a speed from %s to %s", strconv.FormatFloat(store.MinSpeed, 'f', -1, 64), strconv.FormatFloat(store.MaxSpeed, 'f', -1, 64))
	}
	return s, nil
}

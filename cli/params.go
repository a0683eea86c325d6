package cli

import (
	"slices"

	"github.com/locklab/locklab/event"

	"github.com/spf13/pflag"
)

// paramValue is a scenario parameter's flag. It keeps the text as given,
// once the one table of parameters has read it; paramValues.apply sets it
// over a scenario's defaults.
type paramValue struct {
	pa   event.Param
	text string
}

func (v *paramValue) String() string { return v.text }
func (v *paramValue) Type() string   { return v.pa.Type() }

func (v *paramValue) Set(s string) error {
	var p event.Params
	if err := v.pa.Set(&p, s); err != nil {
		return err
	}
	v.text = s
	return nil
}

// paramValues are the scenario-parameter flags of a command, by name.
type paramValues map[string]*paramValue

// addParamFlags registers the parameters named (every one when none is)
// as flags, with the table's help.
func addParamFlags(fl *pflag.FlagSet, pf *paramValues, only ...string) {
	if *pf == nil {
		*pf = paramValues{}
	}
	for _, pa := range event.ParamTable() {
		if len(only) > 0 && !slices.Contains(only, pa.Name) {
			continue
		}
		v := &paramValue{pa: pa}
		(*pf)[pa.Name] = v
		fl.Var(v, pa.Name, pa.Help)
	}
}

// apply sets over p the parameters whose flags were given (set reports
// which), in the table's order; nodes is left to the caller, which
// weighs it against the servers given.
func (pf paramValues) apply(p *event.Params, set func(string) bool) {
	for _, pa := range event.ParamTable() {
		if v := pf[pa.Name]; v != nil && pa.Name != "nodes" && set(pa.Name) {
			_ = pa.Set(p, v.text) // read once already, when the flag was parsed
		}
	}
}

// nodes is --nodes as given (0 when not given).
func (pf paramValues) nodes() int {
	var p event.Params
	if v := pf["nodes"]; v != nil && v.text != "" {
		_ = v.pa.Set(&p, v.text)
	}
	return p.Nodes
}

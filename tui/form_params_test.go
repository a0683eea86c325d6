package tui

import (
	"testing"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
)

// TestTheFormReadsEveryParameterAsTheTableDoes: the form has a field for
// each parameter a scenario reads, with the table's hint, and text typed
// into it gives the parameters the table (and so run's flag) gives.
func TestTheFormReadsEveryParameterAsTheTableDoes(t *testing.T) {
	t.Parallel()
	for _, sc := range scenario.Catalogue() {
		f := newForm(sc, sc.Strategies[0], &Options{})
		want := sc.Defaults
		fields := map[string]int{}
		for i, fl := range f.fields {
			fields[fl.name] = i
		}
		for _, name := range sc.Uses {
			pa, _ := event.ParamByName(name)
			i, ok := fields[name]
			if !ok {
				t.Fatalf("%s: the form has no field %q", sc.Name, name)
			}
			if f.fields[i].hint != pa.Hint || pa.Hint == "" {
				t.Errorf("%s: %s's hint %q, the table's %q", sc.Name, name, f.fields[i].hint, pa.Hint)
			}
			text := "7"
			switch pa.Kind {
			case event.ParamDuration:
				text = "37ms"
			case event.ParamWord:
				cs := pa.Choices()
				text = cs[len(cs)-1]
			}
			f.fields[i].input.SetValue(text)
			if err := pa.Set(&want, text); err != nil {
				t.Fatal(err)
			}
		}
		spec, err := f.spec()
		if err != nil {
			t.Fatalf("%s: %v", sc.Name, err)
		}
		if spec.Params != want {
			t.Errorf("%s: the form gives %+v, the table %+v", sc.Name, spec.Params, want)
		}
	}
}

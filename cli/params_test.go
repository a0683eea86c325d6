package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/talk"
)

// sample is a value of the parameter other than most defaults.
func sample(pa event.Param) string {
	switch pa.Kind {
	case event.ParamCount:
		return "7"
	case event.ParamDuration:
		return "37ms"
	}
	cs := pa.Choices()
	return cs[len(cs)-1]
}

// TestEveryParameterMeansTheSameInATalkFile: every parameter a scenario
// reads is a flag of run, and set in a talk file to the same text it gives
// the same parameters as the flag (Redlock's part and clock among them).
func TestEveryParameterMeansTheSameInATalkFile(t *testing.T) {
	t.Parallel()
	for _, sc := range scenario.Catalogue() {
		t.Run(sc.Name, func(t *testing.T) {
			f := &runFlags{}
			cmd := newRunCmdFor(f)
			args := []string{sc.Name}
			var yaml strings.Builder
			fmt.Fprintf(&yaml, "scenes:\n  - scenario: %s\n    strategy: %s\n    params:\n", sc.Name, sc.Strategies[0])
			for _, name := range sc.Uses {
				pa, ok := event.ParamByName(name)
				if !ok {
					t.Fatalf("%s reads %q, which is not in the table of parameters", sc.Name, name)
				}
				if fl := cmd.Flags().Lookup(name); fl == nil {
					t.Fatalf("run has no --%s", name)
				}
				args = append(args, "--"+name, sample(pa))
				fmt.Fprintf(&yaml, "      %s: %s\n", name, sample(pa))
			}
			if err := cmd.ParseFlags(args); err != nil {
				t.Fatal(err)
			}
			fromFlags, err := f.params(cmd, sc, sc.Strategies[0], nil, "")
			if err != nil {
				t.Fatalf("run %v: %v", args, err)
			}
			tk, err := talk.Parse("t.yaml", []byte(yaml.String()))
			if err != nil {
				t.Fatalf("%v\n%s", err, yaml.String())
			}
			if got := tk.Scenes[0].Params; got != fromFlags {
				t.Errorf("the talk file gives %+v\nthe flags %+v\n%s", got, fromFlags, yaml.String())
			}
		})
	}
}

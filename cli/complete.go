package cli

import (
	"slices"
	"strings"

	"github.com/locklab/locklab/event"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/themes"
)

// completion is one flag's candidates, each "value\tdescription".
type completion func(cmd *cobra.Command) []string

// flagCompletions are the flags whose values come from a fixed set.
var flagCompletions = map[string]completion{
	"scenario": func(cmd *cobra.Command) []string {
		switch cmd.Name() {
		case "host":
			return hostScenarioCandidates()
		case "serve":
			return outsideCandidates()
		}
		return scenarioCandidates()
	},
	"lock": strategyCandidates,
	"retry": func(*cobra.Command) []string {
		var out []string
		for _, p := range lock.Policies {
			out = append(out, string(p.Name)+"\t"+p.Doc)
		}
		return out
	},
	"order": func(*cobra.Command) []string {
		return []string{"opposite\tP1 A→B, P2 B→A: a circular wait", "sorted\tevery worker locks in one order: no cycle", "all-at-once\tone atomic multi-key acquire"}
	},
	"part":  func(*cobra.Command) []string { return choiceCandidates(event.PartChoices()) },
	"clock": func(*cobra.Command) []string { return choiceCandidates(event.ClockMoves) },
	"theme": func(*cobra.Command) []string { return slices.Clone(themes.Names) },
}

func choiceCandidates(cs []event.Choice) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name + "\t" + c.Doc
	}
	return out
}

func scenarioCandidates() []string {
	var out []string
	for _, s := range scenario.Catalogue() {
		out = append(out, s.Name+"\t"+s.Title)
	}
	return out
}

// outsideCandidates are the scenarios serve runs.
func outsideCandidates() []string {
	var out []string
	for _, c := range scenarioCandidates() {
		if name, _, _ := strings.Cut(c, "\t"); slices.Contains(scenario.OutsideScenarios, name) {
			out = append(out, c)
		}
	}
	return out
}

// strategyCandidates are the strategies of the scenario named on the
// command line (by --scenario or as run's argument), else every strategy.
func strategyCandidates(cmd *cobra.Command) []string {
	name := ""
	if f := cmd.Flags().Lookup("scenario"); f != nil {
		name = f.Value.String()
	}
	if args := cmd.Flags().Args(); name == "" && (cmd.Name() == "run" || cmd.Name() == "explore") && len(args) > 0 {
		name = args[0]
	}
	short := map[string]string{}
	var names []string
	for _, st := range scenario.Strategies() {
		short[st.Name] = st.Short
		names = append(names, st.Name)
	}
	if s, err := scenario.Lookup(name); err == nil {
		names = s.Strategies // the scenario's default first
	}
	if cmd.Name() == "host" {
		names = slices.DeleteFunc(slices.Clone(names), func(n string) bool { return scenario.Joinable(name, n) != nil })
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n + "\t" + short[n]
	}
	return out
}

// addCompletions makes every flag with a fixed set of values, and the
// scenario arguments of run and record, complete in bash, zsh and fish
// (`locklab completion SHELL`).
func addCompletions(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if comp, ok := flagCompletions[f.Name]; ok {
				_ = c.RegisterFlagCompletionFunc(f.Name, func(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
					return comp(cmd), cobra.ShellCompDirectiveNoFileComp
				})
			}
		})
		switch c.Name() {
		case "run":
			c.ValidArgsFunction = func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
				if len(args) > 0 {
					return nil, cobra.ShellCompDirectiveNoFileComp
				}
				return append(scenarioCandidates(), "all\tevery scenario with every strategy"), cobra.ShellCompDirectiveNoFileComp
			}
		case "explore":
			c.ValidArgsFunction = func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
				if len(args) > 0 {
					return nil, cobra.ShellCompDirectiveNoFileComp
				}
				return scenarioCandidates(), cobra.ShellCompDirectiveNoFileComp
			}
		case "record":
			c.ValidArgsFunction = func(_ *cobra.Command, _ []string, typed string) ([]string, cobra.ShellCompDirective) {
				name, _, hasStrategy := strings.Cut(typed, ":")
				if !hasStrategy {
					return scenarioCandidates(), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
				}
				s, err := scenario.Lookup(name)
				if err != nil {
					return nil, cobra.ShellCompDirectiveNoFileComp
				}
				var out []string
				for _, st := range s.Strategies {
					out = append(out, name+":"+st)
				}
				return out, cobra.ShellCompDirectiveNoFileComp
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// commandNames lists the root's commands a user can call, for messages.
func commandNames(root *cobra.Command) string {
	var names []string
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() && c.Name() != "help" {
			names = append(names, c.Name())
		}
	}
	return strings.Join(names, ", ")
}

// hostScenarioCandidates are the scenarios other machines can join.
func hostScenarioCandidates() []string {
	var out []string
	for _, s := range scenario.Catalogue() {
		if scenario.Joinable(s.Name, s.Strategies[0]) == nil || scenario.Joinable(s.Name, "safe") == nil {
			out = append(out, s.Name+"\t"+s.Title)
		}
	}
	return out
}

package cli

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/talk"
	"github.com/locklab/locklab/tui"
	"github.com/locklab/locklab/tui/present"
	"github.com/spf13/cobra"
)

type talkFlags struct {
	check bool
	notes bool
	theme string
	speed float64
}

func newTalkCmd() *cobra.Command {
	f := &talkFlags{}
	cmd := &cobra.Command{
		Use:   "talk TALK.yaml",
		Short: "Give a talk: play a talk file's scenes as one presenter session",
		Long: "talk plays the scenes of a talk file — scenario, strategy, parameters, seed, extra captions and\n" +
			"speaker notes per beat — one after the other in presenter mode: each opens with a title card,\n" +
			"stops at each beat, and → after a scene's last beat goes on to the next scene.\n" +
			"With --notes, in a second terminal, it follows the talk and shows the speaker's notes.\n" +
			"The format is in talks/README.md.",
		Example: "  locklab talk talks/locking-101.yaml\n" +
			"  locklab talk talks/locking-101.yaml --notes     # in a second terminal\n" +
			"  locklab talk --check talks/locking-101.yaml",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("talk needs one talk file: locklab talk TALK.yaml (see talks/)")
			}
			return nil
		},
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return []string{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
		},
		RunE: func(cmd *cobra.Command, args []string) error { return f.run(cmd, args[0]) },
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.check, "check", false, "check the talk file and list its scenes; exit 2 if it is wrong")
	fl.BoolVar(&f.notes, "notes", false, "show the speaker's notes of the talk given in another terminal")
	fl.StringVar(&f.theme, "theme", "", "dark, light, high-contrast, colour-blind or mono (NO_COLOR: mono)")
	fl.Float64Var(&f.speed, "speed", 0, "play every scene at this speed (0.00005 to 10), to rehearse; default: each scenario's own")
	return cmd
}

func (f *talkFlags) run(cmd *cobra.Command, path string) error {
	if f.check && f.notes {
		return usagef("--check and --notes do not go together: --check checks the file, --notes follows a talk")
	}
	if cmd.Flags().Changed("speed") {
		if err := checkFloat("speed", f.speed, store.MinSpeed, store.MaxSpeed); err != nil {
			return err
		}
	}
	t, logs, err := loadTalk(cmd, path)
	if err != nil {
		return err
	}
	if f.check {
		printTalk(cmd, t, logs)
		return nil
	}
	th, err := pickTheme(f.theme)
	if err != nil {
		return err
	}
	if !interactive() {
		return usagef("a talk needs a terminal; check the file with: locklab talk --check %s, or record it with: locklab record --talk %s --cast talk.cast", path, path)
	}
	sock, err := talk.SocketPath(path)
	if err != nil {
		return runtimeError{fmt.Errorf("the speaker's notes: %w", err)}
	}
	if f.notes {
		if cmd.Flags().Changed("theme") {
			return present.RunNotes(cmd.Context(), th, sock, path, os.Stdin, os.Stdout)
		}
		return present.RunNotes(cmd.Context(), nil, sock, path, os.Stdin, os.Stdout)
	}
	pub, err := talk.Publish(sock)
	if err != nil {
		return runtimeError{fmt.Errorf("%w; its notes: locklab talk %s --notes", err, path)}
	}
	defer pub.Close()
	return tui.Run(cmd.Context(), tui.Options{Theme: th, Tool: "locklab " + version, Talk: t, TalkLogs: logs,
		Publish: pub.Send, Speed: f.speed, SpeedSet: cmd.Flags().Changed("speed")}, os.Stdin, os.Stdout)
}

// printTalk lists a checked talk's scenes.
func printTalk(cmd *cobra.Command, t *talk.Talk, logs []*scenario.Loaded) {
	out := cmd.OutOrStdout()
	title := t.Title
	if title == "" {
		title = "(no title)"
	}
	fmt.Fprintf(out, "%s: %s — %d scene(s), fine\n", t.Path, title, len(t.Scenes))
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	for i, sc := range t.Scenes {
		from := fmt.Sprintf("seed %d", sc.Seed)
		if logs[i] != nil {
			from = "log " + sc.Log
		}
		var notes []string
		for _, b := range sc.Beats {
			notes = append(notes, b.Key())
		}
		beats := ""
		if len(notes) > 0 {
			beats = "notes or captions at beat " + strings.Join(notes, ", ")
		}
		fmt.Fprintf(tw, "  %d\t%s · %s\t%s\t%s\t%s\n", i+1, sc.Scenario, sc.Strategy, from, sc.Title, beats)
	}
	tw.Flush()
}

package cli

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/locklab/locklab/scenario"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Limits of the flags that are plain numbers.
const (
	minSlowmo = 0.1
	maxSlowmo = 1000
)

// inRange reports whether v is a finite number from lo to hi: NaN and the
// infinities fail every comparison, so they are refused here, not later.
func inRange(v, lo, hi float64) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0) && v >= lo && v <= hi
}

// checkFloat refuses a float flag outside lo to hi, NaN or infinite.
func checkFloat(name string, v, lo, hi float64) error {
	if !inRange(v, lo, hi) {
		return usagef("--%s must be a number from %s to %s (got %g)", name, plain(lo), plain(hi), v)
	}
	return nil
}

// plain writes a bound as people write it: 0.00005, not 5e-05.
func plain(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// changed lists the flags set on the command line, in the order cobra
// lists them.
func changed(cmd *cobra.Command) []string {
	var names []string
	cmd.Flags().Visit(func(f *pflag.Flag) { names = append(names, f.Name) })
	return names
}

// notApplying lists the set flags that are not in allowed, as --names.
func notApplying(cmd *cobra.Command, allowed ...string) []string {
	var out []string
	for _, n := range changed(cmd) {
		if !slices.Contains(allowed, n) {
			out = append(out, "--"+n)
		}
	}
	return out
}

// flagList joins flags for a sentence: "--a", "--a and --b", "--a, --b and --c".
func flagList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// doesOrDo is the verb for a flag list.
func doesOrDo(names []string) string {
	if len(names) == 1 {
		return "does"
	}
	return "do"
}

// note prints a one-line note about a flag that changes nothing.
func note(cmd *cobra.Command, format string, a ...any) {
	fmt.Fprintf(cmd.ErrOrStderr(), "locklab: note: "+format+"\n", a...)
}

// noteIgnored notes the parameter flags sc has no use for: --workers of a
// scenario whose workers each play a part, --order outside deadlock.
func noteIgnored(cmd *cobra.Command, sc *scenario.Scenario) {
	set := cmd.Flags().Changed
	if set("workers") && sc.Cast > 0 {
		note(cmd, "--workers does not apply to %s: each of its %d workers plays a part; ignored", sc.Name, sc.Cast)
	}
	if set("order") && !slices.Contains(sc.Uses, "order") {
		note(cmd, "--order is deadlock's lock order; %s does not use it; ignored", sc.Name)
	}
	for _, name := range []string{"part", "clock"} {
		if set(name) && !slices.Contains(sc.Uses, name) {
			note(cmd, "--%s is redlock's; %s does not use it; ignored", name, sc.Name)
		}
	}
}

// refuseFlag says why cmd has no --name, a flag of another command: the
// parser refuses it as any unknown flag (exit 2), and the one line says
// why and where it belongs instead of only "unknown flag".
func refuseFlag(cmd *cobra.Command, name, why string) {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[refusedKey+name] = why
}

// refusedKey prefixes the annotations refuseFlag keeps.
const refusedKey = "locklab-refused:"

// refusedWhy is why cmd has no flag named in pflag's message msg ("unknown
// flag: --name"), when refuseFlag said so.
func refusedWhy(cmd *cobra.Command, msg string) (string, string, bool) {
	name, ok := strings.CutPrefix(msg, "unknown flag: --")
	if !ok {
		return "", "", false
	}
	why, ok := cmd.Annotations[refusedKey+name]
	return name, why, ok
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// dashed is names as flags: --name.
func dashed(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "--" + n
	}
	return out
}

package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/bench"
	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/launch"
	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/store"
	"github.com/spf13/cobra"
)

// Bounds of bench's flags.
const (
	minBenchDuration = 10 * time.Millisecond
	maxBenchDuration = time.Minute
	maxBenchWorkers  = 1024
	maxBenchRounds   = 100
	benchPlotWidth   = 72
	benchPlotHeight  = 16
)

type benchFlags struct {
	locks        []string
	workers      []int
	duration     time.Duration
	rounds       int
	safety       bool
	need         string
	autopipeline bool
	json         string
	storeFlags
}

func newBenchCmd() *cobra.Command {
	f := &benchFlags{}
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure lock cycles/s and acquire latency of each strategy against its server's ceiling",
		Long: "bench cycles every configured lock strategy (acquire, release) at 1, 8, 32 and 128\n" +
			"concurrent workers, each on a key of its own, in rounds interleaved with its server's\n" +
			"cheapest round trip (Redis SET, Postgres SELECT 1, MariaDB DO 1, memcached get, etcd Put):\n" +
			"cycles/s and the ratio to that ceiling as medians with their spread, acquire latency\n" +
			"p50/p99/p999, a plot, which strategy is fastest and whether go-redis's AutoPipeline client\n" +
			"beats the plain one — each only where the difference is beyond the spread. A ratio above\n" +
			"1.0× (impossible for a lock cycle) is flagged as noise. --json adds the machine, its load,\n" +
			"the servers' versions and every round's raw rates.",
		Example: "  locklab bench\n" +
			"  locklab bench --lock safe,fenced --workers 1,32 --duration 2s\n" +
			"  locklab bench --redis redis://localhost:6379 --json\n" +
			"  locklab bench --postgres postgres://locklab:locklab@localhost:5432/locklab --json=bench.json",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				if cmd.Flags().Changed("json") {
					return usagef("bench takes no arguments (got %q): write --json=FILE to save the JSON to a file", args[0])
				}
				return usagef("bench takes no arguments (got %q): choose strategies with --lock", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return f.run(cmd) },
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&f.locks, "lock", nil, "strategies to measure, comma-separated (default: every one whose server is configured)")
	fl.IntSliceVar(&f.workers, "workers", bench.DefaultWorkers, "concurrent workers of each cell, comma-separated")
	fl.DurationVar(&f.duration, "duration", 500*time.Millisecond, "measured time of each cell, over its rounds (its ceiling gets as long again)")
	fl.IntVar(&f.rounds, "rounds", 5, "rounds of each cell, alternating with its ceiling (ABAB…): figures are their medians")
	fl.BoolVar(&f.safety, "safety", true, "first run each strategy's safety tests (a holder paused past its TTL, a crashed holder; a few seconds)")
	fl.StringVar(&f.need, "need", "safety", "what the closing \"what to pick\" ranks for: "+strings.Join(bench.Needs, ", "))
	fl.BoolVar(&f.autopipeline, "autopipeline", true, "also measure the Redis-key strategies through go-redis's AutoPipeline client (their ceiling: SET through it)")
	fl.StringVar(&f.json, "json", "", "print the results as JSON (--json=FILE writes them to FILE and prints the tables)")
	fl.Lookup("json").NoOptDefVal = "-"
	addStoreFlags(fl, &f.storeFlags, false)
	_ = cmd.RegisterFlagCompletionFunc("lock", completeBenchLocks)
	_ = cmd.RegisterFlagCompletionFunc("need", fixedCompletions("safety\tnever two holders unnoticed, a crash frees the lock", "speed\tthe most cycles/s", "no-ttl\tno TTL to choose: a pause keeps it, a crash frees it"))
	_ = cmd.RegisterFlagCompletionFunc("workers", fixedCompletions("1,8,32,128\tthe default", "1\tone worker: latency", "32\tmany: throughput", "1,2,4,8,16,32,64,128\tevery doubling"))
	_ = cmd.RegisterFlagCompletionFunc("duration", fixedCompletions("500ms\tthe default", "2s\tsteadier figures", "100ms\ta quick look"))
	return cmd
}

func fixedCompletions(vals ...string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return vals, cobra.ShellCompDirectiveNoFileComp
	}
}

// benchable are the strategies bench can measure: all but none.
func benchable() []lock.Info {
	return slices.DeleteFunc(lock.All(), func(i lock.Info) bool { return i.Name == "none" })
}

// completeBenchLocks completes the strategy after the last comma.
func completeBenchLocks(_ *cobra.Command, _ []string, typed string) ([]string, cobra.ShellCompDirective) {
	done := ""
	if i := strings.LastIndex(typed, ","); i >= 0 {
		done = typed[:i+1]
	}
	var out []string
	for _, s := range benchable() {
		if !slices.Contains(strings.Split(done, ","), s.Name) {
			out = append(out, done+s.Name+"\t"+s.Doc)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// check refuses flag values that cannot make a bench.
func (f *benchFlags) check() ([]string, error) {
	if f.duration < minBenchDuration || f.duration > maxBenchDuration {
		return nil, usagef("--duration must be from %s to %s (got %s)", minBenchDuration, maxBenchDuration, f.duration)
	}
	if f.rounds < 1 || f.rounds > maxBenchRounds {
		return nil, usagef("--rounds must be from 1 to %d (got %d)", maxBenchRounds, f.rounds)
	}
	if !slices.Contains(bench.Needs, f.need) {
		return nil, usagef("--need must be one of %s (got %q)", strings.Join(bench.Needs, ", "), f.need)
	}
	if len(f.workers) == 0 {
		return nil, usagef("--workers needs at least one count, such as 1,8,32,128")
	}
	for _, w := range f.workers {
		if w < 1 || w > maxBenchWorkers {
			return nil, usagef("--workers: each count must be from 1 to %d (got %d)", maxBenchWorkers, w)
		}
	}
	var names []string
	for _, s := range benchable() {
		names = append(names, s.Name)
	}
	for _, l := range f.locks {
		if !slices.Contains(names, l) {
			return nil, usagef("--lock %q is not a strategy bench measures: want one of %s", l, strings.Join(names, ", "))
		}
	}
	if f.json != "-" {
		if err := checkOutputPath("json", f.json); err != nil {
			return nil, err
		}
	}
	urls := redisURLs(f.redis)
	for _, u := range urls {
		if _, err := store.URLAddr(u); err != nil {
			return nil, usageError{err}
		}
	}
	for _, l := range f.locks {
		if least, def := quorumOf(l); multiNode(l) && len(urls) > 0 && len(urls) < least {
			return nil, usagef("--lock %s needs at least %d independent Redis nodes: give --redis once per node (%d given), or leave out --redis for %d embedded nodes", l, least, len(urls), def)
		}
	}
	return urls, nil
}

func (f *benchFlags) run(cmd *cobra.Command) error {
	urls, err := f.check()
	if err != nil {
		return err
	}
	if len(f.locks) > 0 {
		if _, err := f.usable(cmd, f.locks, false); err != nil {
			return err
		}
	}
	ctx := cmd.Context()
	w := launch.Where{URLs: urls, Servers: f.servers()}
	var p event.Params
	if len(urls) == 0 {
		p.Nodes = 5 // Redlock's quorum on embedded nodes
	}
	cfg := w.Store(p)
	cfg.PoolSize = slices.Max(f.workers) + 8 // every worker of the widest cell, and the ceiling's
	st, err := w.Open(ctx, cfg)
	if err != nil {
		return storeError(err)
	}
	defer st.Close()
	run, left := bench.Plan(st, f.locks)
	if len(f.locks) > 0 && len(left) > 0 {
		return usagef("--lock %s %s", left[0].Strategy, left[0].Reason)
	}
	stderr := cmd.ErrOrStderr()
	var progress func(bench.Progress)
	if isTerminal(stderr) {
		cells := len(f.workers) * len(run)
		if f.autopipeline {
			cells += len(f.workers) * len(slices.DeleteFunc(slices.Clone(run), func(s string) bool { return !bench.RedisKey(s) }))
		}
		note(cmd, "bench: %d cells of %s in %d rounds on %s, about %s (--duration, --lock and --workers make it shorter)",
			cells, f.duration, f.rounds, st.Describe(), (time.Duration(cells) * 2 * (f.duration + benchWarmup(f.duration))).Round(time.Second))
		progress = func(p bench.Progress) {
			fmt.Fprintf(stderr, "\r\033[Kbench: cell %d/%d · %s at %d worker(s) · about %s left…", p.Cell, p.Cells, strings.Replace(p.What, bench.AutoPipelined, "+ap", 1), p.Workers, p.Left.Round(time.Second))
		}
	}
	rep, err := bench.Run(ctx, bench.Config{Store: st, Strategies: run, Workers: f.workers,
		Duration: f.duration, Warmup: benchWarmup(f.duration), Rounds: f.rounds,
		AutoPipeline: f.autopipeline, Progress: progress, Version: version, Need: f.need, SafetyTTL: safetyTTL(f.safety)})
	if isTerminal(stderr) {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if err != nil {
		if ctx.Err() != nil {
			return runtimeError{fmt.Errorf("interrupted; the bench's keys were deleted")}
		}
		return runtimeError{fmt.Errorf("bench on %s: %w", st.Describe(), err)}
	}
	rep.LeftOut = append(left, rep.LeftOut...)
	if err := f.write(cmd.OutOrStdout(), rep); err != nil {
		return err
	}
	if len(rep.Results) == 0 && len(rep.LeftOut) > 0 {
		return runtimeError{fmt.Errorf("nothing was measured: %s: %s", rep.LeftOut[0].Strategy, rep.LeftOut[0].Reason)}
	}
	if f.json == "-" {
		for _, failed := range rep.Failed() {
			note(cmd, "%s", failed)
		}
	}
	return nil
}

// write prints the report: JSON on stdout with --json, else the tables and
// the plot (and the JSON to --json=FILE).
func (f *benchFlags) write(out io.Writer, rep *bench.Report) error {
	if f.json == "-" {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	rep.WriteText(out)
	fmt.Fprintln(out)
	fmt.Fprint(out, rep.Plot(benchPlotWidth, benchPlotHeight))
	if f.json == "" {
		return nil
	}
	return writeOutput("json", f.json, "JSON results", func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	})
}

// safetyTTL is the TTL of the safety tests; 0 leaves them out.
func safetyTTL(on bool) time.Duration {
	if on {
		return time.Second
	}
	return 0
}

// benchWarmup is the warm-up before a cell's bursts, split over them.
func benchWarmup(d time.Duration) time.Duration { return min(d/5, 200*time.Millisecond) }

// isTerminal reports whether w is a terminal (progress goes there only).
func isTerminal(w io.Writer) bool {
	fh, ok := underlying(w).(*os.File)
	if !ok {
		return false
	}
	fi, err := fh.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

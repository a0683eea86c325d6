package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/launch"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/store/spawn"
	"github.com/spf13/cobra"
)

// runAll runs every scenario with every strategy, a few at a time, and
// prints one verdict table.
func (f *runFlags) runAll(cmd *cobra.Command) error {
	if extra := notApplying(cmd, runAllFlags...); len(extra) > 0 {
		return usagef("run all runs every scenario with its own defaults: %s %s not apply (it takes %s; to set parameters, run one scenario: locklab run SCENARIO %s …)",
			flagList(extra), doesOrDo(extra), flagList(dashed(runAllFlags)), extra[0])
	}
	urls, err := f.urls(cmd, &f.paceFlags)
	if err != nil {
		return err
	}
	seed := f.seed
	if !cmd.Flags().Changed("seed") {
		seed = 1
	}
	jobs, needs := f.allJobs(cmd, urls)
	if err := f.probe(cmd, urls); err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	start := time.Now()
	f.runJobs(cmd, jobs, seed, urls)
	if cmd.Context().Err() != nil {
		return interruptedAll(jobs)
	}
	failed := printVerdicts(out, jobs)
	fmt.Fprintf(out, "\n%d runs in %v (seed %d)\n", len(jobs), time.Since(start).Round(100*time.Millisecond), seed)
	if _, err := f.usable(cmd, needs, true); err != nil {
		return err
	}
	if failed > 0 {
		return runtimeError{fmt.Errorf("%d of %d runs failed", failed, len(jobs))}
	}
	return nil
}

// allJob is one run of run all: a scenario with one of its strategies,
// and what it came to.
type allJob struct {
	sc       *scenario.Scenario
	strategy string
	sum      *check.Summary
	err      error
}

// allJobs are the runs of run all: every strategy of every scenario but
// those whose server is not configured (needs names them) and the
// multi-node ones the servers given cannot hold (a note says how many).
func (f *runFlags) allJobs(cmd *cobra.Command, urls []string) (jobs []*allJob, needs []string) {
	skipped, quorum := 0, 0
	for _, sc := range scenario.Catalogue() {
		for _, st := range sc.Strategies {
			if scenario.NeedsServer(st, f.servers()) != "" {
				if !slices.Contains(needs, st) {
					needs = append(needs, st)
				}
				continue
			}
			if least, _ := quorumOf(st); multiNode(st) && f.topology != "" && spawn.TopologyNodes(f.topology) < least {
				skipped, quorum = skipped+1, least
				continue
			}
			if least, _ := quorumOf(st); multiNode(st) && len(urls) > 0 && len(urls) < least {
				skipped, quorum = skipped+1, least
				continue
			}
			jobs = append(jobs, &allJob{sc: sc, strategy: st})
		}
	}
	if skipped > 0 && f.topology != "" {
		note(cmd, "%d redlock run(s) left out: redlock needs at least %d Redis nodes, --topology %s has %d (--topology %s has five)", skipped, quorum, f.topology, spawn.TopologyNodes(f.topology), spawn.TopoRedlock)
	} else if skipped > 0 {
		note(cmd, "%d redlock run(s) left out: redlock needs at least %d Redis nodes, got %d URL(s)", skipped, quorum, len(urls))
	}
	return jobs, needs
}

// probe takes one look at the real servers before fifty runs: a server
// that cannot be used fails every run alike, so it is said once.
func (f *runFlags) probe(cmd *cobra.Command, urls []string) error {
	if len(urls) == 0 {
		return nil
	}
	w := f.where(urls, &f.paceFlags)
	cfg := w.Store(event.Params{Nodes: len(urls)})
	cfg.PoolSize = 0 // one look: go-redis's own pool
	st, err := w.Open(cmd.Context(), cfg)
	if err != nil {
		return err
	}
	return st.Close()
}

// runJobs runs the jobs, printing each verdict as it comes unless
// --quiet. Simulated runs go first, two at a time: they only compute, so
// two cores are busy. The runs that keep real time then go all together,
// as they mostly wait; run beside the simulated ones, they were held up
// past what their TTLs allow, which their narration then said (and the
// table marks). On real servers every run keeps real time and they go
// four at a time, the slow ones first, so the long poles do not start
// last.
func (f *runFlags) runJobs(cmd *cobra.Command, jobs []*allJob, seed uint64, urls []string) {
	embedded := len(urls) == 0 && f.topology == ""
	var simulated, real []*allJob
	for _, slow := range []bool{true, false} {
		for _, j := range jobs {
			if slices.Contains(j.sc.Slow, j.strategy) != slow {
				continue
			}
			cfg := scenario.Config{Strategy: j.strategy, Realtime: f.realtime}
			if embedded && !scenario.KeepsRealTime(store.Embedded, j.sc, cfg) {
				simulated = append(simulated, j)
			} else {
				real = append(real, j)
			}
		}
	}
	at := 4
	if embedded {
		at = maxRealTimeRuns
	}
	gap := time.Duration(0)
	if embedded {
		gap = realTimeGap
	}
	f.runSome(cmd, simulated, 2, 0, seed, urls)
	f.runSome(cmd, real, at, gap, seed, urls)
}

// maxRealTimeRuns is how many runs that keep real time on the embedded
// store go at once: they mostly sleep, and the catalogue has fewer.
// realTimeGap is the least time between two of them starting: a run's
// start (its store, its clients, an embedded etcd) is its busiest moment,
// and thirty at once held the first steps of each up past a twentieth of
// their TTLs.
const (
	maxRealTimeRuns = 48
	realTimeGap     = 100 * time.Millisecond
)

// runSome runs jobs, at most at of them at once and each at least gap
// after the one before.
func (f *runFlags) runSome(cmd *cobra.Command, jobs []*allJob, at int, gap time.Duration, seed uint64, urls []string) {
	queue := make(chan *allJob, len(jobs))
	for _, j := range jobs {
		queue <- j
	}
	close(queue)
	out := cmd.OutOrStdout()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var next time.Time // when the next run may start
	for range min(at, len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range queue {
				if cmd.Context().Err() != nil {
					return // interrupted: the table is not printed
				}
				mu.Lock()
				now := time.Now()
				wait := next.Sub(now)
				next = now.Add(max(wait, 0) + gap)
				mu.Unlock()
				time.Sleep(wait)
				j.sum, j.err = f.runQuiet(cmd.Context(), j.sc, j.strategy, seed, urls)
				if f.quiet {
					continue
				}
				mu.Lock()
				if j.err != nil {
					fmt.Fprintf(out, "  %-13s %-20s error: %v\n", j.sc.Name, j.strategy, j.err)
				} else {
					fmt.Fprintf(out, "  %-13s %-20s %s%s\n", j.sc.Name, j.strategy, j.sum.Verdict, heldUp(j.sum))
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

// interruptedAll says what an interrupted run all left behind.
func interruptedAll(jobs []*allJob) error {
	var left []error
	for _, j := range jobs {
		var le *store.LeftError
		if errors.As(j.err, &le) {
			left = append(left, le)
		}
	}
	if len(left) > 0 {
		return runtimeError{fmt.Errorf("interrupted; %w", errors.Join(left...))}
	}
	return runtimeError{fmt.Errorf("interrupted; the keys of every run that started were deleted")}
}

// printVerdicts prints the table of run all and returns how many runs
// failed.
func printVerdicts(out io.Writer, jobs []*allJob) (failed int) {
	var held []*allJob
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tSTRATEGY\tVIRTUAL TIME\tVERDICT")
	for _, j := range jobs {
		if j.err != nil {
			failed++
			fmt.Fprintf(tw, "%s\t%s\t-\terror: %v\n", j.sc.Name, j.strategy, j.err)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s%s\n", j.sc.Name, j.strategy, j.sum.Duration.D().Round(time.Millisecond), j.sum.Verdict, heldUp(j.sum))
		if heldUp(j.sum) != "" {
			held = append(held, j)
		}
	}
	tw.Flush()
	if len(held) > 0 {
		j := held[0]
		fmt.Fprintf(out, "\n%d run(s) marked * were held up by the machine, not by their lock: their verdicts may be the load's. Run one alone to see, e.g. locklab run %s --lock %s (its summary says what was held up).\n",
			len(held), j.sc.Name, j.strategy)
	}
	return failed
}

// heldUp marks a verdict the machine may have made: a run kept in real
// time whose narration said the machine could not keep up.
func heldUp(s *check.Summary) string {
	if s == nil || s.Machine == "" {
		return ""
	}
	return " *"
}

// runAllFlags are the flags run all takes; the rest set one scenario's
// parameters or outputs.
var runAllFlags = []string{"seed", "quiet", "redis", "speed", "slowmo", "postgres", "mysql", "memcached", "etcd"}

// runQuiet runs one scenario with its defaults and returns its summary.
func (f *runFlags) runQuiet(ctx context.Context, sc *scenario.Scenario, strategy string, seed uint64, urls []string) (_ *check.Summary, err error) {
	p := sc.Defaults
	if multiNode(strategy) && len(urls) == 0 {
		_, p.Nodes = quorumOf(strategy)
	}
	if len(urls) > 0 {
		p.Nodes = len(urls)
	}
	if f.topology != "" {
		p.Nodes = spawn.TopologyNodes(f.topology)
	}
	cfg := scenario.Config{Scenario: sc.Name, Strategy: strategy, Params: p, Seed: seed, Tool: "locklab " + version, Realtime: f.realtime}
	r, st, err := launch.Start(ctx, f.where(urls, &f.paceFlags), cfg, nil)
	if err != nil {
		var oe *launch.OpenError
		if errors.As(err, &oe) {
			return nil, oe.Err
		}
		return nil, err
	}
	defer st.AbortOn(ctx)()
	ended := true
	defer func() {
		if !ended && st.Kind() == store.Embedded {
			return // its workers may still step: it ends with the process
		}
		if cerr := st.Close(); cerr != nil && err == nil {
			err = cerr // keys left behind: the run's error says where and how to remove them
		}
	}()
	if ended, err = awaitRun(ctx, r); err != nil {
		return nil, err
	}
	return r.Summary(), nil
}

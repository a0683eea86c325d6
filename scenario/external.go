package scenario

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/store"
)

// A race can span processes: a host sets it up, checks it and gives its
// verdict, while guests elsewhere run the workers on the same keys and send
// their events to the host, which appends them to its one log.

// guestWork are the scenarios whose workers can race from other
// processes: their setup and their final reading are the host's, and
// in between each worker does what it would do in one process. The
// others are stories whose workers each play a part (a holder that
// crashes, stalls or loses a node), which a room of attendees cannot share.
var guestWork = map[string]func(ctx context.Context, env *Env, w *Worker){
	"oversell": func(ctx context.Context, env *Env, w *Worker) { buy(ctx, env, w) },
	"retry":    retryBuy,
	"deadlock": ringWorker,
	"webhook": func(ctx context.Context, env *Env, w *Worker) {
		deliver(ctx, env, w, env.payment)
	},
	"queue-double": func(ctx context.Context, env *Env, w *Worker) { takeJobs(ctx, env, w, env.order, nil) },
}

// guestRun runs a guest's workers of scenario name.
func guestRun(name string) func(ctx context.Context, env *Env) error {
	work := guestWork[name]
	return func(ctx context.Context, env *Env) error {
		env.payment = payment(env.Params.Workers) // this machine's deliveries arrive together
		return env.Workers(ctx, env.Params.Workers, func(ctx context.Context, w *Worker) { work(ctx, env, w) })
	}
}

// guestStrategies are the strategies of sc a shared race can use: those
// that need one Redis server and nothing beyond it.
func guestStrategies(sc *Scenario) []string {
	beyond := beyondRedis()
	return slices.DeleteFunc(slices.Clone(sc.Strategies), func(s string) bool {
		info, _ := lock.Lookup(s)
		return info.MultiNode() || slices.Contains(beyond, s) // one shared Redis holds no quorum
	})
}

// Joinable reports whether workers in other processes can race in sc with
// strategy; if not, the error says what can.
func Joinable(sc, strategy string) error {
	s, err := Lookup(sc)
	if err != nil {
		return fmt.Errorf("%w (other machines can join %s)", err, JoinableNames())
	}
	if _, ok := guestWork[s.Name]; !ok {
		return fmt.Errorf("%s cannot be raced from other machines: its workers each play one part of a story; want one of %s", sc, JoinableNames())
	}
	if ok := guestStrategies(s); !slices.Contains(ok, strategy) {
		return fmt.Errorf("--lock %q cannot be raced from other machines in %s: want one of %s", strategy, s.Name, strings.Join(ok, ", "))
	}
	return nil
}

// JoinableNames lists the scenarios that other machines can join.
func JoinableNames() string {
	var names []string
	for _, s := range catalogue {
		if guestWork[s.Name] != nil {
			names = append(names, s.Name)
		}
	}
	return strings.Join(names, ", ")
}

// JoinableStrategies lists the strategies a shared race of sc can use.
func JoinableStrategies(sc string) []string {
	s, err := Lookup(sc)
	if err != nil || guestWork[s.Name] == nil {
		return nil
	}
	return guestStrategies(s)
}

// StartHosted starts a run whose workers race in other processes: the
// scenario's setup and its final reading happen here, and in between await
// runs until the remote workers are done. Their events come in through
// Log.EmitAt. lanes name the workers (len(lanes) of them).
func StartHosted(ctx context.Context, st *store.Store, cfg Config, lanes []string, await func(ctx context.Context) error) (*Run, error) {
	nameScripts()
	if err := Joinable(cfg.Scenario, cfg.Strategy); err != nil {
		return nil, err
	}
	cfg.Params.Workers = len(lanes)
	return start(ctx, st, cfg, runMode{lanes: lanes, hosted: await})
}

// StartGuest runs cfg's workers here, in a race another process hosts on
// the same keys (st opened with its run id, as a guest): no setup, no
// final reading, no checker. Its workers are lanes first… of the race's
// total. The events stay in the run's log, numbered from worker 0, for
// the caller to send to the host.
func StartGuest(ctx context.Context, st *store.Store, cfg Config, first, total int) (*Run, error) {
	nameScripts()
	if err := Joinable(cfg.Scenario, cfg.Strategy); err != nil {
		return nil, err
	}
	if first < 0 || total < first+cfg.Params.Workers {
		return nil, &event.ParamError{Param: "workers", Msg: fmt.Sprintf("lanes %d… of %d cannot hold %d workers", first, total, cfg.Params.Workers)}
	}
	return start(ctx, st, cfg, runMode{guest: true, first: int32(first), total: total})
}

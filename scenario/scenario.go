// Package scenario is locklab's engine: the catalogue of scenarios, their
// runs and narration, the runner whose workers race on the store as
// goroutines (or as a simulation's actors), and the faults injected into a
// run. What a run emits goes to an event.Log; what it amounts to is
// check's, said in the scenario's own words. It holds no terminal code.
package scenario

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/store"
)

// Scenario is one entry of the catalogue.
type Scenario struct {
	Name    string
	Title   string
	Watch   string // what to watch for, one line
	Explain string // one paragraph
	Source  string // where it comes from
	// Strategies are the ones the scenario runs with; the first is the default.
	Strategies []string
	// more, when set, adds the strategies this program registered that
	// the scenario also runs with (the ones beyond Redis); the catalogue
	// adds them on first use, once the program has registered its own.
	more func() []string
	// Defaults are its parameters' defaults.
	Defaults event.Params
	// Uses names the parameters (flag names) the scenario reads.
	Uses []string
	// Speed is the virtual clock's speed the interactive view opens the
	// scenario at (live or replayed): the one at which its story lasts a
	// watchable time on screen, measured on its default run.
	Speed float64
	// speedFor, if set, is the opening speed of a strategy, part or lock
	// order whose story is of another length (0: Speed); see OpeningSpeed.
	speedFor func(strategy string, p event.Params) float64
	// Cast, when set, is the scenario's fixed number of workers: each one
	// plays a part, so --workers does not apply.
	Cast int
	// RealTime, when set, says why the scenario keeps real time on the
	// embedded store too (its stories need servers that keep their own).
	RealTime string
	// castFor, if set, is the number of workers for the strategy and
	// parameters, when they choose which parts are played (Redlock's --part).
	castFor func(strategy string, p event.Params) int
	// refuse, if set, says why the scenario cannot run with the strategy
	// and parameters ("" when it can): a part the strategy cannot play.
	refuse func(strategy string, p event.Params) *event.ParamError
	run    func(ctx context.Context, env *Env) error
	// notes, if set, adds the scenario's own findings to its summary: a
	// pure fold over the events, like everything else in it.
	notes func(h event.Header) check.NoteFold
	// noRetry names the strategies whose workers never try again, whatever
	// the retry parameters: they take no lock that can turn them away, or
	// answer a taken lock at once (see Retries).
	noRetry []string
	// Slow names the strategies whose runs take far longer than the rest
	// (`locklab run all` starts them first).
	Slow []string
	// beats is the scenario's narration for a strategy and parameters.
	beats func(strategy string, p event.Params) []Beat
	// beatsOn, if set, is the narration of a run on a store with the
	// servers have (a part the run cannot play says so instead); beats is
	// then what it tells with every server there.
	beatsOn func(strategy string, p event.Params, have *store.Servers) []Beat
	// headings, if set, are the IDs of every beat a run tells, in order,
	// where the run says some (a part's heading) itself besides beats.
	headings func(strategy string, p event.Params) []string
	// lockOf, if set, names the lock strategy a run of the scenario's
	// strategy takes ("" for none), where its strategies are not locks
	// (retry policies, cron's ways); keyLocks names it per lock key, where
	// each key is a lock of its own kind.
	lockOf   func(strategy string) string
	keyLocks map[string]string
}

// Strategy is a way to protect the critical section.
type Strategy struct {
	Name, Short string
}

// Strategies are the lock strategies on Redis, "atomic" (the lock-free
// answer for a plain counter), then the strategies beyond Redis this
// program registered.
func Strategies() []Strategy {
	var ss []Strategy
	for _, s := range lock.Strategies {
		ss = append(ss, Strategy{s.Name, s.Doc})
	}
	ss = append(ss, Strategy{"atomic", "no lock: one Lua script checks and decrements"})
	for _, name := range libraries() {
		info, _ := lock.Lookup(name)
		ss = append(ss, Strategy{info.Name, info.Doc})
	}
	for _, name := range beyondRedis() {
		info, _ := lock.Lookup(name)
		ss = append(ss, Strategy{info.Name, info.Doc})
	}
	return ss
}

var catalogue = []*Scenario{oversell, naiveFlaws, crash, ttlExpiry, deadlock, retryScenario, fencing, renewal, extendLate, lateGrant, queueDouble, webhook, redlockScenario, failoverScenario, cron, tradeOffs, leaderScenario}

// Catalogue lists every scenario in order.
func Catalogue() []*Scenario {
	completeCatalogue()
	return catalogue
}

var completed sync.Once

// completeCatalogue adds to each scenario the strategies beyond Redis the
// program registered (in its packages' init, before any use).
func completeCatalogue() {
	completed.Do(func() {
		for _, s := range catalogue {
			if s.more != nil {
				s.Strategies = slices.Concat(s.Strategies, s.more())
			}
		}
	})
}

// Names lists the scenario names, comma-separated.
func Names() string {
	completeCatalogue()
	names := make([]string, len(catalogue))
	for i, s := range catalogue {
		names[i] = s.Name
	}
	return strings.Join(names, ", ")
}

// Lookup finds a scenario by name.
func Lookup(name string) (*Scenario, error) {
	completeCatalogue()
	for _, s := range catalogue {
		if s.Name == name {
			return s, nil
		}
	}
	return nil, fmt.Errorf("unknown scenario %q: want one of %s", name, Names())
}

// Supports reports whether the scenario runs with strategy.
func (s *Scenario) Supports(strategy string) bool { return slices.Contains(s.Strategies, strategy) }

// Refuses says why the scenario cannot run with strategy and p (a part
// the strategy cannot play: redsync-quorum has no fence), nil when it can.
func (s *Scenario) Refuses(strategy string, p event.Params) error {
	if s.refuse != nil {
		if err := s.refuse(strategy, p); err != nil {
			return err
		}
	}
	return nil
}

// StrategyNames lists the scenario's strategies, comma-separated.
func (s *Scenario) StrategyNames() string { return strings.Join(s.Strategies, ", ") }

// baseDefaults are the parameters every scenario starts from.
var baseDefaults = event.Params{
	Workers: 50, Stock: 1, Delay: event.Millis(5 * time.Millisecond), TTL: event.Millis(5 * time.Second),
	Retry: "none", MaxRetries: 10, RetryBase: event.Millis(100 * time.Millisecond),
	RetryCap: event.Millis(5 * time.Second), Nodes: 1,
}

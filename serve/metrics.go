package serve

import (
	"net/http"
	"sync"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics counts what the rounds' event logs record, for Prometheus: a
// fold over each log, caught up when scraped (and when a round ends), so
// the numbers are the log's and nothing else's.
type metrics struct {
	reg *prometheus.Registry

	lockCalls, denials, retries, lapses, events, rounds prometheus.Counter
	hold                                                *holdHistogram
	violations, workers, refused                        *prometheus.CounterVec
	round                                               prometheus.Gauge
	lost                                                *prometheus.GaugeVec

	mu    sync.Mutex
	folds map[*event.Log]*logFold
}

// logFold is how far one log has been counted, its tally, and what of
// the tally the counters already hold.
type logFold struct {
	cursor int
	tally  *check.TallyFold
	seen   check.Tally
}

func newMetrics() *metrics {
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: "locklab", Name: name, Help: help})
	}
	m := &metrics{
		reg:       prometheus.NewRegistry(),
		lockCalls: counter("lock_calls_total", "Lock acquire attempts (one per try, retries included)."),
		denials:   counter("lock_denials_total", "Lock attempts denied because another worker held the lock."),
		retries:   counter("lock_retries_total", "Backoffs before a retry of a denied lock attempt."),
		lapses: counter("lock_ttl_lapses_total", "Locks (or reservations) whose TTL lapsed while held, each once: a release "+
			"later than its TTL (from the acquire or the last renewal), a release the server refused, a lock its watchdog "+
			"lost, or an expiry the log records."),
		events: counter("events_total", "Events appended to the rounds' logs, derived ones included."),
		rounds: counter("rounds_ended_total", "Rounds ended by POST /reset."),
		hold:   newHoldHistogram(),
		violations: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "locklab", Name: "violations_total",
			Help: "Safety violations the checker found, by kind (overlap, oversold, lost_update, duplicate)."}, []string{"code"}),
		workers: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "locklab", Name: "workers_total",
			Help: "Workers (requests) that finished, by outcome: ok, lock, stock, error, indeterminate, cancelled."}, []string{"outcome"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "locklab", Name: "requests_refused_total",
			Help: "Requests refused before they became workers: over the rate limit, or the round full."}, []string{"reason"}),
		round: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "locklab", Name: "round", Help: "The current round."}),
		lost: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "locklab", Name: "round_lost_writes",
			Help: "The current round's lost writes, as its summary counts them: lost_updates (by arithmetic: writes whose effect " +
				"no chain of writes carries to the current value) and stale_writes_landed (writes surely overtaken)."}, []string{"definition"}),
		folds: map[*event.Log]*logFold{},
	}
	m.reg.MustRegister(m.lockCalls, m.denials, m.retries, m.lapses, m.events, m.rounds, m.hold, m.violations,
		m.workers, m.refused, m.round, m.lost, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, c := range violationLabels {
		m.violations.WithLabelValues(c)
	}
	for _, o := range []string{"ok", check.FailLock, check.FailStock, check.FailError, check.FailIndeterminate, check.FailCancel, "stale"} {
		m.workers.WithLabelValues(o)
	}
	for _, r := range []string{"rate", "full"} {
		m.refused.WithLabelValues(r)
	}
	return m
}

// handler catches up with the current round, then answers the scrape.
func (m *metrics) handler(s *Server) http.Handler {
	h := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rd := s.current()
		m.round.Set(float64(rd.n))
		m.catchUp(rd.out.Run.Log)
		h.ServeHTTP(w, r)
	})
}

// catchUp counts the events of l not counted yet.
func (m *metrics) catchUp(l *event.Log) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f := m.folds[l]
	if f == nil {
		f = &logFold{tally: check.NewTallyFold()}
		m.folds[l] = f
	}
	n := l.Len()
	for i := f.cursor; i < n; i++ {
		f.tally.Add(l.At(i))
	}
	m.count(f)
	m.events.Add(float64(n - f.cursor))
	f.cursor = n
}

// forget drops a finished log's fold.
func (m *metrics) forget(l *event.Log) {
	m.mu.Lock()
	delete(m.folds, l)
	m.mu.Unlock()
}

// staleLanded labels the writes surely overtaken, under the summary's
// name ("Stale Writes: N landed"): the event log marks each with a
// violation coded lost_update, and "lost updates" on every surface is the
// count by arithmetic (round_lost_writes says both).
const staleLanded = "stale_write_landed"

// violationLabels are the codes violations_total always shows.
var violationLabels = []string{check.CodeOverlap, check.CodeOversold, staleLanded, check.CodeDuplicate}

// count adds to the counters what the log's tally gained since they were
// last brought up to it: the numbers are the tally's, the summary's.
func (m *metrics) count(f *logFold) {
	now := f.tally.Tally()
	gain := func(c check.Counter) float64 { return float64(now.Get(c) - f.seen.Get(c)) }
	m.lockCalls.Add(gain(check.NLockCalls))
	m.denials.Add(float64(now.Denied() - f.seen.Denied()))
	m.retries.Add(gain(check.NRetries))
	m.lapses.Add(gain(check.NLapses))
	m.hold.add(now, &f.seen)
	for code, c := range map[string]check.Counter{check.CodeOverlap: check.NOverlaps, check.CodeOversold: check.NOversold,
		staleLanded: check.NStaleLanded, check.CodeDuplicate: check.NDuplicates} {
		m.violations.WithLabelValues(code).Add(gain(c))
	}
	for outcome, c := range map[string]check.Counter{"ok": check.NDoneOK, check.FailLock: check.NDoneLock, "stale": check.NDoneStale,
		check.FailStock: check.NDoneStock, check.FailError: check.NDoneError, check.FailCancel: check.NDoneCancelled,
		check.FailIndeterminate: check.NDoneUnanswered} {
		m.workers.WithLabelValues(outcome).Add(gain(c))
	}
	m.lost.WithLabelValues("lost_updates").Set(float64(now.Get(check.NLostUpdates)))
	m.lost.WithLabelValues("stale_writes_landed").Set(float64(now.Get(check.NStaleLanded)))
	f.seen = now.Clone()
}

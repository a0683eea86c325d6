package scenario

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/lock"
)

var retryScenario = &Scenario{
	Name:     "retry",
	Speed:    0.1,
	speedFor: retrySpeed, // fixed, 1.5 s: 15 s
	Title:    "Retry storms: thundering herd vs backoff and jitter",
	Watch:    "the retry-delay histogram: one spike (fixed), doubling spikes (exponential), a spread (jitter)",
	Explain: "--workers 20 race for --stock 10 behind a safe lock, retrying per the policy you pick (the " +
		"\"strategy\" here): fixed 100ms, exponential 100ms·2^(n−1) capped at 5s, full jitter, equal jitter, " +
		"decorrelated jitter. Un-jittered retries collide in waves; jitter spreads them. Run --all to compare " +
		"duration, lock calls per success, fairness and p99 wait on the same seed.",
	Source:     "the PHP + Redis locking lab, §6; AWS, \"Exponential Backoff and Jitter\"",
	Strategies: []string{"fixed", "exponential", "full-jitter", "equal-jitter", "decorrelated-jitter"},
	Defaults: withDefaults(func(p *event.Params) {
		p.Workers, p.Stock, p.TTL, p.Delay = 20, 10, event.Millis(2*time.Second), event.Millis(time.Millisecond)
		p.Retry, p.MaxRetries, p.RetryBase, p.RetryCap = "fixed", 15, event.Millis(100*time.Millisecond), event.Millis(5*time.Second)
	}),
	Uses:  []string{"workers", "stock", "delay", "ttl", "max-retries", "retry-base", "retry-cap"},
	run:   runRetry,
	beats: retryBeats,
	Slow:  []string{"exponential"}, // synchronised retries: ~46 s at the defaults
	notes: retryNotes,
	// Every policy retries on a safe lock.
	lockOf: func(string) string { return "safe" },
}

func runRetry(ctx context.Context, env *Env) error {
	if err := initStock(ctx, env); err != nil {
		return err
	}
	err := env.Workers(ctx, env.Params.Workers, func(ctx context.Context, w *Worker) { retryBuy(ctx, env, w) })
	return finalStock(ctx, env, err)
}

// retryBuy is one worker's purchase behind a safe lock that retries by
// the run's policy (its "strategy").
func retryBuy(ctx context.Context, env *Env, w *Worker) {
	policy := env.Params.RetryPolicy()
	policy.Policy = lock.Policy(env.Strategy)
	l, err := env.NewLock(w, "safe", policy, nil)
	if err != nil {
		w.Done(false, check.FailError, err.Error())
		return
	}
	w.Lock = l
	buy(ctx, env, w)
}

// RetryMetrics are the retry scenario's measures of one run.
type RetryMetrics struct {
	Duration     time.Duration
	Successes    int
	AvgRetries   float64
	LockCalls    int
	CallsPerSale float64
	FairnessSD   time.Duration // population std-dev of per-worker completion time
	Jain         float64       // Jain's fairness index of completion times
	P99Wait      time.Duration // from first attempt to lock (or giving up)
}

// MeasureRetry folds a run's events into its retry metrics.
func MeasureRetry(ev check.Events) RetryMetrics {
	f := newRetryFold()
	for i := range ev.Len() {
		e := ev.At(i)
		f.Add(&e)
	}
	return f.metrics()
}

// retryFold folds events into RetryMetrics one at a time.
type retryFold struct {
	ws       map[int32]*retryWorker
	m        RetryMetrics
	backoffs int
}

type retryWorker struct{ first, acquired, done time.Duration }

func newRetryFold() *retryFold { return &retryFold{ws: map[int32]*retryWorker{}} }

func (f *retryFold) Add(e *event.Event) {
	m := &f.m
	m.Duration = max(m.Duration, e.T)
	if e.Worker < 0 {
		return
	}
	w := f.ws[e.Worker]
	if w == nil {
		w = &retryWorker{first: -1, acquired: -1, done: -1}
		f.ws[e.Worker] = w
	}
	switch e.Kind {
	case event.KindAttempt:
		m.LockCalls++
		if w.first < 0 {
			w.first = e.T
		}
	case event.KindBackoff:
		f.backoffs++
	case event.KindAcquired:
		if w.acquired < 0 {
			w.acquired = e.T
		}
	case event.KindDone:
		w.done = e.T
		if e.OK {
			m.Successes++
		}
	}
}

func (f *retryFold) metrics() RetryMetrics {
	m, ws, backoffs := f.m, f.ws, f.backoffs
	if len(ws) == 0 {
		return m
	}
	m.AvgRetries = float64(backoffs) / float64(len(ws))
	if m.Successes > 0 {
		m.CallsPerSale = float64(m.LockCalls) / float64(m.Successes)
	}
	var sum, sumSq float64
	var waits []time.Duration
	for _, w := range ws {
		c := float64(w.done)
		sum += c
		sumSq += c * c
		end := w.acquired
		if end < 0 {
			end = w.done
		}
		if w.first >= 0 {
			waits = append(waits, end-w.first)
		}
	}
	n := float64(len(ws))
	mean := sum / n
	m.FairnessSD = time.Duration(math.Sqrt(max(sumSq/n-mean*mean, 0)))
	if sumSq > 0 {
		m.Jain = sum * sum / (n * sumSq)
	}
	if len(waits) > 0 {
		slices.Sort(waits)
		m.P99Wait = waits[min(len(waits)*99/100, len(waits)-1)]
	}
	return m
}

func retryNotes(event.Header) check.NoteFold { return newRetryFold() }

func (f *retryFold) Notes() [][2]string {
	m := f.metrics()
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
	return [][2]string{
		{"Avg Retries", fmt.Sprintf("%.2f", m.AvgRetries)},
		{"Calls/Success", fmt.Sprintf("%.2f", m.CallsPerSale)},
		{"Fairness σ", ms(m.FairnessSD)},
		{"Jain Index", fmt.Sprintf("%.3f", m.Jain)},
		{"p99 Wait", ms(m.P99Wait)},
	}
}

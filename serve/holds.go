package serve

import (
	"sync"

	"github.com/locklab/locklab/check"

	"github.com/prometheus/client_golang/prometheus"
)

// holdHistogram is the lock hold times as the rounds' tallies bin them:
// Prometheus is shown the tally's own bins and sum, not observations of
// its own, so its numbers are the tally's to the microsecond.
type holdHistogram struct {
	desc *prometheus.Desc

	mu     sync.Mutex
	count  uint64
	micros int64
	bins   [check.HoldBinCount]uint64
}

func newHoldHistogram() *holdHistogram {
	return &holdHistogram{desc: prometheus.NewDesc("locklab_lock_hold_seconds",
		"Time from acquiring a lock to releasing it, refusing the release or losing it (virtual time of the run).", nil, nil)}
}

// add counts what tally now gained over seen.
func (h *holdHistogram) add(now, seen *check.Tally) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.count += uint64(now.Get(check.NHolds) - seen.Get(check.NHolds))
	h.micros += int64(now.Get(check.NHoldMicros) - seen.Get(check.NHoldMicros))
	for i := range h.bins {
		h.bins[i] += uint64(now.HoldBin(i) - seen.HoldBin(i))
	}
}

func (h *holdHistogram) Describe(ch chan<- *prometheus.Desc) { ch <- h.desc }

func (h *holdHistogram) Collect(ch chan<- prometheus.Metric) {
	h.mu.Lock()
	defer h.mu.Unlock()
	buckets := map[float64]uint64{}
	var below uint64
	for i := range check.HoldBinCount - 1 { // the last bin is +Inf: the count
		below += h.bins[i]
		buckets[check.HoldBinEdge(i).Seconds()] = below
	}
	ch <- prometheus.MustNewConstHistogram(h.desc, h.count, float64(h.micros)/1e6, buckets)
}

package linear

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/scenario"
)

// The scale budgets of a long log, 5,000,000 events of a seeded
// oversell/safe run repeated (as scripts/biglog.sh writes them), on two
// quiet cores: `locklab check` in at most 3 s and 1 GB, `locklab replay
// --summary` in at most 3 s. Each reports its wall time, its CPU time (on
// a shared machine the wall time also counts the other processes' turns)
// and the process's peak resident memory so far (run one at a time, with
// -test.bench, for a benchmark's own).

// BenchmarkCheck5M is `locklab check` of the long log: read, folded per
// key and judged.
func BenchmarkCheck5M(b *testing.B) {
	path := longLog(b, 5_000_000)
	for b.Loop() {
		benchScale(b, func() {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			var c *Checker
			if err := scenario.ReadEach(f, func(h event.Header) { c = New(scenario.WithTraits(h)) }, func(e event.Event) { c.Add(e) }); err != nil {
				b.Fatal(err)
			}
			if rep := c.Judge(context.Background(), time.Now().Add(time.Minute), time.Minute, false); !rep.Complete() {
				b.Fatal("not judged")
			}
		})
	}
}

// BenchmarkSummary5M is `locklab replay --summary` of the long log.
func BenchmarkSummary5M(b *testing.B) {
	path := longLog(b, 5_000_000)
	for b.Loop() {
		benchScale(b, func() {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			if _, s, err := scenario.SummarizeLog(f); err != nil || s == nil {
				b.Fatal("no summary", err)
			}
		})
	}
}

// benchScale runs do and reports its wall and CPU time and the peak
// resident memory so far.
func benchScale(b *testing.B, do func()) {
	cpu0, t0 := cpuTime(), time.Now()
	do()
	b.ReportMetric(float64(time.Since(t0).Milliseconds()), "wall-ms")
	b.ReportMetric(float64((cpuTime() - cpu0).Milliseconds()), "cpu-ms")
	b.ReportMetric(peakRSSMB(), "peak-rss-MB")
}

// cpuTime is the CPU time this process has used (user and system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSSMB is this process's peak resident set size.
func peakRSSMB() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			kb, _ := strconv.Atoi(strings.Fields(line)[1])
			return float64(kb) / 1024
		}
	}
	return -1
}

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/locklab/locklab/scenario"
)

func joinable() []string { return scenario.JoinableStrategies("oversell") }

// latencies are how long a key took to reach each screen; missed ones
// never saw it.
type latencies struct {
	d      []time.Duration
	missed []string
}

func since(t0 time.Time, ss []*screen, text string) latencies {
	var l latencies
	for _, s := range ss {
		if t, ok := s.at(text); ok {
			l.d = append(l.d, t.Sub(t0))
		} else {
			l.missed = append(l.missed, s.name)
		}
	}
	slices.Sort(l.d)
	return l
}

func (l latencies) String() string {
	if len(l.d) == 0 {
		return fmt.Sprintf("nobody saw it (%d missed)", len(l.missed))
	}
	q := func(p int) time.Duration { return l.d[min(len(l.d)-1, len(l.d)*p/100)].Round(time.Millisecond) }
	s := fmt.Sprintf("p50 %v  p99 %v  max %v  (%d saw it)", q(50), q(99), l.d[len(l.d)-1].Round(time.Millisecond), len(l.d))
	if len(l.missed) > 0 {
		s += fmt.Sprintf("; %d never: %s", len(l.missed), strings.Join(l.missed[:min(len(l.missed), 8)], " "))
	}
	return s
}

// round runs the room as its host would: a quiet lobby, a round opened
// and fired, the lock changed, a second round, then quit.
func (r *room) round(url string) error {
	ssh, join := r.screens()
	fast := ssh[:len(ssh)-min(r.o.slow, len(ssh))]
	_ = r.measure("lobby, idle 5 s", func() error { time.Sleep(5 * time.Second); return nil })
	term := scenario.ScoreTerm("oversell")
	for n, lock := range []string{r.o.lock, strategyAfter(r.o.lock)} {
		n++
		if n == 2 {
			want := "with " + lock + " ·"
			awaitAll(ssh, want)
			var t0 time.Time
			_ = r.measure("steering (m, ↓, →, enter)", func() error {
				t0 = r.key("m", "j", "l", "\r")
				seenAll(fast, want, 20*time.Second)
				return nil
			})
			fmt.Printf("host steers to %s:\n", lock)
			report("SSH participants see the next round's lock", since(t0, fast, want))
		}
		opened := fmt.Sprintf("round %d starts in", n)
		awaitAll(ssh, opened)
		awaitAll(join, fmt.Sprintf("round %d: oversell with %s", n, lock))
		awaitAll(ssh, "fire your")
		ranked := fmt.Sprintf("round %d: %s ", n, term)
		awaitAll(ssh, ranked)
		awaitAll(join, fmt.Sprintf("round %d: j", n))
		stop := make(chan struct{})
		go r.firing("fire your", stop)
		var t0 time.Time
		err := r.measure(fmt.Sprintf("round %d (%s): open, countdown, race, verdicts", n, lock), func() error {
			t0 = r.key("\r")
			if n == 1 {
				r.slowDown()
			}
			seenAll(fast, opened, 20*time.Second)
			seenAll(join, fmt.Sprintf("round %d: oversell with %s", n, lock), 20*time.Second)
			seenAll(fast, ranked, 90*time.Second)
			return nil
		})
		close(stop)
		if l := since(t0, fast, opened); len(l.missed) > 0 {
			r.hostTail()
			for _, c := range fast {
				if _, ok := c.at(opened); !ok {
					fmt.Printf("%s's screen, last bytes:\n%s\n", c.name, c.ending())
					break
				}
			}
			if r.o.dump {
				_ = r.host.Process.Signal(syscall.SIGQUIT)
				return fmt.Errorf("%d SSH participants never saw round %d open: the host's goroutines are in host.err", len(l.missed), n)
			}
		}
		fmt.Printf("round %d, %s:\n", n, lock)
		report("SSH participants see the round opening", since(t0, fast, opened))
		report("join processes see the round", since(t0, join, fmt.Sprintf("round %d: oversell with %s", n, lock)))
		report("SSH participants see their verdict and rank", since(t0, fast, ranked))
		report("join processes finish their workers", since(t0, join, fmt.Sprintf("round %d: j", n)))
		if err != nil {
			return err
		}
		r.perClient(r.phases[len(r.phases)-1], fast)
		if n == 1 && r.o.slow > 0 {
			r.slowReport(ssh[len(fast):], ranked)
		}
	}
	return r.quit()
}

// quit presses q and y on the host, waits for its results and its exit,
// and reports.
func (r *room) quit() error {
	r.screen.await("results written to")
	_ = r.measure("quit (q, y): results", func() error {
		r.key("q", "y")
		waitFor(30*time.Second, func() bool { _, ok := r.screen.at("results written to"); return ok })
		return nil
	})
	done := make(chan error, 1)
	go func() { done <- r.host.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			fmt.Printf("the host exited: %v\n", err)
		}
	case <-time.After(30 * time.Second):
		fmt.Println("the host did not exit within 30 s of y")
	}
	r.hostReport()
	return r.results()
}

// perClient prints the SSH participants' frames and bytes per second in a
// phase, and the longest silence any of them had.
func (r *room) perClient(p phase, ss []*screen) {
	var fps, kbs []float64
	var gap time.Duration
	var worst string
	secs := p.to.Sub(p.from).Seconds()
	for _, s := range ss {
		n, f, g := s.window(p.from, p.to)
		fps, kbs = append(fps, float64(f)/secs), append(kbs, float64(n)/1024/secs)
		if g > gap {
			gap, worst = g, s.name
		}
	}
	slices.Sort(fps)
	slices.Sort(kbs)
	q := func(v []float64, p int) float64 { return v[min(len(v)-1, len(v)*p/100)] }
	fmt.Printf("  per SSH participant over %.1f s: frames/s p50 %.1f min %.1f max %.1f · KiB/s p50 %.1f max %.1f · longest silence %v (%s)\n",
		secs, q(fps, 50), fps[0], fps[len(fps)-1], q(kbs, 50), kbs[len(kbs)-1], gap.Round(time.Millisecond), worst)
}

// slowReport says what became of the participants that stopped reading.
func (r *room) slowReport(slow []*screen, ranked string) {
	var left, late []string
	for _, c := range r.ssh[len(r.ssh)-len(slow):] {
		c.mu.Lock()
		err := c.err
		c.mu.Unlock()
		if err != nil || !c.open() {
			left = append(left, c.name)
		} else if _, ok := c.at(ranked); !ok {
			late = append(late, c.name)
		}
	}
	fmt.Printf("  %d slow SSH participants (not reading for %v): %d dropped by the host (%s), %d still connected without their verdict yet (%s)\n",
		len(slow), r.o.slowFor, len(left), strings.Join(left, " "), len(late), strings.Join(late, " "))
}

func (r *room) hostReport() {
	fmt.Println("host process (locklab host, 120×40 pty):")
	for _, p := range r.phases {
		secs := p.to.Sub(p.from).Seconds()
		fmt.Printf("  %-48s %5.1f s  CPU %5.1f%% of one core\n", p.name, secs, 100*p.cpu.Seconds()/secs)
	}
	r.mem.Lock()
	defer r.mem.Unlock()
	fmt.Printf("  memory: RSS peak (VmHWM) %.0f MiB; largest sample %.0f MiB with %d threads\n", r.peak, r.rss, r.threads)
}

// results checks the files the host wrote on quitting.
func (r *room) results() error {
	var found []string
	for _, ext := range []string{".md", ".json"} {
		p := filepath.Join(r.dir, "results"+ext)
		st, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("no results file %s", p)
		}
		found = append(found, fmt.Sprintf("%s (%d KiB)", filepath.Base(p), st.Size()/1024))
		if r.o.keep != "" {
			b, _ := os.ReadFile(p)
			_ = os.WriteFile(filepath.Join(r.o.keep, "results"+ext), b, 0o644)
		}
	}
	fmt.Println("results: " + strings.Join(found, ", "))
	return nil
}

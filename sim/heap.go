package sim

import "time"

// timer is a sleeping actor's wake-up, or a function to call.
type timer struct {
	at   time.Duration
	seq  uint64
	a    *actor
	f    func()
	done bool // fired, stopped, or its actor woke otherwise
}

// slot is a timer in the heap, with the keys it is ordered by kept beside
// it: with ten thousand actors asleep, comparing two timers then reads no
// memory outside the heap's own array.
type slot struct {
	at  time.Duration
	seq uint64
	t   *timer
}

// timers is a binary min-heap by time, then by the order the timers were
// set. Its array order is container/heap's for the same pushes and pops:
// wake walks the array, and the order it finds sleepers in is part of the
// schedule.
type timers []slot

func (h timers) less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}

func (h *timers) push(t *timer) {
	*h = append(*h, slot{at: t.at, seq: t.seq, t: t})
	h.up(len(*h) - 1)
}

// pop removes and returns the earliest timer.
func (h *timers) pop() *timer {
	old := *h
	n := len(old) - 1
	old[0], old[n] = old[n], old[0]
	old.down(0, n)
	t := old[n].t
	old[n] = slot{}
	*h = old[:n]
	return t
}

func (h timers) up(j int) {
	for {
		i := (j - 1) / 2 // parent
		if i == j || !h.less(j, i) {
			break
		}
		h[i], h[j] = h[j], h[i]
		j = i
	}
}

func (h timers) down(i0, n int) {
	i := i0
	for {
		j1 := 2*i + 1
		if j1 >= n || j1 < 0 { // j1 < 0 after int overflow
			break
		}
		j := j1 // left child
		if j2 := j1 + 1; j2 < n && h.less(j2, j1) {
			j = j2 // right child
		}
		if !h.less(j, i) {
			break
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

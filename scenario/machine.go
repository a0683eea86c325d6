package scenario

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"
)

// lagWatch notices, in a run kept in real time, the first step the
// machine held up far past what the scenario and its server explain: an
// answer of the embedded server (which answers in microseconds) that came
// back late, or a worker's planned wait that overran. A lesson must never
// silently be an artefact of load: the narration says so when it happens.
type lagWatch struct {
	limit    time.Duration // a step later than this is the machine's doing
	embedded bool          // answers are the machine's too (no network)
	speed    func() float64
	// simulable: the run keeps real time only because it was asked to
	// (--realtime); a simulation would not feel the machine.
	simulable bool

	mu   sync.Mutex
	told bool
	// netted: a network fault was put on a link, so a late answer is the
	// fault's doing, not the machine's.
	netted bool
}

// newLagWatch watches a real-time run with lock TTL ttl; a step late by a
// twentieth of the TTL (20ms at least) changes what the TTL means.
func newLagWatch(ttl time.Duration, embedded bool, speed func() float64) *lagWatch {
	return &lagWatch{limit: max(ttl/20, 20*time.Millisecond), embedded: embedded, speed: speed}
}

// answer looks at an operation's answer: sent at call, back at now.
func (l *lagWatch) answer(e *event.Event, now time.Duration) (event.Event, bool) {
	if l == nil || !l.embedded || e.Has&event.HasCall == 0 || e.Worker < 0 {
		return event.Event{}, false
	}
	took := now - e.Call
	if took < l.limit || l.networked() {
		return event.Event{}, false
	}
	return l.tell(fmt.Sprintf("%s's %s took %s to come back from the embedded server, which answers in microseconds",
		check.WorkerName(e.Worker), opOf(e.Kind), lagMillis(took)))
}

// overran looks at a worker's planned wait of d that ended late by over.
func (l *lagWatch) overran(w int32, d, over time.Duration) (event.Event, bool) {
	if l == nil || over < l.limit {
		return event.Event{}, false
	}
	return l.tell(fmt.Sprintf("%s's wait of %s took %s", check.WorkerName(w), lagMillis(d), lagMillis(d+over)))
}

// tell makes the beat, once per run.
func (l *lagWatch) tell(what string) (event.Event, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.told {
		return event.Event{}, false
	}
	l.told = true
	speed := l.speed()
	at := strconv.FormatFloat(speed, 'g', 3, 64) + "×"
	return event.Event{Kind: event.KindBeat, Code: check.BeatMachine, Msg: "The machine could not keep up at " + at + ": " + what +
		". What follows may be the machine's doing, not the lock's: " + l.advice(speed) + "."}, true
}

// advice says what would take the machine out of the story: a slower
// pace, the simulation where the run could have been one, else fewer
// programs beside it.
func (l *lagWatch) advice(speed float64) string {
	var ways []string
	if speed > 1 {
		ways = append(ways, "run at --speed 1")
	}
	if l.simulable {
		ways = append(ways, "run in the simulation (without --realtime)")
	} else {
		ways = append(ways, "run it alone, on a machine less busy (this run keeps real time)")
	}
	return strings.Join(ways, ", or ")
}

func lagMillis(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 0, 64) + "ms"
}

// opOf names the operation an answer event answers.
func opOf(k event.Kind) string {
	switch k {
	case event.KindAcquired, event.KindDenied:
		return "acquire"
	case event.KindRenewed, event.KindRenewFailed:
		return "renewal"
	case event.KindRelease, event.KindReleaseFailed:
		return "release"
	}
	return k.String()
}

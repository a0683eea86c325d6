package schedule

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/untrusted"
)

// kinds name the faults as --faults and schedule files write them.
var kinds = []struct {
	name   string
	kind   scenario.FaultKind
	worker bool // aimed at a worker, else at a node
	lasts  bool // takes +DURATION
}{
	{"crash", scenario.FaultCrash, true, false},
	{"pause", scenario.FaultPause, true, true},
	{"node-stop", scenario.FaultNodeStop, false, false},
	{"node-restart", scenario.FaultNodeRestart, false, false},
	{"node-pause", scenario.FaultNodePause, false, false},
	{"clock-jump", scenario.FaultClockJump, false, true},
	{"failover", scenario.FaultFailover, false, false},
}

// KindNames lists the fault kinds, comma-separated.
func KindNames() string {
	var out []string
	for _, k := range kinds {
		out = append(out, k.name)
	}
	return strings.Join(out, ", ")
}

// KindName is the name of a fault kind.
func KindName(k scenario.FaultKind) string {
	for _, c := range kinds {
		if c.kind == k {
			return c.name
		}
	}
	return fmt.Sprintf("fault-%d", k)
}

func workerFault(k scenario.FaultKind) bool {
	for _, c := range kinds {
		if c.kind == k {
			return c.worker
		}
	}
	return false
}

// maxInstant bounds an instant or a duration: no run lasts longer.
const maxInstant = 24 * time.Hour

// SpecHelp says how --faults is written.
const SpecHelp = "KIND:TARGET@AT[+FOR], comma-separated, e.g. pause:w00@10ms+600ms,node-pause:n1@2ms,latency=50ms~10ms:w01-n0@5ms+1s (kinds: crash, pause, node-stop, node-restart, node-pause, clock-jump, failover; TARGET wNN or nN; node-stop and node-pause toggle; " + NetHelp + ")"

// ParseFaults reads a --faults spec: KIND:TARGET@AT[+FOR], comma-separated.
// A pause without +FOR lasts 1.5×TTL, a clock jump the TTL.
func ParseFaults(spec string, p event.Params) ([]scenario.Timed, error) {
	var out []scenario.Timed
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if len(out) >= MaxFaults {
			return nil, fmt.Errorf("more than %d faults", MaxFaults)
		}
		f, err := parseOne(item, p)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no fault given: want %s", SpecHelp)
	}
	// In time order, as a schedule lists them; faults at one instant keep
	// the order given, which is the order they land in.
	slices.SortStableFunc(out, func(a, b scenario.Timed) int { return cmp.Compare(a.At, b.At) })
	return out, nil
}

func parseOne(item string, p event.Params) (scenario.Timed, error) {
	var t scenario.Timed
	bad := func(why string) (scenario.Timed, error) {
		return t, fmt.Errorf("fault %q: %s", untrusted.Line(clip(item)), why)
	}
	what, when, ok := strings.Cut(item, "@")
	if !ok {
		return bad("no instant: want KIND:TARGET@AT, e.g. pause:w00@10ms")
	}
	name, target, _ := strings.Cut(what, ":")
	if x, lift, ok, err := netKind(name); ok {
		if err != nil {
			return bad(err.Error())
		}
		return parseNet(item, x, lift, target, when, p)
	}
	i := -1
	for j, k := range kinds {
		if k.name == name {
			i = j
		}
	}
	if i < 0 {
		return bad("unknown kind: want one of " + KindNames() + ", or a network fault such as latency=50ms")
	}
	k := kinds[i]
	t.Kind = k.kind
	at, lasts, hasFor := strings.Cut(when, "+")
	var err error
	if t.At, err = duration(at); err != nil {
		return bad("instant " + err.Error())
	}
	if hasFor {
		if !k.lasts {
			return bad(name + " takes no +FOR (only pause and clock-jump do)")
		}
		if t.D, err = duration(lasts); err != nil || t.D == 0 {
			return bad("+FOR must be a duration above 0, up to 24h")
		}
	}
	switch {
	case k.worker:
		n, ok := index(target, "w", event.MaxWorkers)
		if !ok {
			return bad(fmt.Sprintf("%s needs a worker, w00 to w%d", name, event.MaxWorkers-1))
		}
		t.Worker = int32(n)
	case target == "":
		t.Node = 0
	default:
		n, ok := index(target, "n", max(p.Nodes, 1))
		if !ok {
			return bad(fmt.Sprintf("%s needs a node of this run, n0 to n%d", name, max(p.Nodes, 1)-1))
		}
		t.Node = n
	}
	return t, nil
}

// duration parses a Go duration from 0 to a day.
func duration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d > maxInstant {
		return 0, fmt.Errorf("%q: want a duration from 0 to 24h, e.g. 10ms", untrusted.Line(clip(s)))
	}
	return d, nil
}

// index reads "w02" or "n1" (or a bare number) below limit.
func index(s, prefix string, limit int) (int, bool) {
	s = strings.TrimPrefix(s, prefix)
	if s == "" || len(s) > 6 {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 0 && n < limit
}

// Spec writes faults back as --faults takes them.
func Spec(faults []scenario.Timed) string {
	var out []string
	for _, f := range faults {
		if f.Kind == scenario.FaultNet {
			s := netName(f.Fault) + ":" + netTargetName(f.Fault) + "@" + f.At.String()
			if f.D > 0 {
				s += "+" + f.D.String()
			}
			out = append(out, s)
			continue
		}
		s := KindName(f.Kind) + ":"
		if workerFault(f.Kind) {
			s += check.WorkerName(f.Worker)
		} else {
			s += fmt.Sprintf("n%d", f.Node)
		}
		s += "@" + f.At.String()
		if f.D > 0 {
			s += "+" + f.D.String()
		}
		out = append(out, s)
	}
	return strings.Join(out, ",")
}

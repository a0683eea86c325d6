package schedule

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/event"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
)

// NetHelp says how a network fault is written in --faults.
const NetHelp = "network faults: KIND[.up|.down][=ARG]:wNN-nN@AT[+FOR] (or wNN: every node; nN: every worker), " +
	"KIND latency=50ms~10ms, bandwidth=2KB (a second), timeout[=1s] (black hole; closed after ARG), reset[=DUR], slow-close=DUR, limit-data=200B, partition; lift-KIND:TARGET@AT ends one"

// netKind reads a network fault's name, "latency.up=50ms~10ms" or
// "lift-partition": ok false when name is no network fault's.
func netKind(name string) (t store.Toxic, lift, ok bool, err error) {
	name, lift = strings.CutPrefix(name, "lift-")
	kind, arg, hasArg := strings.Cut(name, "=")
	kind, dir, hasDir := strings.Cut(kind, ".")
	k, known := store.ParseToxicKind(kind)
	if !known {
		return t, lift, lift, fmt.Errorf("unknown network fault %q: want one of latency, bandwidth, timeout, reset, slow-close, limit-data, partition", kind)
	}
	t.Kind, t.Dir = k, store.Both
	if hasDir {
		switch dir {
		case "up":
			t.Dir = store.Up
		case "down":
			t.Dir = store.Down
		case "both":
		default:
			return t, lift, true, fmt.Errorf("direction %q: want up, down or both", dir)
		}
		if k == store.ToxicPartition {
			return t, lift, true, fmt.Errorf("a partition cuts both ways: it takes no direction")
		}
	}
	if lift {
		if hasArg {
			return t, lift, true, fmt.Errorf("lift-%s takes no =ARG", kind)
		}
		return t, lift, true, nil
	}
	if err := netArg(&t, arg, hasArg); err != nil {
		return t, lift, true, err
	}
	return t, lift, true, t.Check()
}

// netArg reads a network fault's =ARG into t.
func netArg(t *store.Toxic, arg string, has bool) error {
	var err error
	if !has && t.Kind != store.ToxicPartition {
		return nil // Check says what the kind needs, if anything
	}
	switch t.Kind {
	case store.ToxicPartition:
		if has {
			return fmt.Errorf("partition takes no =ARG")
		}
	case store.ToxicLatency:
		d, j, _ := strings.Cut(arg, "~")
		if t.D, err = netDuration(d); err == nil && j != "" {
			t.Jitter, err = netDuration(j)
		}
	case store.ToxicBandwidth:
		t.Rate, err = byteCount(arg)
	case store.ToxicLimitData:
		t.Bytes, err = byteCount(arg)
	case store.ToxicTimeout, store.ToxicReset, store.ToxicSlowClose:
		t.D, err = netDuration(arg)
	}
	return err
}

func netDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d > time.Hour {
		return 0, fmt.Errorf("%q: want a duration from 0 to 1h, e.g. 50ms", clip(s))
	}
	return d, nil
}

// byteCount reads "200", "200B", "2KB", "1MB".
func byteCount(s string) (int64, error) {
	num, mul := s, int64(1)
	for _, u := range []struct {
		suffix string
		mul    int64
	}{{"MB", 1 << 20}, {"KB", 1 << 10}, {"B", 1}} {
		if rest, ok := strings.CutSuffix(strings.ToUpper(s), u.suffix); ok {
			num, mul = rest, u.mul
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > (1<<40)/mul {
		return 0, fmt.Errorf("%q: want a byte count above 0, e.g. 200B or 2KB", clip(s))
	}
	return n * mul, nil
}

// netTarget reads "w01-n0", "w01" (every node) or "n0" (every worker).
func netTarget(s string, p event.Params) (w int32, node int, err error) {
	w, node = -1, -1
	ws, ns, both := strings.Cut(s, "-")
	if !both {
		if strings.HasPrefix(s, "n") {
			ws, ns = "", s
		} else {
			ws, ns = s, ""
		}
	}
	if ws == "" && ns == "" {
		return 0, 0, fmt.Errorf("a network fault needs a link: wNN-nN, wNN (every node) or nN (every worker)")
	}
	if ws != "" {
		n, ok := index(ws, "w", event.MaxWorkers)
		if !ok || !strings.HasPrefix(ws, "w") {
			return 0, 0, fmt.Errorf("%q is not a worker: want w00 to w%d", clip(ws), event.MaxWorkers-1)
		}
		w = int32(n)
	}
	if ns != "" {
		n, ok := index(ns, "n", max(p.Nodes, 1))
		if !ok || !strings.HasPrefix(ns, "n") {
			return 0, 0, fmt.Errorf("%q is not a node of this run: want n0 to n%d", clip(ns), max(p.Nodes, 1)-1)
		}
		node = n
	}
	return w, node, nil
}

// netName writes a network fault's kind back as --faults takes it.
func netName(f scenario.Fault) string {
	t := f.Net
	s := t.Kind.String()
	if f.Lift {
		s = "lift-" + s
	}
	if t.Dir != store.Both && t.Dir != 0 && t.Kind != store.ToxicPartition {
		s += "." + t.Dir.String()
	}
	if f.Lift {
		return s
	}
	switch t.Kind {
	case store.ToxicLatency:
		s += "=" + t.D.String()
		if t.Jitter > 0 {
			s += "~" + t.Jitter.String()
		}
	case store.ToxicBandwidth:
		s += "=" + store.Bytes(t.Rate)
	case store.ToxicLimitData:
		s += "=" + store.Bytes(t.Bytes)
	case store.ToxicTimeout, store.ToxicReset, store.ToxicSlowClose:
		if t.D > 0 {
			s += "=" + t.D.String()
		}
	}
	return s
}

// netTargetName writes a network fault's link back: "w01-n0", "w01", "n0".
func netTargetName(f scenario.Fault) string {
	var parts []string
	if f.Worker >= 0 {
		parts = append(parts, check.WorkerName(f.Worker))
	}
	if f.Node >= 0 {
		parts = append(parts, fmt.Sprintf("n%d", f.Node))
	}
	return strings.Join(parts, "-")
}

// NetKindNames lists the network fault kinds, comma-separated.
func NetKindNames() string {
	var out []string
	for _, k := range store.ToxicKinds() {
		out = append(out, k.String())
	}
	return strings.Join(out, ", ")
}

// parseNet reads the rest of a network fault item: its link and instants.
func parseNet(item string, x store.Toxic, lift bool, target, when string, p event.Params) (scenario.Timed, error) {
	var t scenario.Timed
	bad := func(why string) (scenario.Timed, error) {
		return t, fmt.Errorf("fault %q: %s", clip(item), why)
	}
	w, node, err := netTarget(target, p)
	if err != nil {
		return bad(err.Error())
	}
	t.Kind, t.Worker, t.Node, t.Net, t.Lift = scenario.FaultNet, w, node, x, lift
	at, lasts, hasFor := strings.Cut(when, "+")
	if t.At, err = duration(at); err != nil {
		return bad("instant " + err.Error())
	}
	if hasFor {
		if lift {
			return bad("a lift takes no +FOR")
		}
		if t.D, err = duration(lasts); err != nil || t.D == 0 {
			return bad("+FOR must be a duration above 0, up to 24h")
		}
	}
	return t, nil
}

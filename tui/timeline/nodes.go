package timeline

import (
	"strings"
	"time"

	"github.com/locklab/locklab/event"
)

// NodeState is what a Redis node is doing.
type NodeState uint8

// The node states.
const (
	NodeUp NodeState = iota
	NodeStopped
	NodePaused
	NodeFailedOver // up, but a replica that missed the last writes
)

// Node is a Redis node as of Seq: its state, its clock's offset, and the
// lock key it holds (the latest one granted there) and for whom.
type Node struct {
	Index    int
	Seq      int64
	T        time.Duration
	State    NodeState
	Offset   time.Duration // how far its clock was moved at once
	Holder   int32         // −1: the key is free there
	Lock     string
	Deadline time.Duration // node time at which the key lapses there (0: no TTL)
	// A slew in progress: the clock gains SlewBy over SlewOver from run
	// time SlewFrom.
	SlewFrom, SlewBy, SlewOver time.Duration
}

// OffsetAt is how far the node's clock is ahead of the run's at run time
// now: its jumps, and as much of a slew as has happened by then.
func (n Node) OffsetAt(now time.Duration) time.Duration {
	if n.SlewOver <= 0 || now <= n.SlewFrom {
		return n.Offset
	}
	if now >= n.SlewFrom+n.SlewOver {
		return n.Offset + n.SlewBy
	}
	return n.Offset + time.Duration(float64(n.SlewBy)*float64(now-n.SlewFrom)/float64(n.SlewOver))
}

// Slewing reports whether the node's clock is slewing at run time now.
func (n Node) Slewing(now time.Duration) bool {
	return n.SlewOver > 0 && now >= n.SlewFrom && now < n.SlewFrom+n.SlewOver
}

// HolderAt is who holds the key on the node at run time now (−1: nobody),
// its TTL lapsing by the node's own clock.
func (n Node) HolderAt(now time.Duration) int32 {
	if n.Holder < 0 || (n.Deadline > 0 && now+n.OffsetAt(now) >= n.Deadline) {
		return -1
	}
	return n.Holder
}

// foldNode records what e says about a node, if anything.
func (tl *Timeline) foldNode(seq int64, e *event.Event) {
	if e.Has&event.HasNode == 0 || e.Node < 0 || e.Node > 64 {
		return
	}
	for len(tl.nodes) <= int(e.Node) {
		tl.nodes = append(tl.nodes, Node{Index: len(tl.nodes), Seq: -1, Holder: -1})
	}
	n := tl.nodes[e.Node]
	n.Seq, n.T = seq, e.T
	switch e.Kind {
	case event.KindNodeDown:
		n.State = NodeStopped
		if strings.Contains(e.Msg, " paused") {
			n.State = NodePaused
		}
	case event.KindNodeUp:
		n.State = NodeUp
		if strings.Contains(e.Msg, "empty") {
			n.Holder = -1
		}
	case event.KindFailover:
		n.State, n.Holder = NodeFailedOver, -1 // the replica missed the last writes
	case event.KindBeat:
		if by, over, ok := slewOf(e.Msg); ok {
			n.Offset = n.OffsetAt(e.T) // a slew in progress keeps what it gained
			n.SlewFrom, n.SlewBy, n.SlewOver = e.T, by, over
			break
		}
		_, after, ok := strings.Cut(e.Msg, "clock jumped ")
		if !ok {
			return
		}
		d, err := time.ParseDuration(strings.Fields(after)[0])
		if err != nil {
			return
		}
		n.Offset += d
	case event.KindVote:
		tl.voted = true
		if !e.OK {
			return
		}
		n.Holder, n.Lock, n.Deadline = e.Worker, e.Res, 0
		if e.TTL > 0 {
			n.Deadline = e.T + n.OffsetAt(e.T) + e.TTL
		}
	case event.KindRelease, event.KindReleaseFailed:
		if n.Holder == e.Worker && n.Lock == e.Res && (e.Kind == event.KindRelease || strings.Contains(e.Msg, "expired")) {
			n.Holder = -1
		}
		if e.Kind == event.KindReleaseFailed {
			return
		}
	default:
		return
	}
	tl.Nodes = append(tl.Nodes, n)
	tl.nodes[e.Node] = n
}

// NodesAt returns each node's latest record as of cursor k (Seq −1: the
// log has not mentioned it yet).
func (tl *Timeline) NodesAt(k int) []Node {
	out := make([]Node, len(tl.nodes))
	for i := range out {
		out[i] = Node{Index: i, Seq: -1, Holder: -1}
	}
	n := upTo(len(tl.Nodes), func(i int) int64 { return tl.Nodes[i].Seq }, int64(k))
	seen := 0
	for i := n - 1; i >= 0 && seen < len(out); i-- {
		nd := tl.Nodes[i]
		if out[nd.Index].Seq < 0 {
			out[nd.Index] = nd
			seen++
		}
	}
	return out
}

// slewOf reads "node 2's clock slews 1s forward over 1s: …".
func slewOf(msg string) (by, over time.Duration, ok bool) {
	_, after, found := strings.Cut(msg, "clock slews ")
	if !found {
		return 0, 0, false
	}
	f := strings.Fields(strings.ReplaceAll(after, ":", " "))
	if len(f) < 4 || f[1] != "forward" || f[2] != "over" {
		return 0, 0, false
	}
	by, err1 := time.ParseDuration(f[0])
	over, err2 := time.ParseDuration(f[3])
	if err1 != nil || err2 != nil || by <= 0 || over <= 0 {
		return 0, 0, false
	}
	return by, over, true
}

// ServerLine is a spawned server as a "server" beat last described it.
type ServerLine struct {
	Seq  int64
	Name string
	Line string // "replica · primary · 127.0.0.1:40123 · pid 1234 · up"
}

// foldServer records a spawned server's announcement.
func (tl *Timeline) foldServer(seq int64, e *event.Event) {
	if e.Kind != event.KindBeat || e.Code != "server" || len(tl.Servers) > 4096 {
		return
	}
	name, _, _ := strings.Cut(e.Msg, " · ")
	tl.Servers = append(tl.Servers, ServerLine{Seq: seq, Name: name, Line: e.Msg})
}

// ServersAt is each spawned server's latest line as of cursor k, in the
// order they were first announced.
func (tl *Timeline) ServersAt(k int) []ServerLine {
	var out []ServerLine
	at := map[string]int{}
	for _, s := range tl.Servers {
		if s.Seq > int64(k) {
			break
		}
		if i, ok := at[s.Name]; ok {
			out[i] = s
			continue
		}
		at[s.Name] = len(out)
		out = append(out, s)
	}
	return out
}

// Voted reports whether any node has voted: only then does a node hold a
// lock of its own to show.
func (tl *Timeline) Voted() bool { return tl.voted }

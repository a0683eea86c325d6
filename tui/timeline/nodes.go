package timeline

import (
	"strings"
	"time"

	"github.com/locklab/locklab/scenario"
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
	Offset   time.Duration // how far its clock was moved
	Holder   int32         // −1: the key is free there
	Lock     string
	Deadline time.Duration // run time at which the key lapses there (0: no TTL)
}

// HolderAt is who holds the key on the node at run time now (−1: nobody),
// its TTL lapsing by the node's own clock.
func (n Node) HolderAt(now time.Duration) int32 {
	if n.Holder < 0 || (n.Deadline > 0 && now+n.Offset >= n.Deadline) {
		return -1
	}
	return n.Holder
}

// foldNode records what e says about a node, if anything.
func (tl *Timeline) foldNode(seq int64, e *scenario.Event) {
	if e.Has&scenario.HasNode == 0 || e.Node < 0 || e.Node > 64 {
		return
	}
	for len(tl.nodes) <= int(e.Node) {
		tl.nodes = append(tl.nodes, Node{Index: len(tl.nodes), Seq: -1, Holder: -1})
	}
	n := tl.nodes[e.Node]
	n.Seq, n.T = seq, e.T
	switch e.Kind {
	case scenario.KindNodeDown:
		n.State = NodeStopped
		if strings.Contains(e.Msg, " paused") {
			n.State = NodePaused
		}
	case scenario.KindNodeUp:
		n.State = NodeUp
		if strings.Contains(e.Msg, "empty") {
			n.Holder = -1
		}
	case scenario.KindFailover:
		n.State, n.Holder = NodeFailedOver, -1 // the replica missed the last writes
	case scenario.KindBeat:
		_, after, ok := strings.Cut(e.Msg, "clock jumped ")
		if !ok {
			return
		}
		d, err := time.ParseDuration(strings.Fields(after)[0])
		if err != nil {
			return
		}
		n.Offset += d
	case scenario.KindVote:
		if !e.OK {
			return
		}
		n.Holder, n.Lock, n.Deadline = e.Worker, e.Res, 0
		if e.TTL > 0 {
			n.Deadline = e.T + n.Offset + e.TTL
		}
	case scenario.KindRelease, scenario.KindReleaseFailed:
		if n.Holder == e.Worker && n.Lock == e.Res && (e.Kind == scenario.KindRelease || strings.Contains(e.Msg, "expired")) {
			n.Holder = -1
		}
		if e.Kind == scenario.KindReleaseFailed {
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

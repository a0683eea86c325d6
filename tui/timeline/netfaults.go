package timeline

import (
	"strconv"
	"strings"

	"github.com/locklab/locklab/event"
)

// NetLine is a network fault as the log told it: "latency 50ms±10ms both ·
// w01 ⇄ node 0", on from its "on" beat until its "off" beat.
type NetLine struct {
	Seq  int64 // the beat that put it on
	Off  int64 // the beat that lifted it; −1 while in force
	ID   int
	Node int
	Line string
}

// maxNets bounds the network faults a log can make the view keep.
const maxNets = 4096

// foldNet records a network fault's beats.
func (tl *Timeline) foldNet(seq int64, e *event.Event) {
	if e.Kind != event.KindBeat || (e.Code != event.CodeNetOn && e.Code != event.CodeNetOff) || e.Has&event.HasNode == 0 {
		return
	}
	rest, ok := strings.CutPrefix(e.Msg, "network #")
	num, line, ok2 := strings.Cut(rest, ": ")
	idText, _, _ := strings.Cut(num, " ")
	id, err := strconv.Atoi(idText)
	if !ok || !ok2 || err != nil {
		return
	}
	if e.Code == event.CodeNetOff {
		for i := len(tl.Nets) - 1; i >= 0; i-- {
			if tl.Nets[i].ID == id && tl.Nets[i].Off < 0 {
				tl.Nets[i].Off = seq
				return
			}
		}
		return
	}
	if len(tl.Nets) >= maxNets {
		return
	}
	tl.Nets = append(tl.Nets, NetLine{Seq: seq, Off: -1, ID: id, Node: int(e.Node), Line: line})
	tl.netPeak = max(tl.netPeak, len(tl.NetsAt(int(seq))))
}

// NetsAt are the network faults in force at cursor k, in the order they
// began.
func (tl *Timeline) NetsAt(k int) []NetLine {
	var out []NetLine
	for _, n := range tl.Nets {
		if n.Seq > int64(k) {
			break
		}
		if n.Off < 0 || n.Off > int64(k) {
			out = append(out, n)
		}
	}
	return out
}

// NetPeak is how many network faults were ever in force at once.
func (tl *Timeline) NetPeak() int { return tl.netPeak }

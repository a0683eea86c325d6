package scenario

import (
	"fmt"
	"strings"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/store"
)

// announceServers records the servers the run spawned (--topology) whose
// name, role, address or state changed since the last announcement: one
// "server" beat each, on the node it serves. The nodes panel shows them.
func (e *Env) announceServers() {
	sp := e.Store.Spawned()
	if len(sp) == 0 {
		return
	}
	e.mu.Lock()
	if e.servers == nil {
		e.servers = map[string]string{}
	}
	var say []event.Event
	for _, s := range sp {
		msg := serverLine(s)
		if e.servers[s.Name] == msg {
			continue
		}
		e.servers[s.Name] = msg
		ev := event.Event{Kind: event.KindBeat, Code: "server", Msg: msg}
		if s.Node >= 0 {
			ev.Node, ev.Has = int16(s.Node), event.HasNode
		}
		say = append(say, ev)
	}
	e.mu.Unlock()
	for _, ev := range say {
		e.Emit(ev)
	}
}

// serverLine is "replica · primary · :40123 · pid 1234 · up" (every
// spawned server is on 127.0.0.1, which the header says).
func serverLine(s store.Spawned) string {
	pid := "no process"
	if s.PID > 0 {
		pid = fmt.Sprintf("pid %d", s.PID)
	}
	_, port, _ := strings.Cut(s.Addr, ":")
	return fmt.Sprintf("%s · %s · :%s · %s · %s", s.Name, s.Role, port, pid, s.State)
}

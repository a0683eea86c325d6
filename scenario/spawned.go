package scenario

import (
	"fmt"

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
	var say []Event
	for _, s := range sp {
		msg := serverLine(s)
		if e.servers[s.Name] == msg {
			continue
		}
		e.servers[s.Name] = msg
		ev := Event{Kind: KindBeat, Code: "server", Msg: msg}
		if s.Node >= 0 {
			ev.Node, ev.Has = int16(s.Node), HasNode
		}
		say = append(say, ev)
	}
	e.mu.Unlock()
	for _, ev := range say {
		e.Emit(ev)
	}
}

// serverLine is "replica · primary · 127.0.0.1:40123 · pid 1234 · up".
func serverLine(s store.Spawned) string {
	pid := "no process"
	if s.PID > 0 {
		pid = fmt.Sprintf("pid %d", s.PID)
	}
	return fmt.Sprintf("%s · %s · %s · %s · %s", s.Name, s.Role, s.Addr, pid, s.State)
}

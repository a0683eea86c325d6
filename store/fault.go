package store

import (
	"errors"

	"github.com/alicebob/miniredis/v2/server"
)

// ErrUnsupported says a fault cannot be injected into this kind of node.
var ErrUnsupported = errors.New("store: this fault needs an embedded node")

// Pause makes an embedded node hang on every command until Resume, like a
// server stopped by SIGSTOP or a long stop-the-world pause. Clients time out
// waiting for it.
func (n *Node) Pause() error {
	if n.mini == nil {
		return ErrUnsupported
	}
	n.faultMu.Lock()
	defer n.faultMu.Unlock()
	if n.paused != nil {
		return nil
	}
	gate := make(chan struct{})
	n.paused = gate
	n.mini.Server().SetPreHook(func(*server.Peer, string, ...string) bool {
		<-gate
		return false
	})
	return nil
}

// Resume lets a paused embedded node answer again; held commands run now.
func (n *Node) Resume() {
	if n.mini == nil {
		return
	}
	n.faultMu.Lock()
	defer n.faultMu.Unlock()
	if n.paused == nil {
		return
	}
	n.mini.Server().SetPreHook(nil)
	close(n.paused)
	n.paused = nil
}

// Paused reports whether the node is paused.
func (n *Node) Paused() bool {
	n.faultMu.Lock()
	defer n.faultMu.Unlock()
	return n.paused != nil
}

package store

import (
	"errors"
	"strings"
	"testing"
)

// A key left on an embedded node is no key left: the node stops with the
// store. Only a real server's are said, with how to remove them.
func TestOnlyRealServersKeepKeysAfterClose(t *testing.T) {
	slow := errors.New("i/o timeout")
	embedded := NodeLeft{Addr: "127.0.0.1:40001", Err: slow, url: "redis://127.0.0.1:40001", embedded: true}
	real := NodeLeft{Addr: "10.0.0.7:6379", Err: slow, url: "redis://10.0.0.7:6379"}
	if err := onlyLasting(&LeftError{Nodes: []NodeLeft{embedded}, Prefix: "locklab:r1:"}); err != nil {
		t.Errorf("an embedded node that did not answer the cleanup: %v", err)
	}
	err := onlyLasting(&LeftError{Nodes: []NodeLeft{embedded, real}, Prefix: "locklab:r1:"})
	if err == nil || strings.Contains(err.Error(), "40001") || !strings.Contains(err.Error(), "locklab clean --redis 'redis://10.0.0.7:6379'") {
		t.Errorf("a real server and an embedded node: %v", err)
	}
	if other := errors.New("closing: broken pipe"); onlyLasting(other) != other {
		t.Error("another error was changed")
	}
}

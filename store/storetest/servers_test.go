package storetest

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// A server that ends while it is waited for (its port taken, say) is given
// up on at once, not after the whole wait: the next try starts on another
// port.
func TestAServerThatExitsIsNotWaitedFor(t *testing.T) {
	p, err := startProc(nil, "", "/bin/sh", "-c", "echo port in use; exit 1")
	if err != nil {
		t.Fatal(err)
	}
	err = waitFor(p, time.Minute, func() error { return errors.New("no answer") })
	if err == nil || !strings.Contains(err.Error(), "the server exited") || !strings.Contains(err.Error(), "port in use") {
		t.Fatalf("got %v, want the exit and the server's words", err)
	}
	p.stop()
}

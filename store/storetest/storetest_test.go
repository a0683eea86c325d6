package storetest

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// A server whose port another server took first is not taken for
// started: the one answering is someone else's, and ends with its test.
func TestStartNoticesAPortTakenByAnotherServer(t *testing.T) {
	first := Start(t)
	bin, _ := exec.LookPath("redis-server")
	_, portText, _ := strings.Cut(first.Addr, ":")
	port, _ := strconv.Atoi(portText)
	s, err := startOn(bin, port, nil)
	if err == nil {
		s.Stop()
		t.Fatal("a second server on a taken port was taken for started")
	}
	if !strings.Contains(err.Error(), "taken by another server") {
		t.Fatalf("error %q does not say the port was taken", err)
	}
	if err := first.Client(t).Ping(t.Context()).Err(); err != nil {
		t.Fatalf("the first server: %v", err)
	}
}

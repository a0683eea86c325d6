package spawn

import (
	"net"
	"testing"
	"time"
)

// SetTopologyWait makes topologies give up after d; the func restores it.
func SetTopologyWait(d time.Duration) func() {
	old := topologyWait
	topologyWait = d
	return func() { topologyWait = old }
}

// TakePortsOnce makes the first port chosen for a server one that another
// listener holds; it returns that address and a func that restores.
func TakePortsOnce(t *testing.T) (string, func()) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	first := true
	pickPort = func() (int, error) {
		if first {
			first = false
			return l.Addr().(*net.TCPAddr).Port, nil
		}
		return freePort()
	}
	return l.Addr().String(), func() { pickPort = freePort; l.Close() }
}

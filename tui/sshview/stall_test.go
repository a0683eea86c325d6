package sshview

import (
	"testing"
	"time"
)

// TestAClientThatDoesNotReadIsDropped: a viewer whose client stops reading
// (a huge terminal fills its window fast) holds up only its own view;
// once that view has been held up for StallAfter its connection is
// closed, and another viewer's frames keep coming all the while.
func TestAClientThatDoesNotReadIsDropped(t *testing.T) {
	t.Parallel()
	srv := startView(t, Config{StallAfter: time.Second})
	slow, err := dial(srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	sess, err := slow.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.RequestPty("xterm", maxRows, maxCols, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.StdoutPipe(); err != nil { // never read
		t.Fatal(err)
	}
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	fast, err := dial(srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer fast.Close()
	v, err := openView(fast, 24, 80, nil)
	if err != nil {
		t.Fatal(err)
	}
	dropped := make(chan struct{})
	go func() { _ = slow.Wait(); close(dropped) }()
	// Each new size redraws the whole huge screen: the client's window
	// fills in a few frames rather than a line at a time.
	go func() {
		for i := 0; ; i++ {
			select {
			case <-dropped:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if sess.WindowChange(maxRows-i%2, maxCols) != nil {
				return
			}
		}
	}()
	// Minutes are a hang, not a budget.
	select {
	case <-dropped:
	case <-time.After(2 * time.Minute):
		t.Fatal("the client that does not read was never dropped")
	}
	n := v.out.len()
	waitFor(t, "the other viewer's next frames", func() bool { return v.out.len() > n })
}

func (s *screen) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Len()
}

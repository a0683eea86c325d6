package store

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestOwnerRecordsAreReadBackAndNothingElseIs: a record reads back as
// written; anything else (a user's value, a truncated or padded record, a
// bad id) is no record, so nothing it names is ever taken as locklab's.
func TestOwnerRecordsAreReadBackAndNothingElseIs(t *testing.T) {
	o, err := newOwner("0123456789ab", false)
	if err != nil {
		t.Fatal(err)
	}
	back, ok := ParseOwner(o.String())
	if !ok || back != o {
		t.Fatalf("%q read back as %+v, %v", o.String(), back, ok)
	}
	for _, s := range []string{"", "precious", "pid=1 host=h started=2024-01-01T00:00:00Z",
		strings.Replace(o.String(), "ns=0123456789ab", "ns=../etc", 1),
		strings.Replace(o.String(), "role=run", "role=admin", 1),
		strings.Replace(o.String(), "started=", "started=yesterday", 1),
		o.String()[:len(o.String())-5], o.String() + " " + strings.Repeat("x", 600), "locklab-owner/1 ns"} {
		if _, ok := ParseOwner(s); ok {
			t.Errorf("%q read as an owner record", s)
		}
	}
	if alive, why := o.Judge(true); !alive {
		t.Errorf("this process, beating, judged dead: %s", why)
	}
	if alive, _ := o.Judge(false); alive {
		t.Error("an owner with no heartbeat judged alive")
	}
	gone := o
	gone.PID = 1 << 22 // above Linux's pid_max: no such process
	if alive, why := gone.Judge(true); alive || why != "its process is gone" {
		t.Errorf("a gone process on this host: alive %v (%s)", alive, why)
	}
	elsewhere := gone
	elsewhere.Host = "another-host"
	if alive, _ := elsewhere.Judge(true); !alive {
		t.Error("a beating owner on another host judged dead by its pid")
	}
	if h, _ := os.Hostname(); h == "" {
		t.Log("no host name: the pid check is off")
	}
	if a := Age(time.Now().Add(-90*time.Second), time.Now()); a != "1m30s" {
		t.Errorf("Age: %s", a)
	}
}

package store

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A run leaves things on servers it does not own: keys on a Redis or a
// memcached, a schema on Postgres, a table on MySQL. Its owner record
// says they are locklab's and whose, so that locklab clean removes only
// what a registered owner left, never what merely looks like it:
//
//   - On Redis and memcached, locklab:<ns>:owner:<id> holds the record
//     with a TTL of OwnerTTL and locklab:<ns>:alive:<id> is its heartbeat
//     with a TTL of HeartbeatTTL; the owner renews both while it lives.
//     Several owners may share a namespace (a workshop's host and guests).
//   - On Postgres the record is the comment of the run's schema, on MySQL
//     the comment of the run's table; the heartbeat is a timestamp the run
//     renews, read against the server's own clock.
//
// An owner is dead when its heartbeat has lapsed, or, on this host, when
// its process is gone.

// OwnerTTL is how long an owner record outlives its owner's last
// heartbeat: for that long clean can prove what a killed run left (a
// lock key that had no TTL yet, when the run died in its first second).
const OwnerTTL = 7 * 24 * time.Hour

// Names of the registration keys in a namespace: alive:<id>, owner:<id>.
const (
	MarkerName = "alive"
	OwnerName  = "owner"
)

// ownerMagic starts every owner record.
const ownerMagic = "locklab-owner/1"

// Owner is an owner record: who made a namespace, and when.
type Owner struct {
	NS      string // the run's id: the namespace's
	ID      string // the owner's id within the namespace
	Role    string // run, or guest (a process taking part in another's race)
	PID     int
	Host    string
	Started time.Time
}

func newOwner(ns string, guest bool) (Owner, error) {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return Owner{}, fmt.Errorf("store: owner id: %w", err)
	}
	host, _ := os.Hostname()
	o := Owner{NS: ns, ID: hex.EncodeToString(b[:]), Role: "run", PID: os.Getpid(), Host: host,
		Started: time.Now().UTC().Truncate(time.Second)}
	if guest {
		o.Role = "guest"
	}
	return o, nil
}

// String is the record as stored. Host names have no spaces; a host that
// does is written with '_' for them.
func (o Owner) String() string {
	return fmt.Sprintf("%s ns=%s id=%s role=%s pid=%d host=%s started=%s", ownerMagic, o.NS, o.ID, o.Role,
		o.PID, strings.ReplaceAll(o.Host, " ", "_"), o.Started.UTC().Format(time.RFC3339))
}

// ParseOwner reads a record; ok is false for anything that is not one.
func ParseOwner(s string) (Owner, bool) {
	if len(s) > 512 {
		return Owner{}, false
	}
	f := strings.Fields(s)
	if len(f) == 0 || f[0] != ownerMagic {
		return Owner{}, false
	}
	kv := map[string]string{}
	for _, p := range f[1:] {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			return Owner{}, false
		}
		kv[k] = v
	}
	pid, err := strconv.Atoi(kv["pid"])
	started, terr := time.Parse(time.RFC3339, kv["started"])
	o := Owner{NS: kv["ns"], ID: kv["id"], Role: kv["role"], PID: pid, Host: kv["host"], Started: started}
	if err != nil || terr != nil || !validRunID(o.NS) || !validRunID(o.ID) || (o.Role != "run" && o.Role != "guest") {
		return Owner{}, false
	}
	return o, true
}

// Who names the owner for people: "run, process 42 on host h".
func (o Owner) Who() string {
	return fmt.Sprintf("%s, process %d on %s", o.Role, o.PID, o.Host)
}

// Judge says whether an owner lives, given whether its heartbeat is
// current, and how locklab knows.
func (o Owner) Judge(beating bool) (alive bool, why string) {
	host, _ := os.Hostname()
	here := host != "" && o.Host == strings.ReplaceAll(host, " ", "_")
	switch {
	case !beating:
		return false, "no heartbeat"
	case here && o.PID > 0 && gone(o.PID):
		return false, "its process is gone"
	}
	return true, "heartbeat"
}

// gone reports whether process pid on this host has ended: no such
// process, or one that is dead but not yet reaped (a zombie, on Linux).
func gone(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	if i := strings.LastIndexByte(string(b), ')'); i >= 0 && i+2 < len(b) {
		return b[i+2] == 'Z' || b[i+2] == 'X'
	}
	return false
}

// Age is how long ago t was, in whole seconds, for people.
func Age(t time.Time, now time.Time) string {
	if t.IsZero() {
		return "unknown"
	}
	d := now.Sub(t)
	if d < 0 {
		d = 0
	}
	return d.Round(time.Second).String()
}

package store

import (
	"fmt"
	"strings"
)

// HeartbeatTable is the table a run's heartbeat is kept in, in its own
// schema (Postgres) or database (MySQL).
const HeartbeatTable = "locklab_heartbeat"

// ServerError says a server beyond Redis could not be reached or refused
// what the run asked of it.
type ServerError struct {
	Kind string // "Postgres", "MySQL", "memcached"
	Addr string
	Err  error
	Hint string // what to do, when the server did not answer for itself
}

func (e *ServerError) Error() string {
	msg := fmt.Sprintf("cannot use %s at %s: %v", e.Kind, e.Addr, e.Err)
	if e.Hint != "" {
		msg += " — " + e.Hint
	}
	return msg
}

func (e *ServerError) Unwrap() error { return e.Err }

// FirstLine is s up to its first newline.
func FirstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

package store

import "strings"

// RedactAs is Redact for a server's address of another kind: the scheme
// is the one typed, or none (dflt "") — never redis:// for a memcached
// address.
func RedactAs(raw, dflt string) string {
	if strings.TrimSpace(raw) == "" {
		return ""
	}
	return redact(raw, dflt)
}

// schemePrefix is "scheme://" as the user typed it, else dflt's.
func (p urlParts) schemePrefix(dflt string) string {
	switch {
	case p.typed:
		return p.scheme + "://"
	case dflt != "":
		return dflt + "://"
	}
	return ""
}

// ScrubAs is Scrub for a server of another kind: raw shows as RedactAs
// shows it.
func ScrubAs(msg, raw string) string { return scrub(msg, raw, "") }

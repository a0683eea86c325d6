package store

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
)

// ConnectError says a real Redis server could not be used, with the
// server's own words and what to do about them.
type ConnectError struct {
	Addr string
	Err  error
	raw  string // the URL, for Scrub only
}

// NewConnectError is err connecting to addr, given by the URL raw (its
// password is kept out of the message).
func NewConnectError(addr string, err error, raw string) *ConnectError {
	return &ConnectError{Addr: addr, Err: err, raw: raw}
}

func (e *ConnectError) Error() string {
	msg := fmt.Sprintf("cannot use Redis at %s: %s", e.Addr, Scrub(e.Err.Error(), e.raw))
	h := Hint(e.Err)
	if cut(e.raw).scheme == "rediss" && (errors.Is(e.Err, context.DeadlineExceeded) || isTimeout(e.Err)) {
		h = "no answer to the TLS handshake: does the server speak TLS on this port? Check rediss:// (TLS) against redis:// (plain)"
	}
	if h != "" {
		msg += " — " + h
	}
	return msg
}

func (e *ConnectError) Unwrap() error { return e.Err }

// Hint says what to do about an error from a real Redis server, matched to
// the error: a password refused, TLS, a server that is not there, one that
// refuses more clients. "" when locklab has nothing useful to add.
func Hint(err error) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(msg, s) {
				return true
			}
		}
		return false
	}
	var (
		dns      *net.DNSError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		verify   *tls.CertificateVerificationError
		record   tls.RecordHeaderError
	)
	switch {
	case has("without any password configured"):
		return "the server has no password: leave it out of the URL"
	case has("WRONGPASS", "NOAUTH", "invalid password", "invalid username-password"):
		return "check the password and user name in the URL (put it in LOCKLAB_REDIS_URL: the process list shows flags)"
	case has("NOPERM"):
		return "the user may not run a command locklab needs: grant it (ACL SETUSER) or use another user"
	case has("max number of clients reached"):
		return "the server refuses more clients (maxclients): use fewer --workers, cap locklab's connections with ?pool_size=N in the URL, or raise maxclients"
	case has("DENIED"):
		return "the server accepts only local clients (protected mode): set a password on it or bind it to this address"
	case errors.As(err, &unknown), errors.As(err, &hostname), errors.As(err, &invalid), errors.As(err, &verify),
		has("x509:", "certificate"):
		return "TLS: the server's certificate is not trusted for this host name: check the host in rediss:// and the CA (SSL_CERT_FILE)"
	case errors.As(err, &record), has("tls:", "first record does not look like a TLS handshake"):
		return "TLS: check rediss:// (TLS) against redis:// (plain), and the server's TLS port"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "is the server running? Start one with `docker compose up -d redis`, or leave out --redis to use the embedded store"
	case errors.As(err, &dns):
		return "check the host name in the URL"
	case errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "the server closed the connection: if it speaks TLS use rediss://; if it is full, see its maxclients"
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return "no answer in time: check the host and port, a firewall, or whether the server is paused"
	}
	return ""
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

package store

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/redis/go-redis/v9"
)

// hidden replaces a password in everything locklab prints.
const hidden = "xxxxx"

// urlParts is a Redis URL cut the way locklab reads it. A password may hold
// any character, '/', '?', '#' and '@' included, typed raw or percent-encoded.
// A Redis URL has no fragment: a '#' is part of whatever it is typed in.
type urlParts struct {
	scheme   string // as typed; "redis" when none was
	typed    bool   // the scheme was typed
	userinfo string // as typed, before the '@'; "" when none
	hasUser  bool   // an '@' separates user information from the address
	host     string // host[:port]
	path     string // "/db" or ""
	query    string // after '?', without it
	hasQuery bool
}

// address is a host (a name, an IPv4 or a bracketed IPv6), a port, then
// nothing, or a path without '@', then an optional query.
var address = regexp.MustCompile(`(?s)^(\[[^\]/?#@]*\]|[^\[\]:/?#@]*)(:[0-9]*)?(/[^?#@]*)?(\?.*)?$`)

// options are the query options a Redis URL may carry: go-redis's and the
// credentials locklab takes from the query.
var options = map[string]bool{"db": true, "protocol": true, "client_name": true, "max_retries": true,
	"min_retry_backoff": true, "max_retry_backoff": true, "dial_timeout": true, "read_timeout": true,
	"write_timeout": true, "pool_fifo": true, "pool_size": true, "pool_timeout": true, "min_idle_conns": true,
	"max_idle_conns": true, "max_active_conns": true, "max_concurrent_dials": true, "pipeline_pool_size": true,
	"pipeline_read_buffer_size": true, "pipeline_write_buffer_size": true, "conn_max_idle_time": true,
	"idle_timeout": true, "conn_max_lifetime": true, "max_conn_age": true, "conn_max_lifetime_jitter": true,
	"skip_verify": true, "username": true}

// wellFormed reports whether s is an address, and, with known, whether
// every option in its query is one a Redis URL may carry.
func wellFormed(s string, known bool) bool {
	m := address.FindStringSubmatch(s)
	if m == nil {
		return false
	}
	if !known || m[4] == "" {
		return true
	}
	for _, kv := range splitQuery(m[4][1:]) {
		k, _, _ := strings.Cut(kv, "=")
		if !options[strings.ToLower(unescape(k))] && !isSecretKey(k) {
			return false
		}
	}
	return true
}

// cut splits raw. Without "://" the scheme is redis. The user information
// ends at the last '@' after which a well-formed address follows (passwords
// hold '@' more often than options do); an '@' inside a well-formed query
// of known options (?password=p@ss) is the option's.
func cut(raw string) urlParts {
	p := urlParts{scheme: "redis"}
	rest := strings.TrimSpace(raw)
	if scheme, after, ok := strings.Cut(rest, "://"); ok && !strings.ContainsAny(scheme, "/?#@:") {
		p.scheme, p.typed, rest = scheme, true, after
	}
	at := -1
	if !wellFormed(rest, true) {
		at = lastAt(rest, func(s string) bool { return wellFormed(s, true) })
		if at < 0 {
			at = lastAt(rest, func(s string) bool { return wellFormed(s, false) })
		}
		if at < 0 {
			// Nothing well formed: what precedes the last '@' may be a password.
			at = strings.LastIndex(rest, "@")
		}
	}
	if at >= 0 {
		p.userinfo, p.hasUser, rest = rest[:at], true, rest[at+1:]
	}
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		p.query, p.hasQuery, rest = rest[i+1:], true, rest[:i]
	}
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		p.path, rest = rest[i:], rest[:i]
	}
	p.host = rest
	return p
}

// lastAt is the index of the last '@' in s after which ok holds, or -1.
func lastAt(s string, ok func(string) bool) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '@' && ok(s[i+1:]) {
			return i
		}
	}
	return -1
}

// user and password of the user information, percent-decoded when the text
// decodes (a lone '%' is taken as typed). Without ':' the whole user
// information is the user name, which go-redis sends as such.
func (p urlParts) credentials() (user, pass string, hasPass bool) {
	u, pw, ok := strings.Cut(p.userinfo, ":")
	return unescape(u), unescape(pw), ok
}

func unescape(s string) string {
	if d, err := url.PathUnescape(s); err == nil {
		return d
	}
	return s
}

// splitQuery cuts a query into its options. A credential's value runs on
// over '&' until an option a Redis URL may carry: "password=a&b&pool_size=2"
// is the password "a&b".
func splitQuery(q string) []string {
	var out []string
	inSecret := false
	for _, kv := range strings.Split(q, "&") {
		k, _, hasEq := strings.Cut(kv, "=")
		known := hasEq && (options[strings.ToLower(unescape(k))] || isSecretKey(k))
		if inSecret && !known {
			out[len(out)-1] += "&" + kv
			continue
		}
		inSecret = isSecretKey(k)
		out = append(out, kv)
	}
	return out
}

// unescapeQuery decodes a query value, or takes it as typed.
func unescapeQuery(s string) string {
	if d, err := url.QueryUnescape(s); err == nil {
		return d
	}
	return s
}

// isSecretKey reports whether a query option may carry a credential: any
// name with pass, pwd, auth, secret or token in it, however spelled.
func isSecretKey(k string) bool {
	k = strings.ToLower(unescape(k))
	for _, s := range []string{"pass", "pwd", "auth", "secret", "token"} {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

// secrets lists every text that may be a password in raw, decoded and
// encoded: locklab's reading (user information and password= options),
// then, from four characters on, what other readers would take for one
// (Go's url.Parse, a cut at any '@' and any ':' before it).
func secrets(raw string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string, min int) {
		if len(s) < min {
			return
		}
		forms := []string{s, unescape(s), url.PathEscape(s), url.QueryEscape(s),
			strings.TrimPrefix(url.UserPassword("", s).String(), ":")}
		if q, err := url.QueryUnescape(s); err == nil {
			forms = append(forms, q)
		}
		for _, f := range forms {
			if f != "" && !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	p := cut(raw)
	if p.hasUser {
		if _, rawPw, ok := strings.Cut(p.userinfo, ":"); ok {
			add(rawPw, 1)
		} else {
			add(p.userinfo, 1) // "redis://secret@host": a password to some
		}
		if strings.HasSuffix(p.userinfo, ":") {
			add(p.userinfo, 1)
		}
	}
	// The options after any '?' (locklab's reading has one of them).
	for i, c := range raw {
		if c != '?' {
			continue
		}
		for _, kv := range splitQuery(raw[i+1:]) {
			if k, v, _ := strings.Cut(kv, "="); isSecretKey(k) {
				add(v, 1)
			}
		}
	}
	const other = 4
	body := strings.TrimSpace(raw)
	if _, after, ok := strings.Cut(body, "://"); ok {
		body = after
	}
	for i, c := range body {
		if c != '@' {
			continue
		}
		// A user name typed with a raw ':' moves the password's start.
		add(body[:i], other)
		for j, d := range body[:i] {
			if d == ':' {
				add(body[j+1:i], other)
			}
		}
	}
	if u, err := url.Parse(strings.TrimSpace(raw)); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok {
			add(pw, other)
		} else {
			add(u.User.Username(), other)
		}
	}
	return out
}

// Redact is the one printed form of a Redis URL: scheme, user name, host,
// port, database and options as typed, the password (in the user
// information or a password= option) replaced by xxxxx. It accepts any
// text, with or without a scheme, and never returns a password, however
// it was spelled: each part it would print is checked against every
// reading of the input, and a URL too tangled to show safely is shown as
// xxxxx.
func Redact(raw string) string { return redact(raw, "redis") }

func redact(raw, dflt string) string {
	p := cut(raw)
	var b strings.Builder
	b.WriteString(p.schemePrefix(dflt))
	if p.hasUser {
		// The user name is shown only beside a password: alone, or with an
		// empty one, it may be the password.
		user, pw, hasPass := p.credentials()
		if hasPass && user != "" && pw != "" {
			b.WriteString(url.User(user).String())
		}
		b.WriteString(":" + hidden + "@")
	}
	b.WriteString(p.host + p.path)
	if p.hasQuery {
		kvs := splitQuery(p.query)
		for i, kv := range kvs {
			k, _, ok := strings.Cut(kv, "=")
			if ok && isSecretKey(k) {
				kvs[i] = k + "=" + hidden
			}
		}
		b.WriteString("?" + strings.Join(kvs, "&"))
	}
	out := b.String()
	secs := secrets(raw)
	var whole []string // secrets that a mask could split
	for _, sec := range secs {
		if strings.Contains(sec, hidden) {
			whole = append(whole, sec)
		}
	}
	for _, piece := range strings.Split(out, hidden) { // all that is printed as typed
		if leaks(piece, secs) || leaks(out, whole) {
			if p.typed && leaks(p.scheme, secs) {
				p.typed = false
			}
			return p.schemePrefix(dflt) + hidden
		}
	}
	return out
}

// leaks reports whether s holds one of secs.
func leaks(s string, secs []string) bool {
	for _, sec := range secs {
		if strings.Contains(s, sec) {
			return true
		}
	}
	return false
}

// Scrub removes every password of raw from msg (an error from parsing or
// talking to the server at raw), and every spelling of raw itself.
func Scrub(msg, raw string) string { return scrub(msg, raw, "redis") }

func scrub(msg, raw, dflt string) string {
	if raw == "" {
		return msg
	}
	msg = strings.ReplaceAll(msg, strings.TrimSpace(raw), redact(raw, dflt))
	secs := secrets(raw)
	for range 3 {
		clean := true
		for _, sec := range secs {
			if strings.Contains(msg, sec) {
				msg, clean = strings.ReplaceAll(msg, sec, hidden), false
			}
		}
		if clean {
			return msg
		}
	}
	if leaks(msg, secs) {
		return "(the message is hidden: it held the password)"
	}
	return msg
}

// URLError is a Redis URL that does not parse; its message holds no password.
type URLError struct{ msg string }

func (e *URLError) Error() string { return e.msg }

// NewURLError is a URL refused for the reason msg (its secrets already
// taken out).
func NewURLError(msg string) *URLError { return &URLError{msg: msg} }

// ParseURL reads a Redis URL as locklab understands it: the scheme may be
// left out (redis:// is meant), the password may hold any character typed
// raw or percent-encoded, and a password= (or username=) option is taken as
// the credential. Every other option is go-redis's (pool_size, dial_timeout,
// …). Its errors never contain the password.
func ParseURL(raw string) (*redis.Options, error) {
	p := cut(raw)
	bad := func(why string) error {
		return &URLError{msg: fmt.Sprintf("invalid Redis URL %s: %s", Redact(raw), Scrub(why, raw))}
	}
	switch p.scheme {
	case "redis", "rediss", "unix":
	default:
		return nil, bad(fmt.Sprintf("the scheme is %q; want redis://, rediss:// or unix://", p.scheme))
	}
	u := &url.URL{Scheme: p.scheme, Host: p.host, Path: p.path}
	if p.scheme == "unix" {
		u.Host, u.Path = "", p.host+p.path
	}
	user, pw, hasPass := p.credentials()
	if p.hasUser {
		if hasPass {
			u.User = url.UserPassword(user, pw)
		} else {
			u.User = url.User(user)
		}
	}
	var qUser, qPass string
	var hasQUser, hasQPass bool
	if p.hasQuery {
		q := url.Values{}
		for _, kv := range splitQuery(p.query) {
			k, v, _ := strings.Cut(kv, "=")
			switch {
			case strings.EqualFold(k, "username"):
				qUser, hasQUser = unescapeQuery(v), true
			case strings.EqualFold(k, "password"):
				qPass, hasQPass = unescapeQuery(v), true
			case kv != "":
				q.Add(unescapeQuery(k), unescapeQuery(v))
			}
		}
		u.RawQuery = q.Encode()
	}
	if err := checkHost(p); err != nil {
		return nil, bad(err.Error())
	}
	opt, err := redis.ParseURL(u.String())
	if err != nil {
		return nil, bad(strings.TrimPrefix(unwrapURLError(err), "redis: "))
	}
	if opt.DB < 0 {
		return nil, bad(fmt.Sprintf("database %d is negative; want a number from 0 (the default) up", opt.DB))
	}
	if hasQUser {
		opt.Username = qUser
	}
	if hasQPass {
		opt.Password = qPass
	}
	return opt, nil
}

// checkHost refuses an address url.Parse would echo whole in its error.
func checkHost(p urlParts) error {
	if p.scheme == "unix" {
		return nil
	}
	h := p.host
	if strings.HasPrefix(h, "[") {
		end := strings.IndexByte(h, ']')
		if end < 0 {
			return errors.New("an IPv6 address needs its closing ]")
		}
		h = h[end+1:]
	} else if i := strings.IndexByte(h, ':'); i >= 0 {
		h = h[i:]
	} else {
		h = ""
	}
	if h != "" {
		port := strings.TrimPrefix(h, ":")
		if port == "" || strings.Trim(port, "0123456789") != "" || len(port) > 5 {
			return errors.New("the port must be a number")
		}
	}
	return nil
}

// unwrapURLError drops the URL that url.Error repeats in its message.
func unwrapURLError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// URLAddr checks a Redis URL as ParseURL does and returns its printed
// address (Addr). It names no go-redis type, for the packages that only
// check a URL (see Redis).
func URLAddr(raw string) (string, error) {
	o, err := ParseURL(raw)
	if err != nil {
		return "", err
	}
	return Addr(o), nil
}

// Addr is the printed address of a Redis URL: host:port[/db], no password.
func Addr(opt *redis.Options) string {
	if opt.DB != 0 {
		return fmt.Sprintf("%s/%d", opt.Addr, opt.DB)
	}
	return opt.Addr
}

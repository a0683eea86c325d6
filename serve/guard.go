package serve

import (
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// local keeps the server a lab on this machine, not an open door for any
// web page its user visits. A browser lets any page send requests to
// 127.0.0.1, and a name the page controls can be made to resolve there
// (DNS rebinding); so every request must name, in its Host header, the
// address the server answered on (or localhost, when that is a loopback
// address, or a name given with AllowHosts); a request that changes state
// must not come from a page of another origin (Origin, else Referer); and
// a POST that carries a body must say it is JSON, which no page of
// another origin can send without the browser asking first — a question
// this server never answers yes to.
func (s *Server) local(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		port, ip := localPort(r), localIP(r)
		if !s.hostAllowed(r.Host, port, ip) {
			s.metrics.refused.WithLabelValues("host").Inc()
			fail(w, http.StatusMisdirectedRequest, fmt.Sprintf("this server answers to the address it listens on, not to Host %q: "+
				"send the request there, or start serve with --allow-host NAME", clip(r.Host)))
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodOptions {
			if from, ok := s.sameOrigin(r, port, ip); !ok {
				s.metrics.refused.WithLabelValues("origin").Inc()
				fail(w, http.StatusForbidden, fmt.Sprintf("a %s from the page at %q is refused: this server takes state changes from its own origin or from tools that send no Origin", r.Method, clip(from)))
				return
			}
		}
		if r.Method == http.MethodPost && !jsonBody(r) {
			s.metrics.refused.WithLabelValues("content-type").Inc()
			fail(w, http.StatusUnsupportedMediaType, fmt.Sprintf("a POST with a body must be Content-Type: application/json (got %q)", clip(r.Header.Get("Content-Type"))))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// localPort is the port the request's connection came in on ("" when
// unknown: a handler called without a server).
func localPort(r *http.Request) string {
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if _, port, err := net.SplitHostPort(a.String()); err == nil {
			return port
		}
	}
	return ""
}

// localIP is the address the request's connection came in on.
func localIP(r *http.Request) net.IP {
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr); ok {
		return a.IP
	}
	return nil
}

// hostAllowed reports whether a Host header (or an Origin's host) names
// this server: its port is the one the connection came in on, and its
// name is that connection's address, a loopback name for a loopback
// address, or one of AllowHosts.
func (s *Server) hostAllowed(host, port string, ip net.IP) bool {
	name, p, err := net.SplitHostPort(host)
	if err != nil {
		name, p = host, "80" // no port: HTTP's own
	}
	name = strings.TrimSuffix(strings.ToLower(strings.Trim(name, "[]")), ".")
	if name == "" || (port != "" && p != port) {
		return false
	}
	for _, a := range s.cfg.AllowHosts {
		an, ap, err := net.SplitHostPort(a)
		if err != nil {
			an, ap = a, p
		}
		if strings.EqualFold(strings.Trim(an, "[]"), name) && ap == p {
			return true
		}
	}
	if (ip == nil || ip.IsLoopback()) && slices.Contains([]string{"localhost", "127.0.0.1", "::1"}, name) {
		return true
	}
	parsed := net.ParseIP(name)
	return ip != nil && parsed != nil && parsed.Equal(ip)
}

// sameOrigin reports whether a state-changing request comes from no page
// (a tool such as curl or k6 sends no Origin) or from a page of this
// server's own origin; from is the origin it names.
func (s *Server) sameOrigin(r *http.Request, port string, ip net.IP) (from string, ok bool) {
	from = r.Header.Get("Origin")
	if from == "" {
		from = r.Header.Get("Referer")
	}
	if from == "" {
		return "", true
	}
	u, err := url.Parse(from)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return from, false // "null" (a sandboxed page, a file), or nonsense
	}
	return from, s.hostAllowed(u.Host, port, ip)
}

// jsonBody reports whether a POST's body, if it has one, is declared
// JSON. A POST with no body (curl -X POST, k6's http.post) needs no type.
func jsonBody(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return r.ContentLength == 0
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

// clip bounds a header echoed in an answer; %q escapes what it holds.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

package workshop

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/locklab/locklab/store"
	"golang.org/x/time/rate"
)

// A room code is what an attendee types to join: `locklab join CODE@HOST`
// asks the host's code endpoint (GET /join/CODE on CodePort) for the
// room's Redis, so nobody types a Redis URL. The code is random per
// hosting, of letters that no font confuses.
const (
	codeAlphabet = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
	codeLen      = 6
	// CodePort is the code endpoint's port unless told otherwise.
	CodePort = 7420
	// codeReply bounds what a resolver reads of an answer.
	codeReply = 4 << 10
)

// NewCode returns a fresh room code.
func NewCode() string {
	b := make([]byte, codeLen)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = codeAlphabet[int(b[i])%len(codeAlphabet)]
	}
	return string(b)
}

// CleanCode is code as typed, upper-cased; "" when it cannot be a code.
func CleanCode(code string) string {
	code = strings.ToUpper(strings.TrimSpace(code))
	if len(code) != codeLen || strings.Trim(code, codeAlphabet) != "" {
		return ""
	}
	return code
}

// Answer is what the code endpoint tells an attendee with the right code.
type Answer struct {
	Redis string `json:"redis"`
	Room  string `json:"room"`
}

// CodeServer answers a room's code with the way to its Redis.
type CodeServer struct {
	srv *http.Server
	ln  net.Listener
}

// ServeCode answers GET /join/CODE on ln: for code, the room's Redis URL,
// with a host that names this machine (localhost, 127.0.0.1, 0.0.0.0)
// replaced by the address the attendee reached; for any other, 404. Wrong
// codes are few a second for everyone together, so guessing is hopeless.
func ServeCode(ln net.Listener, code, redisURL, room string) *CodeServer {
	wrong := rate.NewLimiter(rate.Limit(5), 10)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /join/{code}", func(w http.ResponseWriter, r *http.Request) {
		got := CleanCode(r.PathValue("code"))
		if subtle.ConstantTimeCompare([]byte(got), []byte(code)) != 1 {
			if !wrong.Allow() {
				http.Error(w, "too many wrong codes: wait a second", http.StatusTooManyRequests)
				return
			}
			http.Error(w, "no such room", http.StatusNotFound)
			return
		}
		local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(Answer{Redis: ReachableURL(redisURL, local), Room: room})
	})
	s := &CodeServer{ln: ln, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 5 * time.Second,
		WriteTimeout: 5 * time.Second, MaxHeaderBytes: 8 << 10}}
	go func() { _ = s.srv.Serve(ln) }()
	return s
}

// Addr is where the endpoint listens.
func (s *CodeServer) Addr() net.Addr { return s.ln.Addr() }

// Close stops the endpoint.
func (s *CodeServer) Close() error { return s.srv.Close() }

// ReachableURL is redisURL as an attendee who reached this machine at
// local sees it: a host naming this machine becomes local's IP.
func ReachableURL(redisURL string, local net.Addr) string {
	u, err := url.Parse(redisURL)
	ta, ok := local.(*net.TCPAddr)
	if err != nil || !ok || u.Host == "" || !namesThisMachine(u.Hostname()) {
		return redisURL
	}
	port := u.Port()
	if port == "" {
		port = "6379"
	}
	u.Host = net.JoinHostPort(ta.IP.String(), port)
	return u.String()
}

// namesThisMachine: host is localhost, a loopback or unspecified address,
// or one of this machine's own.
func namesThisMachine(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return false
	}
	if ip.IsLoopback() || ip.IsUnspecified() {
		return true
	}
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}

// NoRoomError: the host has no room of that code.
type NoRoomError struct{ Code, Host string }

func (e *NoRoomError) Error() string { return fmt.Sprintf("no room %s at %s", e.Code, e.Host) }

// Resolve asks the code endpoint at hostport for room code's Redis.
func Resolve(ctx context.Context, code, hostport string) (Answer, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+hostport+"/join/"+url.PathEscape(code), nil)
	if err != nil {
		return Answer{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		var oe *net.OpError
		if errors.As(err, &oe) || errors.Is(err, context.DeadlineExceeded) {
			return Answer{}, fmt.Errorf("cannot reach a locklab host at %s: is it hosting, and is the address the one its screen shows?", hostport)
		}
		return Answer{}, fmt.Errorf("cannot ask %s for room %s: %w", hostport, code, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, codeReply))
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return Answer{}, &NoRoomError{Code: code, Host: hostport}
	case http.StatusTooManyRequests:
		return Answer{}, fmt.Errorf("%s refuses codes for a moment (too many wrong ones): try again in a few seconds", hostport)
	default:
		return Answer{}, fmt.Errorf("%s answered %s, not a locklab host's answer", hostport, resp.Status)
	}
	var a Answer
	if err := json.Unmarshal(body, &a); err != nil {
		return Answer{}, fmt.Errorf("%s answered something that is not a locklab room", hostport)
	}
	if _, err := store.URLAddr(a.Redis); err != nil || CheckName("room", a.Room) != nil {
		return Answer{}, fmt.Errorf("%s answered something that is not a locklab room", hostport)
	}
	return a, nil
}

// Addresses are the addresses attendees reach a listener bound to host
// at: its own when it names one, this machine's non-loopback addresses
// when it binds all interfaces (127.0.0.1 when there are none).
func Addresses(host string) []string {
	ip := net.ParseIP(host)
	if host != "" && (ip == nil || !ip.IsUnspecified()) {
		return []string{host}
	}
	var v4, v6 []string
	ifs, _ := net.Interfaces()
	for _, ifc := range ifs {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			n, ok := a.(*net.IPNet)
			if !ok || !n.IP.IsGlobalUnicast() {
				continue
			}
			if n.IP.To4() != nil {
				v4 = append(v4, n.IP.String())
			} else if ip == nil || ip.To4() == nil { // 0.0.0.0 binds IPv4 only
				v6 = append(v6, n.IP.String())
			}
		}
	}
	if out := append(v4, v6...); len(out) > 0 {
		return out
	}
	return []string{"127.0.0.1"}
}

package store

import (
	"context"
	"errors"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// runKey is a key of a locklab run: locklab:<12 hex digits>:<name>. No
// other key is ever looked at twice, let alone deleted.
var runKey = regexp.MustCompile(`^locklab:([0-9a-f]{12}):.+$`)

// Server is a real Redis server opened for locklab clean: no run, no
// safety net, only a client.
type Server struct {
	Addr   string
	Client *redis.Client
	url    string
}

// Dial connects to the server at a URL (errors as Open's).
func Dial(ctx context.Context, raw string) (*Server, error) {
	opt, err := ParseURL(raw)
	if err != nil {
		return nil, err
	}
	opt = urlClientOptions(opt, Config{})
	tellingDialer(opt)
	s := &Server{Addr: Scrub(Addr(opt), raw), Client: redis.NewClient(opt), url: raw}
	pctx, cancel := context.WithTimeout(ctx, opt.DialTimeout)
	defer cancel()
	if err := s.Client.Ping(pctx).Err(); err != nil {
		s.Client.Close()
		return nil, &ConnectError{Addr: s.Addr, Err: err, raw: raw}
	}
	return s, nil
}

// Close closes the client.
func (s *Server) Close() error { return s.Client.Close() }

// Explain scrubs an error from this server of its URL's password.
func (s *Server) Explain(err error) string {
	msg := Scrub(err.Error(), s.url)
	if h := Hint(err); h != "" {
		msg += " — " + h
	}
	return msg
}

// Key is one key of a run as locklab clean shows it.
type Key struct {
	Name string
	Type string
	TTL  time.Duration // -1: none
}

// Run is the keys of one locklab run on a server, and whether it lives.
type Run struct {
	ID    string
	Alive bool
	Why   string // how locklab knows: "heartbeat from pid 42 on host h", "no heartbeat", …
	Keys  []Key
}

// Survey finds the locklab runs on the server: every key named
// locklab:<run-id>:…, grouped by run, and whether each run is alive (its
// marker's heartbeat, and on this host its process).
func (s *Server) Survey(ctx context.Context) ([]*Run, error) {
	runs := map[string]*Run{}
	iter := s.Client.Scan(ctx, 0, "locklab:*", 1000).Iterator()
	for iter.Next(ctx) {
		m := runKey.FindStringSubmatch(iter.Val())
		if m == nil {
			continue
		}
		r := runs[m[1]]
		if r == nil {
			r = &Run{ID: m[1]}
			runs[m[1]] = r
		}
		r.Keys = append(r.Keys, Key{Name: iter.Val()})
	}
	if err := iter.Err(); err != nil {
		return nil, err
	}
	out := make([]*Run, 0, len(runs))
	for _, r := range runs {
		if err := s.describe(ctx, r); err != nil {
			return nil, err
		}
		if len(r.Keys) > 0 || r.Alive {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// describe reads a run's marker and its keys' types and TTLs.
func (s *Server) describe(ctx context.Context, r *Run) error {
	marker := "locklab:" + r.ID + ":" + MarkerName
	val, err := s.Client.Get(ctx, marker).Result()
	switch {
	case errors.Is(err, redis.Nil):
		r.Why = "no heartbeat"
	case err != nil:
		return err
	default:
		r.Alive, r.Why = markerAlive(val)
	}
	pipe := s.Client.Pipeline()
	types := make([]*redis.StatusCmd, len(r.Keys))
	ttls := make([]*redis.DurationCmd, len(r.Keys))
	for i, k := range r.Keys {
		types[i] = pipe.Type(ctx, k.Name)
		ttls[i] = pipe.PTTL(ctx, k.Name)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return err
	}
	keys := r.Keys[:0]
	for i, k := range r.Keys {
		k.Type = types[i].Val()
		if k.Type == "none" {
			continue // gone since the scan
		}
		k.TTL = ttls[i].Val()
		keys = append(keys, k)
	}
	r.Keys = keys
	sort.Slice(r.Keys, func(i, j int) bool { return r.Keys[i].Name < r.Keys[j].Name })
	return nil
}

// markerAlive reads a marker "pid=N host=H started=T": a run on this host
// whose process is gone is dead even before its heartbeat lapses.
func markerAlive(val string) (bool, string) {
	fields := map[string]string{}
	for _, f := range strings.Fields(val) {
		if k, v, ok := strings.Cut(f, "="); ok {
			fields[k] = v
		}
	}
	host, _ := os.Hostname()
	pid, err := strconv.Atoi(fields["pid"])
	if err == nil && pid > 0 && fields["host"] == host && host != "" {
		if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			return false, "its process " + fields["pid"] + " on this host is gone"
		}
		return true, "heartbeat from process " + fields["pid"] + " on this host"
	}
	return true, "heartbeat from process " + fields["pid"] + " on " + fields["host"]
}

// Delete deletes exactly the listed keys of runs that are not alive, and
// returns how many the server really deleted.
func (s *Server) Delete(ctx context.Context, runs []*Run) (int, error) {
	deleted := 0
	for _, r := range runs {
		if r.Alive {
			continue
		}
		var names []string // the marker of a dead run is among them
		for _, k := range r.Keys {
			names = append(names, k.Name)
		}
		for len(names) > 0 {
			n := min(len(names), 500)
			d, err := s.Client.Del(ctx, names[:n]...).Result()
			deleted += int(d)
			if err != nil {
				return deleted, err
			}
			names = names[n:]
		}
	}
	return deleted, nil
}

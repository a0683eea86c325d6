// Package clean finds what runs that are no longer alive left on real
// servers — Redis keys, Postgres schemas, MySQL databases, memcached items
// — by the owner each run registered, and removes exactly that: what has
// no owner, or an owner still alive, is named and left alone.
package clean

import (
	"context"
	"errors"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/locklab/locklab/store"
	"github.com/redis/go-redis/v9"
)

// nsKey is a key in a locklab namespace: locklab:<ns>:<name>. Its shape
// proves nothing: a namespace is locklab's only if an owner registered it.
var nsKey = regexp.MustCompile(`^locklab:([A-Za-z0-9-]{1,64}):(.+)$`)

// Server is a real Redis server opened for locklab clean: no run, no
// safety net, only a client.
type Server struct {
	Addr   string
	Client store.Redis // a *redis.Client
	url    string
}

// Dial connects to the server at a URL (errors as Open's).
func Dial(ctx context.Context, raw string) (*Server, error) {
	c, addr, err := store.DialURL(ctx, raw)
	if err != nil {
		return nil, err
	}
	return &Server{Addr: addr, Client: c, url: raw}, nil
}

// Close closes the client.
func (s *Server) Close() error { return s.Client.Close() }

// Explain scrubs an error from this server of its URL's password.
func (s *Server) Explain(err error) string {
	msg := store.Scrub(err.Error(), s.url)
	if h := store.Hint(err); h != "" {
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

// OwnerState is a registered owner of a namespace, as clean found it.
type OwnerState struct {
	store.Owner
	Alive bool
	Why   string        // "heartbeat", "no heartbeat", "its process is gone"
	Quiet time.Duration // since its last heartbeat; -1: unknown
}

// Run is a registered namespace on a server (a run's, a room's, a
// round's): its owners, its keys, and whether any owner lives.
type Run struct {
	ID     string
	Alive  bool
	Why    string // the dead owners' reasons, or the live owner's
	Owners []OwnerState
	Keys   []Key // every key of the namespace, the registration's too
	// Stale are a live namespace's registration keys of dead owners (a
	// guest that died in a room whose host lives): only they go.
	Stale []Key
}

// Stray is a namespace whose keys look like locklab's but that no owner
// registered: never touched.
type Stray struct {
	NS   string
	Keys int
}

// Survey is what clean found on one server.
type Survey struct {
	Runs   []*Run
	Strays []Stray
}

// Survey finds the namespaces on the server, registered or not, and for
// each registered one whether an owner of it lives.
func (s *Server) Survey(ctx context.Context) (*Survey, error) {
	keys := map[string][]string{}
	iter := s.Client.Scan(ctx, 0, "locklab:*", 1000).Iterator()
	for iter.Next(ctx) {
		if m := nsKey.FindStringSubmatch(iter.Val()); m != nil {
			keys[m[1]] = append(keys[m[1]], iter.Val())
		}
	}
	if err := iter.Err(); err != nil {
		return nil, err
	}
	out := &Survey{}
	for ns, names := range keys {
		r, err := s.describe(ctx, ns, names)
		if err != nil {
			return nil, err
		}
		switch {
		case r == nil:
			out.Strays = append(out.Strays, Stray{NS: ns, Keys: len(names)})
		case len(r.Keys) > 0:
			out.Runs = append(out.Runs, r)
		}
	}
	sort.Slice(out.Runs, func(i, j int) bool { return out.Runs[i].ID < out.Runs[j].ID })
	sort.Slice(out.Strays, func(i, j int) bool { return out.Strays[i].NS < out.Strays[j].NS })
	return out, nil
}

// describe reads a namespace's registration and its keys' types and TTLs;
// nil when no owner registered it.
func (s *Server) describe(ctx context.Context, ns string, names []string) (*Run, error) {
	prefix := "locklab:" + ns + ":"
	pipe := s.Client.Pipeline()
	types := make([]*redis.StatusCmd, len(names))
	ttls := make([]*redis.DurationCmd, len(names))
	vals := map[string]*redis.StringCmd{}
	for i, k := range names {
		types[i] = pipe.Type(ctx, k)
		ttls[i] = pipe.PTTL(ctx, k)
		if strings.HasPrefix(k, prefix+store.OwnerName+":") {
			vals[k] = pipe.Get(ctx, k)
		}
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) && !isWrongType(err) {
		return nil, err
	}
	r := &Run{ID: ns}
	present := map[string]bool{}
	for i, k := range names {
		k := Key{Name: k, Type: types[i].Val(), TTL: ttls[i].Val()}
		if k.Type == "none" {
			continue // gone since the scan
		}
		present[k.Name] = true
		r.Keys = append(r.Keys, k)
	}
	for _, k := range r.Keys {
		cmd := vals[k.Name]
		if cmd == nil {
			continue
		}
		o, ok := store.ParseOwner(cmd.Val())
		if !ok || o.NS != ns || k.Name != prefix+store.OwnerName+":"+o.ID {
			continue
		}
		st := OwnerState{Owner: o, Quiet: -1}
		st.Alive, st.Why = o.Judge(present[prefix+store.MarkerName+":"+o.ID])
		if k.TTL > 0 && k.TTL <= store.OwnerTTL {
			st.Quiet = store.OwnerTTL - k.TTL
		}
		r.Owners = append(r.Owners, st)
	}
	if len(r.Owners) == 0 {
		return nil, nil
	}
	judge(r, prefix)
	sort.Slice(r.Keys, func(i, j int) bool { return r.Keys[i].Name < r.Keys[j].Name })
	return r, nil
}

// judge decides a namespace: alive while any owner lives; a live one
// keeps everything but its dead owners' registrations.
func judge(r *Run, prefix string) {
	sort.Slice(r.Owners, func(i, j int) bool { return r.Owners[i].ID < r.Owners[j].ID })
	var why []string
	for _, o := range r.Owners {
		if o.Alive && !r.Alive {
			r.Alive, why = true, nil
		}
		if o.Alive == r.Alive && !contains(why, o.Why) {
			why = append(why, o.Why)
		}
	}
	r.Why = strings.Join(why, ", ")
	if !r.Alive {
		return
	}
	for _, o := range r.Owners {
		if o.Alive {
			continue
		}
		for _, k := range r.Keys {
			if k.Name == prefix+store.MarkerName+":"+o.ID || k.Name == prefix+store.OwnerName+":"+o.ID {
				r.Stale = append(r.Stale, k)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// isWrongType: GET on a key that is not a string (an owner key a user
// made a hash of) fails that command alone.
func isWrongType(err error) bool { return strings.HasPrefix(err.Error(), "WRONGTYPE") }

// Delete deletes the listed keys of namespaces whose owners are all dead,
// and the stale registrations of live ones, and returns how many keys the
// server really deleted. A namespace where a heartbeat has appeared since
// the survey (a new owner) is left alone.
func (s *Server) Delete(ctx context.Context, runs []*Run) (int, error) {
	deleted := 0
	for _, r := range runs {
		keys := r.Stale
		if !r.Alive {
			beating, err := s.beating(ctx, r)
			if err != nil {
				return deleted, err
			}
			if beating {
				continue
			}
			keys = r.Keys
		}
		var names []string
		for _, k := range keys {
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

// beating reports whether a heartbeat of an owner not known dead is in
// r's namespace now.
func (s *Server) beating(ctx context.Context, r *Run) (bool, error) {
	prefix := "locklab:" + r.ID + ":" + store.MarkerName + ":"
	dead := map[string]bool{}
	for _, o := range r.Owners {
		dead[prefix+o.ID] = !o.Alive
	}
	iter := s.Client.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		if !dead[iter.Val()] {
			return true, nil
		}
	}
	return false, iter.Err()
}

// firstLine is s up to its first line break: a server's error can run on.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

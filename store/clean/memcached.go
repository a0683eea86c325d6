package clean

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/bradfitz/gomemcache/memcache"
	"github.com/locklab/locklab/store"
)

// MemcachedServer is a memcached opened for locklab clean. memcached has
// no command to list keys by prefix; clean reads them from its LRU
// crawler's metadump (memcached 1.4.31 and later), a snapshot of the items
// that have not expired. A server started without the crawler lists
// nothing: there, clean cannot see a run's items, which all expire by
// themselves (a lock after its TTL and a second, the registration store.OwnerTTL
// after the run's last heartbeat).
type MemcachedServer struct {
	Client *memcache.Client
	Addr   string
}

// maxDumpKeys bounds what clean keeps of a dump: locklab's keys only.
const maxDumpKeys = 1_000_000

// DialMemcached connects to a memcached at an address or memcached:// URL.
func DialMemcached(raw string) (*MemcachedServer, error) {
	addr := strings.TrimSuffix(strings.TrimPrefix(raw, "memcached://"), "/")
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, store.NewURLError(fmt.Sprintf("invalid memcached address %s: want host:port", store.Redact(raw)))
	}
	c := memcache.New(addr)
	c.Timeout = 2 * time.Second
	if err := c.Ping(); err != nil {
		c.Close()
		return nil, &store.ServerError{Kind: "memcached", Addr: addr, Err: errors.New(firstLine(err.Error()))}
	}
	return &MemcachedServer{Client: c, Addr: addr}, nil
}

// Close closes the client.
func (s *MemcachedServer) Close() { s.Client.Close() }

// Survey finds the namespaces in the dump: registered ones as Runs (a
// Key's TTL is its expiry, -1 for none), the others as Strays.
func (s *MemcachedServer) Survey() (*Survey, error) {
	items, err := s.dumps()
	if err != nil {
		return nil, err
	}
	byNS := map[string][]Key{}
	for _, k := range items {
		if m := nsKey.FindStringSubmatch(k.Name); m != nil {
			byNS[m[1]] = append(byNS[m[1]], k)
		}
	}
	out := &Survey{}
	for ns, keys := range byNS {
		prefix := "locklab:" + ns + ":"
		present := map[string]bool{}
		for _, k := range keys {
			present[k.Name] = true
		}
		r := &Run{ID: ns, Keys: keys}
		for _, k := range keys {
			id, ok := strings.CutPrefix(k.Name, prefix+store.OwnerName+":")
			if !ok {
				continue
			}
			it, err := s.Client.Get(k.Name)
			if err != nil {
				continue // expired since the dump, or unreadable: not proof
			}
			o, ok := store.ParseOwner(string(it.Value))
			if !ok || o.NS != ns || o.ID != id {
				continue
			}
			st := OwnerState{Owner: o, Quiet: -1}
			if k.TTL > 0 && k.TTL <= store.OwnerTTL {
				st.Quiet = store.OwnerTTL - k.TTL
			}
			_, gerr := s.Client.Get(prefix + store.MarkerName + ":" + o.ID)
			st.Alive, st.Why = o.Judge(gerr == nil)
			r.Owners = append(r.Owners, st)
		}
		if len(r.Owners) == 0 {
			out.Strays = append(out.Strays, Stray{NS: ns, Keys: len(keys)})
			continue
		}
		judge(r, prefix)
		sort.Slice(r.Keys, func(i, j int) bool { return r.Keys[i].Name < r.Keys[j].Name })
		out.Runs = append(out.Runs, r)
	}
	sort.Slice(out.Runs, func(i, j int) bool { return out.Runs[i].ID < out.Runs[j].ID })
	sort.Slice(out.Strays, func(i, j int) bool { return out.Strays[i].NS < out.Strays[j].NS })
	return out, nil
}

// Delete deletes the listed items of namespaces whose owners are all dead
// (after reading their heartbeats again), and the stale registrations of
// live ones; it returns how many items the server really deleted.
func (s *MemcachedServer) Delete(runs []*Run) (int, error) {
	deleted := 0
	for _, r := range runs {
		keys := r.Stale
		if !r.Alive {
			keys = r.Keys
			for _, o := range r.Owners {
				if _, err := s.Client.Get("locklab:" + r.ID + ":" + store.MarkerName + ":" + o.ID); err == nil {
					if alive, _ := o.Judge(true); alive {
						keys = nil // back: left alone
					}
				}
			}
		}
		for _, k := range keys {
			err := s.Client.Delete(k.Name)
			switch {
			case err == nil:
				deleted++
			case !errors.Is(err, memcache.ErrCacheMiss):
				return deleted, &store.ServerError{Kind: "memcached", Addr: s.Addr, Err: errors.New(firstLine(err.Error()))}
			}
		}
	}
	return deleted, nil
}

// dumps are three metadumps at 100 ms intervals, joined: the crawler
// misses items that memcached moves between its LRUs during the crawl (a
// fetched one), but not the same item each time.
func (s *MemcachedServer) dumps() ([]Key, error) {
	seen := map[string]int{}
	var all []Key
	for i := range 3 {
		if i > 0 {
			time.Sleep(100 * time.Millisecond)
		}
		keys, err := s.dump()
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			if j, ok := seen[k.Name]; ok {
				all[j] = k // the latest expiry
				continue
			}
			if len(all) < maxDumpKeys {
				seen[k.Name] = len(all)
				all = append(all, k)
			}
		}
	}
	return all, nil
}

// dump reads the crawler's metadump: locklab's keys with their expiries,
// as TTLs by the server's clock.
func (s *MemcachedServer) dump() ([]Key, error) {
	fail := func(err error) error {
		return &store.ServerError{Kind: "memcached", Addr: s.Addr, Err: errors.New(firstLine(err.Error()))}
	}
	conn, err := net.DialTimeout("tcp", s.Addr, 2*time.Second)
	if err != nil {
		return nil, fail(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	r := bufio.NewReaderSize(conn, 64<<10)
	now, err := serverTime(conn, r)
	if err != nil {
		return nil, fail(err)
	}
	if _, err := fmt.Fprint(conn, "lru_crawler metadump all\r\n"); err != nil {
		return nil, fail(err)
	}
	var keys []Key
	for {
		line, err := r.ReadSlice('\n')
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return nil, fail(err)
		}
		l := strings.TrimRight(string(line), "\r\n")
		switch {
		case l == "END":
			return keys, nil
		case strings.HasPrefix(l, "ERROR"), strings.HasPrefix(l, "CLIENT_ERROR"), strings.HasPrefix(l, "BUSY"):
			return nil, fail(fmt.Errorf("it does not list its keys (lru_crawler metadump: %s); a run's items expire by themselves", l))
		}
		k, ok := dumpLine(l, now)
		if ok && len(keys) < maxDumpKeys {
			keys = append(keys, k)
		}
	}
}

// dumpLine reads "key=<escaped> exp=<unix or -1> …" of a locklab key.
func dumpLine(l string, now int64) (Key, bool) {
	var k Key
	exp := int64(-2)
	for _, f := range strings.Fields(l) {
		switch name, v, _ := strings.Cut(f, "="); name {
		case "key":
			n, err := url.QueryUnescape(v)
			if err != nil || !strings.HasPrefix(n, "locklab:") {
				return k, false
			}
			k.Name = n
		case "exp":
			exp, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	switch {
	case k.Name == "" || exp == -2:
		return k, false
	case exp < 0:
		k.TTL = -1
	default:
		k.TTL = time.Duration(max(exp-now, 0)) * time.Second
	}
	k.Type = "item"
	return k, true
}

// serverTime reads the server's clock (stats: time), which expiries use.
func serverTime(conn net.Conn, r *bufio.Reader) (int64, error) {
	if _, err := fmt.Fprint(conn, "stats\r\n"); err != nil {
		return 0, err
	}
	var now int64
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return 0, err
		}
		l := strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(l, "STAT time "); ok {
			now, _ = strconv.ParseInt(v, 10, 64)
		}
		if l == "END" {
			return now, nil
		}
	}
}

// Package spawn starts the real Redis topologies a run asks for with
// --topology — one server, a primary and its replica, Sentinel, Redlock's
// five nodes — as child processes on free loopback ports, each in a
// directory of its own; and faults them for real (SIGSTOP, SIGKILL, a
// restart without persistence, a failover). What a killed locklab left is
// found by its owner file and stopped by locklab clean.
package spawn

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The topologies locklab can spawn (Config.Topology).
const (
	TopoSingle   = "single"
	TopoReplica  = "replica"
	TopoSentinel = "sentinel"
	TopoRedlock  = "redlock"
)

// Topologies are the topologies' names and what each starts.
var Topologies = [][2]string{
	{TopoSingle, "one redis-server"},
	{TopoReplica, "a primary and an asynchronous replica (REPLICAOF)"},
	{TopoSentinel, "a primary, an asynchronous replica and three Sentinels; clients find the primary through Sentinel"},
	{TopoRedlock, "five independent redis-servers (Redlock's nodes)"},
}

// TopologyNames is "single, replica, sentinel, redlock".
func TopologyNames() string {
	names := make([]string, len(Topologies))
	for i, t := range Topologies {
		names[i] = t[0]
	}
	return strings.Join(names, ", ")
}

// ValidTopology reports whether name is a topology.
func ValidTopology(name string) bool {
	for _, t := range Topologies {
		if t[0] == name {
			return true
		}
	}
	return false
}

// TopologyNodes is how many nodes (independent primaries) a topology gives
// a run.
func TopologyNodes(name string) int {
	if name == TopoRedlock {
		return 5
	}
	return 1
}

// topologyWait bounds starting a topology: what started is stopped when it
// is not up by then.
var topologyWait = 10 * time.Second

// sentinelMaster is the name the Sentinels monitor the primary under.
const sentinelMaster = "locklab"

// MissingError says a server binary is not installed.
type MissingError struct{ Bin string }

func (e *MissingError) Error() string {
	return fmt.Sprintf("%s is not on PATH: --topology needs it (Debian: apt-get install %s)", e.Bin, e.Bin)
}

// Topology is the servers a run spawned: their processes, which is each
// node's primary now, and the links its replicas replicate through.
type Topology struct {
	name      string
	dir       string
	lag       time.Duration
	mu        sync.Mutex
	procs     []*proc // every process, in start order
	primary   []*proc // by node: its primary now
	replica   []*proc // by node: its replica, or nil
	links     []*link // by node: its replica's link, or nil
	sentinels []*proc
}

// ownerFile, in a topology's directory, names the locklab process that
// made it: locklab clean stops what a dead one left, and nothing else.
const ownerFile = "locklab-owner"

// topoDirPrefix begins the name of every topology's directory.
const topoDirPrefix = "locklab-topo-"

// Start spawns the named topology; replicas trail their primary
// by lag (0: as fast as loopback goes).
func Start(ctx context.Context, name string, lag time.Duration) (*Topology, error) {
	if !ValidTopology(name) {
		return nil, fmt.Errorf("unknown topology %q: want one of %s", name, TopologyNames())
	}
	srv, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, &MissingError{"redis-server"}
	}
	sen := ""
	if name == TopoSentinel {
		if sen, err = exec.LookPath("redis-sentinel"); err != nil {
			return nil, &MissingError{"redis-sentinel"}
		}
	}
	dir, err := os.MkdirTemp("", topoDirPrefix)
	if err != nil {
		return nil, fmt.Errorf("store: topology directory: %w", err)
	}
	t := &Topology{name: name, dir: dir, lag: lag}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(fmt.Sprintf("locklab %d\n", os.Getpid())), 0o600); err != nil {
		t.Stop()
		return nil, fmt.Errorf("store: topology directory: %w", err)
	}
	// Sentinels find each other by the hello each publishes every 2 s
	// through the primary and the replica: on a busy machine that took
	// longer than a topology of servers alone is given.
	wait := topologyWait
	if name == TopoSentinel {
		wait *= 2
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if err := t.up(wctx, srv, sen); err != nil {
		t.Stop()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("topology %s: interrupted while starting, stopped what started", name)
		}
		if wctx.Err() != nil {
			return nil, fmt.Errorf("topology %s did not come up in %v, stopped what started: %w", name, wait, err)
		}
		return nil, fmt.Errorf("topology %s: %w", name, err)
	}
	return t, nil
}

// up starts the topology's servers and waits until they work together.
func (t *Topology) up(ctx context.Context, srv, sen string) error {
	for i := range TopologyNodes(t.name) {
		name := "primary"
		if t.name == TopoRedlock {
			name = "node " + strconv.Itoa(i)
		}
		p, err := t.spawn(ctx, name, "primary", srv, redisArgs(), nil)
		if err != nil {
			return err
		}
		t.primary = append(t.primary, p)
		t.replica = append(t.replica, nil)
		t.links = append(t.links, nil)
	}
	if t.name == TopoReplica || t.name == TopoSentinel {
		if err := t.addReplica(ctx, 0, srv, t.lag); err != nil {
			return err
		}
	}
	if t.name == TopoSentinel {
		for i := range 3 {
			p, err := t.spawn(ctx, fmt.Sprintf("sentinel %d", i+1), "sentinel", sen, sentinelArgs, t.sentinelConf)
			if err != nil {
				return err
			}
			t.sentinels = append(t.sentinels, p)
		}
		return t.sentinelsAgree(ctx)
	}
	return nil
}

// spawn starts one process in a directory of its own.
func (t *Topology) spawn(ctx context.Context, name, role, bin string, args func(int) []string, conf func(int) string) (*proc, error) {
	dir, err := os.MkdirTemp(t.dir, strings.ReplaceAll(name, " ", "")+"-")
	if err != nil {
		return nil, err
	}
	p := &proc{Name: name, Role: role, bin: bin, dir: dir, args: args, conf: conf}
	t.mu.Lock()
	t.procs = append(t.procs, p)
	t.mu.Unlock()
	return p, p.start(ctx, 0)
}

// addReplica gives node i a replica that replicates through a link
// trailing by lag once it has synced (the handshake goes at full speed).
func (t *Topology) addReplica(ctx context.Context, i int, srv string, lag time.Duration) error {
	l, err := newLink(t.primary[i].Addr(), 0)
	if err != nil {
		return err
	}
	name := "replica"
	if t.name == TopoRedlock {
		name = fmt.Sprintf("node %d's replica", i)
	}
	r, err := t.spawn(ctx, name, "replica", srv, redisArgs("--replicaof", "127.0.0.1", strconv.Itoa(l.Addr().Port)), nil)
	t.mu.Lock()
	t.links[i] = l
	t.replica[i] = r
	t.mu.Unlock()
	if err != nil {
		return err
	}
	c := clientOf(r)
	defer c.Close()
	for info(ctx, c, "replication", "master_link_status") != "up" {
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s on %s did not sync with its primary", r.Name, r.Addr())
		case <-time.After(20 * time.Millisecond):
		}
	}
	l.SetLag(lag)
	return nil
}

// sentinelConf is a Sentinel's configuration on port (Sentinel rewrites
// its file, so each has its own).
func (t *Topology) sentinelConf(port int) string {
	host, pport, _ := strings.Cut(t.primary[0].Addr(), ":")
	return fmt.Sprintf("port %d\nbind 127.0.0.1\ndaemonize no\nlogfile \"\"\ndir .\n"+
		"sentinel monitor %s %s %s 2\nsentinel down-after-milliseconds %s 1000\n"+
		"sentinel failover-timeout %s 600000\n", port, sentinelMaster, host, pport, sentinelMaster, sentinelMaster)
}

// sentinelsAgree waits until every Sentinel knows the replica and the
// other Sentinels: then a crashed primary is failed over by a quorum.
func (t *Topology) sentinelsAgree(ctx context.Context) error {
	for _, s := range t.sentinels {
		c := clientOf(s)
		err := func() error {
			defer c.Close()
			for {
				r, _ := c.Do(ctx, "SENTINEL", "REPLICAS", sentinelMaster).Slice()
				o, _ := c.Do(ctx, "SENTINEL", "SENTINELS", sentinelMaster).Slice()
				if len(r) >= 1 && len(o) >= len(t.sentinels)-1 {
					return nil
				}
				select {
				case <-ctx.Done():
					return fmt.Errorf("%s on %s did not find the replica and the other Sentinels (it knew %d replica(s) and %d of the %d other Sentinels)",
						s.Name, s.Addr(), len(r), len(o), len(t.sentinels)-1)
				case <-time.After(50 * time.Millisecond):
				}
			}
		}()
		if err != nil {
			return err
		}
	}
	return nil
}

// sentinelArgs are a Sentinel's arguments: its configuration file.
func sentinelArgs(int) []string { return []string{"sentinel.conf"} }

// Stop kills every process, cuts the links and removes the directory.
func (t *Topology) Stop() {
	t.mu.Lock()
	procs, links := t.procs, t.links
	t.mu.Unlock()
	for _, l := range links {
		if l != nil {
			l.Cut()
		}
	}
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Add(1)
		go func() { defer wg.Done(); p.kill() }()
	}
	wg.Wait()
	_ = os.RemoveAll(t.dir)
}

// URLs are the nodes' first primaries as URLs.
func (t *Topology) URLs() []string {
	out := make([]string, len(t.primary))
	for i, p := range t.primary {
		out[i] = "redis://" + p.Addr()
	}
	return out
}

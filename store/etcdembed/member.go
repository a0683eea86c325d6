package etcdembed

import (
	"context"
	"errors"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"go.etcd.io/bbolt"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/client/pkg/v3/types"
	"go.etcd.io/etcd/server/v3/config"
	"go.etcd.io/etcd/server/v3/etcdserver"
	"go.etcd.io/etcd/server/v3/etcdserver/api/etcdhttp"
	"go.etcd.io/etcd/server/v3/etcdserver/api/membership"
	"go.etcd.io/etcd/server/v3/etcdserver/api/rafthttp"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3rpc"
	"go.etcd.io/etcd/server/v3/features"
	"go.uber.org/zap"
	"golang.org/x/crypto/bcrypt"
	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"
)

// A member is one etcd server with a new data directory and plain HTTP on
// loopback: its raft peers on one listener, its gRPC clients on another,
// and no tracing, metrics, gateway or debug endpoints. Starting etcdserver
// directly, not through etcd's embed package, leaves out of the build
// what a run never uses (the JSON gateway, OpenTelemetry's exporter,
// pprof, the websocket proxy): 58 packages.
type member struct {
	Server  *etcdserver.EtcdServer
	peerL   net.Listener
	clientL net.Listener
	peer    *http.Server
	errc    chan error // a listener's failure while the member serves

	mu   sync.Mutex
	grpc *grpc.Server // nil until the server is ready
	once sync.Once
	done chan struct{} // closed by close
}

// memberConfig is etcd's own defaults for a new member (embed.NewConfig),
// with the lab's timing and storage. etcd grants no lease shorter than
// 1.5 election timeouts, rounded up to whole seconds: with ticks of 50 ms
// and an election after 10 of them (500 ms), a lease of 1s lasts 1s. The
// lab's data lives as long as a run: no fsync, a 256 MiB backend.
func memberConfig(name, dir string, client, peer url.URL, initial types.URLsMap, token string) config.ServerConfig {
	lg := zap.NewNop()
	return config.ServerConfig{
		Name:                        name,
		ClientURLs:                  types.URLs{client},
		PeerURLs:                    types.URLs{peer},
		DataDir:                     dir,
		SnapshotCount:               etcdserver.DefaultSnapshotCount,
		SnapshotCatchUpEntries:      etcdserver.DefaultSnapshotCatchUpEntries,
		MaxSnapFiles:                5,
		MaxWALFiles:                 5,
		InitialPeerURLsMap:          initial,
		InitialClusterToken:         token,
		NewCluster:                  true,
		TickMs:                      50,
		ElectionTicks:               10,
		InitialElectionTickAdvance:  true,
		AutoCompactionMode:          "periodic",
		QuotaBackendBytes:           256 << 20,
		BackendFreelistType:         bbolt.FreelistMapType,
		MaxTxnOps:                   128,
		MaxRequestBytes:             1.5 * 1024 * 1024,
		MaxConcurrentStreams:        math.MaxUint32,
		StrictReconfigCheck:         true,
		AuthToken:                   "simple",
		BcryptCost:                  uint(bcrypt.DefaultCost),
		TokenTTL:                    300,
		CORS:                        map[string]struct{}{"*": {}},
		HostWhitelist:               map[string]struct{}{"*": {}},
		CompactHashCheckTime:        time.Minute,
		PreVote:                     true,
		Logger:                      lg,
		UnsafeNoFsync:               true,
		WarningApplyDuration:        100 * time.Millisecond,
		WarningUnaryRequestDuration: 300 * time.Millisecond,
		DowngradeCheckTime:          5 * time.Second,
		MaxLearners:                 membership.DefaultMaxLearners,
		V2Deprecation:               config.V2DeprDefault,
		ServerFeatureGate:           features.NewDefaultServerFeatureGate(name, lg),
		Metrics:                     "basic",
	}
}

// startMember binds the member's two ports, starts its server and serves
// its peers at once (a member joining later asks them whether it is
// already in the cluster), and its clients once it is ready.
func startMember(cfg config.ServerConfig) (*member, error) {
	peerL, err := transport.NewListenerWithOpts(cfg.PeerURLs[0].Host, "http",
		transport.WithTimeout(rafthttp.ConnReadTimeout, rafthttp.ConnWriteTimeout))
	if err != nil {
		return nil, err
	}
	clientL, err := net.Listen("tcp", cfg.ClientURLs[0].Host)
	if err != nil {
		peerL.Close()
		return nil, err
	}
	s, err := etcdserver.NewServer(cfg)
	if err != nil {
		peerL.Close()
		clientL.Close()
		return nil, err
	}
	m := &member{Server: s, peerL: peerL, clientL: clientL, errc: make(chan error, 2), done: make(chan struct{})}
	s.Start()
	m.peer = &http.Server{
		Handler:     etcdhttp.NewPeerHandler(cfg.Logger, s),
		ReadTimeout: 5 * time.Minute,
		ErrorLog:    log.New(io.Discard, "", 0),
	}
	go m.serve(func() error { return m.peer.Serve(peerL) })
	go m.serveClients()
	return m, nil
}

// serveClients serves etcd's gRPC API, with embed's keepalive settings,
// once the server is ready (as embed does).
func (m *member) serveClients() {
	select {
	case <-m.Server.ReadyNotify():
	case <-m.Server.StoppingNotify():
		return
	case <-m.done:
		return
	}
	gs := v3rpc.Server(m.Server, nil, nil,
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 5 * time.Second}),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: 2 * time.Hour, Timeout: 20 * time.Second}))
	m.mu.Lock()
	select {
	case <-m.done:
		m.mu.Unlock()
		gs.Stop()
		return
	default:
	}
	m.grpc = gs
	m.mu.Unlock()
	m.serve(func() error { return gs.Serve(m.clientL) })
}

// serve runs one of the member's servers and reports its failure, unless
// the member is being closed.
func (m *member) serve(run func() error) {
	err := run()
	select {
	case <-m.done:
	default:
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			select {
			case m.errc <- err:
			default:
			}
		}
	}
}

// Err reports a listener that failed while the member served.
func (m *member) Err() <-chan error { return m.errc }

// Close stops the member as embed's Close does: its clients' calls get
// the request timeout to finish, then the server stops (handing on its
// leadership, unless HardStop came first), then its peers' connections
// get a second to close before they are cut.
func (m *member) Close() {
	m.once.Do(func() {
		m.mu.Lock()
		close(m.done)
		gs := m.grpc
		m.mu.Unlock()
		if gs != nil {
			stopGRPC(gs, m.Server.Cfg.ReqTimeout())
		}
		m.clientL.Close()
		m.Server.Stop()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if m.peer.Shutdown(ctx) != nil {
			m.peer.Close() // a peer's stream still open after the second
		}
		cancel()
		m.peerL.Close()
	})
}

// stopGRPC lets the calls under way finish within d, then cuts the rest
// (watch streams never finish on their own).
func stopGRPC(gs *grpc.Server, d time.Duration) {
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		gs.GracefulStop()
	}()
	select {
	case <-stopped:
	case <-time.After(d):
		gs.Stop()
		<-stopped
	}
}

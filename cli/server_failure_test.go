package cli

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store/storetest"
)

// A server that refuses the run's commands fails the run: exit 1 in the
// server's own words, never a verdict about locking.
func TestServerRefusalsExitOneInTheServersWords(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts redis-servers")
	}
	type config struct {
		name  string
		args  []string
		url   func(t *testing.T, s *storetest.Server) string
		words string // the server's words; alt, what may stand for them
		alt   []string
	}
	plain := func(t *testing.T, s *storetest.Server) string { return s.URL }
	configs := []config{
		{"maxmemory 1", []string{"--maxmemory", "1", "--maxmemory-policy", "noeviction"}, plain, "OOM command not allowed", nil},
		{"read-only user", nil, func(t *testing.T, s *storetest.Server) string {
			c := s.Client(t)
			if err := c.Do(context.Background(), "ACL", "SETUSER", "reader", "on", ">secret", "~*", "&*", "-@all", "+@read", "+@connection", "+ping", "+info").Err(); err != nil {
				t.Fatal(err)
			}
			return "redis://reader:secret@" + s.Addr + "/0"
		}, "NOPERM", nil},
		{"maxclients 5", []string{"--maxclients", "5"}, func(t *testing.T, s *storetest.Server) string {
			for range 5 { // every client slot is taken
				conn, err := net.Dial("tcp", s.Addr)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := conn.Write([]byte("PING\r\n")); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { conn.Close() })
			}
			return s.URL
			// The server says why and hangs up at once: whether its words
			// reach the client first is the connection's race to win; when
			// they do not, locklab's hint for a hang-up names maxclients. On
			// a loaded machine the reply may not come in time at all: the
			// run then says what was left unanswered.
		}, "max number of clients reached", []string{"if it is full, see its maxclients", "operation(s) unanswered"}},
	}
	for _, cfg := range configs {
		// The runs of one configuration share its servers: each is refused
		// at its first command, which changes nothing on them.
		urls := make([]string, 5)
		for i := range urls {
			urls[i] = cfg.url(t, storetest.Start(t, cfg.args...))
		}
		for _, sc := range scenario.Catalogue() {
			t.Run(cfg.name+"/"+sc.Name, func(t *testing.T) {
				t.Parallel()
				nodes := 1
				if sc.Name == "redlock" {
					nodes = 5
				}
				args := []string{"run", sc.Name, "-q", "--seed", "1"}
				for _, u := range urls[:nodes] {
					args = append(args, "--redis", u)
				}
				code, stdout, stderr := cli(t, args...)
				named := strings.Contains(stderr, cfg.words) || slices.ContainsFunc(cfg.alt, func(a string) bool { return strings.Contains(stderr, a) })
				if code != 1 || !named || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
					t.Errorf("%s: exit %d, stderr %q; want exit 1 naming %q", sc.Name, code, stderr, cfg.words)
				}
				if strings.Contains(stdout, "CORRECT") {
					t.Errorf("%s: a failed server's run is CORRECT:\n%s", sc.Name, stdout)
				}
			})
		}
	}
}

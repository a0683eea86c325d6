package simredis

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/alicebob/miniredis/v2/server"
)

// resp is a command as a client sends it.
func resp(args ...string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.Bytes()
}

// serverSide answers commands as the embedded server alone does: each
// script in a state of its own.
type serverSide struct {
	m    *miniredis.Miniredis
	peer *server.Peer
	out  *bytes.Buffer
}

func newServerSide(m *miniredis.Miniredis) *serverSide {
	s := &serverSide{m: m, out: &bytes.Buffer{}}
	s.peer = server.NewPeer(bufio.NewWriter(s.out))
	return s
}

func (s *serverSide) do(args ...string) string {
	s.m.Server().Dispatch(s.peer, args)
	s.peer.Flush()
	r := s.out.String()
	s.out.Reset()
	return r
}

// runnerSide answers them through a simulated connection, whose scripts
// the runner runs in states it keeps.
type runnerSide struct{ c *simConn }

func (s runnerSide) do(args ...string) string {
	if _, err := s.c.Write(resp(args...)); err != nil {
		return "write: " + err.Error()
	}
	var b bytes.Buffer
	_, _ = b.ReadFrom(s.c)
	return b.String()
}

// The runner's scripts answer byte for byte as the server's own: results
// of every kind, errors of every kind, the script cache, and nothing kept
// from one script to the next but what Redis keeps.
func TestKeptLuaStatesAnswerAsTheServer(t *testing.T) {
	ms, mr := miniredis.RunT(t), miniredis.RunT(t)
	srv := newServerSide(ms)
	run := runnerSide{newSimConn(mr.Server(), NewLua(mr))}
	release := "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"
	cmds := [][]string{
		{"SET", "k", "tok"},
		{"EVAL", release, "1", "k", "other"},
		{"EVAL", release, "1", "k", "tok"},
		{"EVALSHA", sha1Hex(release), "1", "k", "tok"},
		{"SCRIPT", "EXISTS", sha1Hex(release), sha1Hex("return 1")},
		{"EVALSHA", sha1Hex("return 1"), "0"},
		{"EVAL", "return {1, 'two', {3}, false, nil, 5}", "0"},
		{"EVAL", "return redis.status_reply('FINE')", "0"},
		{"EVAL", "return redis.error_reply('MINE went wrong')", "0"},
		{"EVAL", "return redis.error_reply('plain')", "0"},
		{"EVAL", "return 3.7", "0"},
		{"EVAL", "return true", "0"},
		{"EVAL", "return KEYS[1] .. ARGV[1] .. #KEYS .. #ARGV", "1", "a", "b"},
		{"EVAL", "return #KEYS + #ARGV", "0"},
		{"EVAL", "x = 1", "0"},
		{"EVAL", "return y", "0"},
		{"EVAL", "return redis.call('nosuch')", "0"},
		{"EVAL", "return redis.pcall('nosuch')", "0"},
		{"EVAL", "return redis.call('multi')", "0"},
		{"EVAL", "return redis.pcall('incr', 'k2', 'extra')", "0"},
		{"EVAL", "return redis.call('lpush', 'l', 'a', 'b')", "0"},
		{"EVAL", "return redis.call('lrange', 'l', 0, -1)", "0"},
		{"EVAL", "return cjson.encode({a=1})", "0"},
		{"EVAL", "return redis.sha1hex('x')", "0"},
		{"EVAL", "return string.rep('ab', 3)", "0"},
		{"EVAL", "syntax error here", "0"},
		{"EVAL", "error('boom')", "0"},
		{"EVAL", "return 1", "x"},
		{"EVAL", "return 1", "5", "a"},
		{"EVAL", "return os.clock()", "0"},
		{"EVAL", "redis.setresp(3); return {1}", "0"},
		{"SCRIPT", "FLUSH"},
		{"EVALSHA", sha1Hex(release), "1", "k", "tok"},
		{"SCRIPT", "LOAD", "return ARGV[1]"},
		{"EVALSHA", sha1Hex("return ARGV[1]"), "0", "loaded"},
		{"MULTI"},
		{"EVAL", "return 7", "0"},
		{"EXEC"},
		{"GET", "k2"},
	}
	for _, c := range cmds {
		want, got := srv.do(c...), run.do(c...)
		if got != want {
			t.Errorf("%s: the runner answers %q, the server %q", strings.Join(c, " "), got, want)
		}
	}
	if run.c.lua.ctxErr != nil {
		t.Fatalf("the runner left every script to the server: %v", run.c.lua.ctxErr)
	}
	if len(run.c.lua.idle) == 0 {
		t.Error("no Lua state was kept for the next script")
	}
}

package simredis

import (
	"bufio"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/alicebob/miniredis/v2"
	luajson "github.com/alicebob/miniredis/v2/gopher-json"
	"github.com/alicebob/miniredis/v2/server"
	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// Lua runs a simulated node's scripts (EVAL, EVALSHA) in Lua states
// it keeps from one script to the next, as Redis keeps one Lua state for
// all of them. The embedded server builds a new state for every script,
// its libraries opened anew each time: with thousands of workers
// releasing their locks, that was most of what a simulated run cost.
//
// A script runs as the server would run it: the same libraries, globals
// and protection of globals, the same redis.* functions; its commands
// reach the server as a script's own (refused where a script may not
// send them, never blocking), under the server's lock, so the script is
// atomic. What the runner does not know — a script it has not seen
// loaded, a connection inside MULTI, in another database, subscribed —
// it leaves to the server.
type Lua struct {
	m *miniredis.Miniredis

	mu      sync.Mutex
	scripts map[string]string // sha1 → script, each known to the server too
	protos  map[string]*lua.FunctionProto
	idle    []*luaState
	nested  any    // the server's context of a script's own commands
	ctxSHA  string // the script it was taken from
	ctxErr  error  // why it could not be taken: every script goes to the server
	ctxDone bool
}

// luaState is a Lua state set up as the server sets one up, and the script
// it runs now: what redis.call needs to know.
type luaState struct {
	l      *lua.LState
	peer   *server.Peer // the connection the script's reply goes to
	sha    string
	nested any // the server's context for the script's commands
	ctxSHA string
}

// NewLua returns the script runner of the embedded server m.
func NewLua(m *miniredis.Miniredis) *Lua {
	return &Lua{m: m, scripts: map[string]string{}, protos: map[string]*lua.FunctionProto{}}
}

// Of reports whether r runs the scripts of server m.
func (r *Lua) Of(m *miniredis.Miniredis) bool { return r.m == m }

// ctxCommand is what the runner asks the server to run from a script of
// its own, once, to be handed the context the server gives a script's
// commands.
const ctxCommand = "LOCKLAB.SCRIPTCTX"

var ctxScript = "return redis.call('" + ctxCommand + "')"

// nestedCtx takes, once, the server's context for a script's commands.
func (r *Lua) nestedCtx() (any, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ctxDone {
		return r.nested, r.ctxErr
	}
	r.ctxDone = true
	// The handler runs within the dispatch below, on this goroutine,
	// which holds mu for it.
	_ = r.m.Server().Register(ctxCommand, func(c *server.Peer, _ string, _ []string) {
		r.nested = c.Ctx
		c.WriteOK()
	})
	reply := r.dispatch([]string{"EVAL", ctxScript, "0"})
	if r.nested == nil {
		r.ctxErr = fmt.Errorf("store: the embedded server's scripts cannot be run apart: %s", strings.TrimSpace(reply))
	}
	r.ctxSHA = sha1Hex(ctxScript)
	return r.nested, r.ctxErr
}

// dispatch runs a command on the server as a client of its own would, and
// returns its raw reply.
func (r *Lua) dispatch(args []string) string {
	var b strings.Builder
	w := bufio.NewWriter(&b)
	r.m.Server().Dispatch(server.NewPeer(w), args)
	_ = w.Flush()
	return b.String()
}

// run runs EVAL or EVALSHA (cmd, upper case) for c and writes its reply;
// it reports false, having done nothing, when the server should.
func (r *Lua) run(c *server.Peer, cmd string, args []string) bool {
	if len(args) < 2 {
		return false
	}
	n, err := strconv.Atoi(args[1])
	if err != nil || n < 0 || n > len(args)-2 {
		return false // the server says what is wrong with it
	}
	var sha, script string
	r.mu.Lock()
	if cmd == "EVAL" {
		script, sha = args[0], sha1Hex(args[0])
	} else {
		sha = args[0]
		script = r.scripts[sha]
	}
	_, known := r.scripts[sha]
	r.mu.Unlock()
	if script == "" && cmd != "EVAL" {
		return false // a script the runner has not seen: the server knows
	}
	nested, err := r.nestedCtx()
	if err != nil || nested == nil {
		return false
	}
	st := r.state()
	ok := r.exec(st, c, nested, sha, script, args[2:2+n], args[2+n:])
	if ok && !known {
		// EVAL caches what ran: on the server too, so that SCRIPT
		// EXISTS and every other client agree.
		r.dispatch([]string{"SCRIPT", "LOAD", script})
		r.mu.Lock()
		r.scripts[sha] = script
		r.mu.Unlock()
	}
	return true
}

// exec runs script in st as the server would, holding its lock, and
// writes the reply to c. A state whose script failed is not kept: what
// the failure left in it is unknown.
func (r *Lua) exec(st *luaState, c *server.Peer, nested any, sha, script string, keys, argv []string) bool {
	l := st.l
	l.G.Global.RawSetString("KEYS", stringsTable(l, keys))
	l.G.Global.RawSetString("ARGV", stringsTable(l, argv))
	st.peer, st.sha = c, sha
	r.m.Lock()
	defer r.m.Unlock()
	st.nested, st.ctxSHA = nested, r.ctxSHA
	oldresp := c.Resp3
	if err := r.doScript(l, script); err != nil {
		c.WriteError(err.Error())
		// As the server's dispatch does after a command: a RESP
		// version the script chose before failing stays chosen.
		if c.SwitchResp3 != nil {
			c.Resp3 = *c.SwitchResp3
			c.SwitchResp3 = nil
		}
		l.Close()
		return false
	}
	luaToRedis(l, c, l.Get(1))
	c.Resp3 = oldresp
	c.SwitchResp3 = nil
	l.SetTop(0)
	st.peer = nil
	r.mu.Lock()
	r.idle = append(r.idle, st)
	r.mu.Unlock()
	return true
}

// state is an idle Lua state, or a new one.
func (r *Lua) state() *luaState {
	r.mu.Lock()
	if n := len(r.idle); n > 0 {
		st := r.idle[n-1]
		r.idle = r.idle[:n-1]
		r.mu.Unlock()
		return st
	}
	r.mu.Unlock()
	return r.newState()
}

// newState sets up a Lua state as the server does for each script.
func (r *Lua) newState() *luaState {
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	for _, pair := range []struct {
		n string
		f lua.LGFunction
	}{
		{lua.LoadLibName, lua.OpenPackage},
		{lua.BaseLibName, lua.OpenBase},
		{lua.CoroutineLibName, lua.OpenCoroutine},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
		{lua.DebugLibName, lua.OpenDebug},
	} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(pair.f), NRet: 0, Protect: true}, lua.LString(pair.n)); err != nil {
			panic(err)
		}
	}
	luajson.Preload(l)
	requireGlobal(l, "cjson", "json")
	// KEYS and ARGV exist before the globals are protected, so that each
	// script's own can be set.
	l.SetGlobal("KEYS", l.NewTable())
	l.SetGlobal("ARGV", l.NewTable())
	st := &luaState{l: l}
	mod := l.CreateTable(0, 16)
	for name, fn := range st.redisFuncs(r) {
		mod.RawSetString(name, l.NewFunction(fn))
	}
	for k, v := range map[string]lua.LValue{"LOG_DEBUG": lua.LNumber(0), "LOG_VERBOSE": lua.LNumber(1),
		"LOG_NOTICE": lua.LNumber(2), "LOG_WARNING": lua.LNumber(3)} {
		mod.RawSetString(k, v)
	}
	for _, name := range []string{"redis", "server"} {
		l.SetGlobal(name, mod)
	}
	l.RegisterModule("os", map[string]lua.LGFunction{
		"clock": func(l *lua.LState) int { l.Push(lua.LNumber(42)); return 1 },
	})
	_ = r.doScript(l, protectGlobals)
	l.SetTop(0)
	return st
}

// doScript compiles script (once) and runs it; an error reads as the
// server's.
func (r *Lua) doScript(l *lua.LState, script string) error {
	r.mu.Lock()
	proto, ok := r.protos[script]
	r.mu.Unlock()
	if !ok {
		chunk, err := parse.Parse(strings.NewReader(script), "<string>")
		if err == nil {
			proto, err = lua.Compile(chunk, "")
		}
		if err != nil {
			return fmt.Errorf("ERR Error compiling script (new function): %s", err.Error())
		}
		r.mu.Lock()
		r.protos[script] = proto
		r.mu.Unlock()
	}
	l.Push(l.NewFunctionFromProto(proto))
	if err := l.PCall(0, lua.MultRet, nil); err != nil {
		return fmt.Errorf("ERR Error compiling script (new function): %s", err.Error())
	}
	return nil
}

// seen notes a command that passed to the server: a script it loaded
// becomes known, a flush forgets them all.
func (r *Lua) seen(args []string) {
	if len(args) < 2 || !strings.EqualFold(args[0], "SCRIPT") {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case strings.EqualFold(args[1], "FLUSH"):
		clear(r.scripts)
	case strings.EqualFold(args[1], "LOAD") && len(args) == 3:
		if _, err := parse.Parse(strings.NewReader(args[2]), "user_script"); err == nil {
			r.scripts[sha1Hex(args[2])] = args[2]
		}
	}
}

func stringsTable(l *lua.LState, ss []string) *lua.LTable {
	t := l.CreateTable(len(ss), 0)
	for i, s := range ss {
		l.RawSet(t, lua.LNumber(i+1), lua.LString(s))
	}
	return t
}

func sha1Hex(s string) string {
	h := sha1.New()
	_, _ = io.WriteString(h, s)
	return hex.EncodeToString(h.Sum(nil))
}

// requireGlobal loads module modName as global id.
func requireGlobal(l *lua.LState, id, modName string) {
	if err := l.CallByParam(lua.P{Fn: l.GetGlobal("require"), NRet: 1, Protect: true}, lua.LString(modName)); err != nil {
		panic(err)
	}
	mod := l.Get(-1)
	l.Pop(1)
	l.SetGlobal(id, mod)
}

// protectGlobals is the server's: a script may create no global, nor read
// one that does not exist.
const protectGlobals = `
local dbg=debug
local mt = {}
setmetatable(_G, mt)
mt.__newindex = function (t, n, v)
  if dbg.getinfo(2) then
    local w = dbg.getinfo(2, "S").what
    if w ~= "C" then
      error("Script attempted to create global variable '"..tostring(n).."'", 2)
    end
  end
  rawset(t, n, v)
end
mt.__index = function (t, n)
  if dbg.getinfo(2) and dbg.getinfo(2, "S").what ~= "C" then
    error("Script attempted to access nonexistent global variable '"..tostring(n).."'", 2)
  end
  return rawget(t, n)
end
debug = nil

`

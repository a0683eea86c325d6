package simredis

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"

	"github.com/alicebob/miniredis/v2/server"
	lua "github.com/yuin/gopher-lua"
)

// redisFuncs are the redis.* functions of a script run by the runner: the
// embedded server's own, bound to the script st runs now.
func (st *luaState) redisFuncs(r *Lua) map[string]lua.LGFunction {
	return map[string]lua.LGFunction{
		"call":  func(l *lua.LState) int { return st.call(r, l, true) },
		"pcall": func(l *lua.LState) int { return st.call(r, l, false) },
		"error_reply": func(l *lua.LState) int {
			msg, ok := l.Get(1).(lua.LString)
			if !ok {
				l.Error(lua.LString("wrong number or type of arguments"), 1)
				return 0
			}
			res := &lua.LTable{}
			parts := strings.SplitN(msg.String(), " ", 2)
			// '-' at the beginning is added as a part of an error reply
			if parts[0] != "" && parts[0][0] == '-' {
				parts[0] = parts[0][1:]
			}
			var final string
			if len(parts) == 2 {
				final = fmt.Sprintf("%s %s", parts[0], parts[1])
			} else {
				final = fmt.Sprintf("ERR %s", parts[0])
			}
			res.RawSetString("err", lua.LString(final))
			l.Push(res)
			return 1
		},
		"log": func(l *lua.LState) int {
			_, _ = l.CheckInt(1), l.CheckString(2)
			return 0
		},
		"status_reply": func(l *lua.LState) int {
			msg, ok := l.Get(1).(lua.LString)
			if !ok {
				l.Error(lua.LString("wrong number or type of arguments"), 1)
				return 0
			}
			l.Push(luaStatusReply(string(msg)))
			return 1
		},
		"sha1hex": func(l *lua.LState) int {
			if l.GetTop() != 1 {
				l.Error(lua.LString("wrong number of arguments"), 1)
				return 0
			}
			l.Push(lua.LString(sha1Hex(lua.LVAsString(l.Get(1)))))
			return 1
		},
		"replicate_commands": func(l *lua.LState) int {
			l.Push(lua.LTrue)
			return 1
		},
		"set_repl": func(l *lua.LState) int {
			if l.GetTop() != 1 {
				l.Error(lua.LString("wrong number of arguments"), 1)
				return 0
			}
			return 1
		},
		"setresp": func(l *lua.LState) int {
			var toresp3 bool
			switch l.CheckInt(1) {
			case 2:
			case 3:
				toresp3 = true
			default:
				l.Error(lua.LString("RESP version must be 2 or 3"), 1)
				return 0
			}
			st.peer.SwitchResp3 = &toresp3
			return 0
		},
	}
}

// call is redis.call (failFast) and redis.pcall: one command of the
// script, sent to the server as a script's own.
func (st *luaState) call(r *Lua, l *lua.LState, failFast bool) int {
	top := l.GetTop()
	if top == 0 {
		l.Error(lua.LString(fmt.Sprintf("Please specify at least one argument for this redis lib call script: %s, &c.", st.sha)), 1)
		return 0
	}
	args := make([]string, 0, top)
	for i := 1; i <= top; i++ {
		switch a := l.Get(i).(type) {
		case lua.LNumber:
			args = append(args, a.String())
		case lua.LString:
			args = append(args, string(a))
		default:
			l.Error(lua.LString(fmt.Sprintf("Lua redis lib command arguments must be strings or integers script: %s, &c.", st.sha)), 1)
			return 0
		}
	}
	buf := &bytes.Buffer{}
	wr := bufio.NewWriter(buf)
	peer := server.NewPeer(wr)
	peer.Ctx = st.nested
	r.m.Server().Dispatch(peer, args)
	_ = wr.Flush()
	res, err := server.ParseReply(bufio.NewReader(buf))
	if err != nil {
		// The server names the script that sent a command it refuses:
		// the context was taken from another.
		err = fmt.Errorf("%s", strings.Replace(err.Error(), st.ctxSHA, st.sha, 1))
		if failFast {
			if strings.Contains(err.Error(), "ERR unknown command") {
				l.Error(lua.LString(fmt.Sprintf("Unknown Redis command called from script script: %s, &c.", st.sha)), 1)
			} else {
				l.Error(lua.LString(err.Error()), 1)
			}
			return 0
		}
		res := &lua.LTable{}
		if strings.Contains(err.Error(), "ERR unknown command") {
			res.RawSetString("err", lua.LString("ERR Unknown Redis command called from script"))
		} else {
			res.RawSetString("err", lua.LString(err.Error()))
		}
		l.Push(res)
		return 1
	}
	if e, ok := res.(error); ok {
		l.Error(lua.LString(e.Error()), 1)
		return 0
	}
	l.Push(replyToLua(l, res))
	return 1
}

// replyToLua is a command's reply as the script sees it.
func replyToLua(l *lua.LState, res any) lua.LValue {
	switch r := res.(type) {
	case nil:
		return lua.LFalse
	case int64:
		return lua.LNumber(r)
	case int:
		return lua.LNumber(r)
	case []uint8:
		return lua.LString(string(r))
	case []interface{}:
		return redisToLua(l, r)
	case server.Simple:
		return luaStatusReply(string(r))
	case string:
		return lua.LString(r)
	default:
		panic(fmt.Sprintf("type not handled (%T)", r))
	}
}

// luaToRedis writes a script's result as the server does.
func luaToRedis(l *lua.LState, c *server.Peer, value lua.LValue) {
	if value == nil {
		c.WriteNull()
		return
	}
	switch t := value.(type) {
	case *lua.LNilType:
		c.WriteNull()
	case lua.LBool:
		if lua.LVAsBool(value) {
			c.WriteInt(1)
		} else {
			c.WriteNull()
		}
	case lua.LNumber:
		c.WriteInt(int(lua.LVAsNumber(value)))
	case lua.LString:
		c.WriteBulk(lua.LVAsString(value))
	case *lua.LTable:
		// a table with an 'err' or 'ok' field is an error or a status
		if s := t.RawGetString("err"); s.Type() != lua.LTNil {
			c.WriteError(s.String())
			return
		}
		if s := t.RawGetString("ok"); s.Type() != lua.LTNil {
			c.WriteInline(s.String())
			return
		}
		result := []lua.LValue{}
		for j := 1; true; j++ {
			val := l.GetTable(value, lua.LNumber(j))
			if val == nil {
				result = append(result, val)
				continue
			}
			if val.Type() == lua.LTNil {
				break
			}
			result = append(result, val)
		}
		c.WriteLen(len(result))
		for _, r := range result {
			luaToRedis(l, c, r)
		}
	default:
		panic(fmt.Sprintf("wat: %T", t))
	}
}

func redisToLua(l *lua.LState, res []interface{}) *lua.LTable {
	rettb := l.NewTable()
	for _, e := range res {
		var v lua.LValue
		if e == nil {
			v = lua.LFalse
		} else {
			switch et := e.(type) {
			case int:
				v = lua.LNumber(et)
			case int64:
				v = lua.LNumber(et)
			case []uint8:
				v = lua.LString(string(et))
			case []interface{}:
				v = redisToLua(l, et)
			case string:
				v = lua.LString(et)
			default:
				v = lua.LString(e.(string))
			}
		}
		l.RawSet(rettb, lua.LNumber(rettb.Len()+1), v)
	}
	return rettb
}

func luaStatusReply(msg string) *lua.LTable {
	tab := &lua.LTable{}
	tab.RawSetString("ok", lua.LString(msg))
	return tab
}

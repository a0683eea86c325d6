package store

import (
	"fmt"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// A simulated run's scheduler mode shows what each worker is about to
// send: the command as the server will read it, its keys without the
// run's prefix, a script by the name it was given.

var (
	scriptMu    sync.RWMutex
	scriptNames = map[string]string{}
)

// NameScript gives a Lua script a name to be shown by instead of its hash.
func NameScript(s *redis.Script, name string) {
	scriptMu.Lock()
	defer scriptMu.Unlock()
	scriptNames[s.Hash()] = name
}

// scriptName is the name given to the script with hash sha, or "".
func scriptName(sha string) string {
	scriptMu.RLock()
	defer scriptMu.RUnlock()
	return scriptNames[sha]
}

// maxIntent bounds a described command: a lane has a few dozen columns.
const maxIntent = 60

// describe says what cmds will do on node n, in a few words: "SET
// stock=4", "DEL lock:A", "release(lock:A)"; the node is named when the
// run has more than one.
func (n *Node) describe(cmds []redis.Cmder, many bool) string {
	var parts []string
	for _, c := range cmds {
		switch c.Name() {
		case "multi", "exec":
			continue
		}
		parts = append(parts, describeCmd(c.Args()))
	}
	s := strings.Join(parts, "; ")
	if len(parts) > 1 {
		s = "MULTI " + s
	}
	if many {
		s += fmt.Sprintf(" on n%d", n.Index)
	}
	if r := []rune(s); len(r) > maxIntent {
		s = string(r[:maxIntent-1]) + "…"
	}
	return s
}

// describeCmd is one command in words.
func describeCmd(args []any) string {
	if len(args) == 0 {
		return "?"
	}
	name := strings.ToUpper(word(args[0]))
	rest := make([]string, 0, len(args)-1)
	for _, a := range args[1:] {
		rest = append(rest, word(a))
	}
	switch name {
	case "EVALSHA", "EVAL":
		if len(rest) < 2 {
			break
		}
		script := scriptName(rest[0])
		if script == "" {
			script = "Lua"
		}
		var keys []string
		var k int
		if _, err := fmt.Sscan(rest[1], &k); err == nil {
			for i := 2; i < 2+k && i < len(rest); i++ {
				keys = append(keys, unprefix(rest[i]))
			}
		}
		return script + "(" + strings.Join(keys, ", ") + ")"
	case "SET":
		if len(rest) >= 2 {
			s := unprefix(rest[0]) + "=" + clipWord(rest[1])
			for _, o := range rest[2:] {
				s += " " + strings.ToUpper(o)
			}
			return "SET " + s
		}
	}
	if len(rest) > 0 {
		rest[0] = unprefix(rest[0])
	}
	for i := 1; i < len(rest); i++ {
		rest[i] = clipWord(rest[i])
	}
	return strings.TrimSpace(name + " " + strings.Join(rest, " "))
}

// word is one argument as text.
func word(a any) string { return fmt.Sprint(a) }

// unprefix drops the run's key prefix ("locklab:<run>:").
func unprefix(k string) string {
	if rest, ok := strings.CutPrefix(k, "locklab:"); ok {
		if _, key, ok := strings.Cut(rest, ":"); ok {
			return key
		}
	}
	return k
}

// clipWord shortens a long value (a 32-digit token) to what tells it apart.
func clipWord(s string) string {
	if r := []rune(s); len(r) > 10 {
		return string(r[:6]) + "…"
	}
	return s
}

package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// commandFiles name the command each command's file serves: a file named
// for a command (or for it and more, like check_models.go) is that
// command's; a few are named otherwise. The rest are shared, named for
// what they share.
var commandFiles = map[string]string{
	"run": "run", "all": "run", "record": "record", "explore": "explore", "host": "host",
	"join": "join", "serve": "serve", "bench": "bench", "clean": "clean", "check": "check",
	"talk": "talk", "list": "list", "complete": "completion",
	"tui": "the view", "level": "the view", "serve_tui": "the view",
}

// commandOf is the command file name serves, "" for a shared file.
func commandOf(name string) string {
	base := strings.TrimSuffix(filepath.Base(name), ".go")
	if c, ok := commandFiles[base]; ok {
		return c
	}
	if prefix, _, ok := strings.Cut(base, "_"); ok {
		return commandFiles[prefix]
	}
	return ""
}

// TestNoCommandUsesAnotherCommandsFile: what two commands share lives in
// a file named for it, never in one command's file. A call from one
// command's file to a function or method defined in another command's
// file fails (a method name defined in several files is not followed).
func TestNoCommandUsesAnotherCommandsFile(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*ast.File{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		if files[name], err = parser.ParseFile(fset, name, nil, 0); err != nil {
			t.Fatal(err)
		}
	}
	defined := map[string]string{} // a function by name, a method by .name: its file
	for name, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			key := fd.Name.Name
			if fd.Recv != nil {
				key = "." + key
			}
			at := name
			if prev, dup := defined[key]; dup && prev != name {
				at = "" // in several files: not followed
			}
			defined[key] = at
		}
	}
	calls := 0
	for name, f := range files {
		from := commandOf(name)
		if from == "" {
			continue
		}
		imported := map[string]bool{}
		for _, im := range f.Imports {
			n := filepath.Base(strings.Trim(im.Path.Value, `"`))
			if im.Name != nil {
				n = im.Name.Name
			}
			imported[n] = true
		}
		ast.Inspect(f, func(n ast.Node) bool {
			c, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			var key string
			switch fn := c.Fun.(type) {
			case *ast.Ident:
				key = fn.Name
			case *ast.SelectorExpr:
				if id, ok := fn.X.(*ast.Ident); ok && imported[id.Name] {
					return true
				}
				key = "." + fn.Sel.Name
			}
			def := defined[key]
			if to := commandOf(def); def != "" && to != "" && to != from {
				calls++
				t.Errorf("%s (%s) calls %s in %s (%s): move it to a file named for what they share", name, from, strings.TrimPrefix(key, "."), def, to)
			}
			return true
		})
	}
	if calls == 0 && len(defined) < 100 {
		t.Fatalf("only %d functions found: the test reads the wrong directory", len(defined))
	}
}

package store_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// seeClient are the packages that may see *redis.Client: they make the
// clients or hand them to a library that wants one. Every other package
// gets store.Redis.
var seeClient = []string{"lock", "lock/libs", "store", "store/spawn", "store/storetest"}

// TestFewPackagesSeeTheRedisClient keeps the first build's weight: since
// go-redis 9.23 a client holds a weak pointer to its own type, and Go
// compiles about 1,500 of go-redis's functions again in every package
// that sees *redis.Client, or any type that holds one (redis.Options does,
// through OnConnect's *redis.Conn): about two seconds of a first build
// each. It type-checks each of the module's packages against its imports'
// export data and follows the types it uses (fields, methods, signatures)
// to go-redis's baseClient, which every client type embeds.
func TestFewPackagesSeeTheRedisClient(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the module's export data")
	}
	pkgs, exports := listModule(t)
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(exports[path])
	})
	var seen []string
	for _, p := range pkgs {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		why := sees(t, fset, imp, p)
		if why == "" {
			continue
		}
		seen = append(seen, rel)
		if !slices.Contains(seeClient, rel) {
			t.Errorf("package %s sees *redis.Client through %s: it would compile go-redis's client again; hand it store.Redis", rel, why)
		}
	}
	for _, want := range seeClient {
		if !slices.Contains(seen, want) {
			t.Errorf("package %s no longer sees *redis.Client: take it off seeClient", want)
		}
	}
}

const module = "github.com/locklab/locklab"

type listed struct {
	ImportPath, Dir, Export string
	GoFiles                 []string
}

// listModule builds the module's packages and lists them with the export
// data of everything they import.
func listModule(t *testing.T) (mine []listed, exports map[string]string) {
	out, err := exec.Command("go", "list", "-export", "-deps", "-json", module+"/...").Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("go list: %v\n%s", err, ee.Stderr)
	} else if err != nil {
		t.Fatalf("go list: %v", err)
	}
	exports = map[string]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		exports[p.ImportPath] = p.Export
		if p.ImportPath == module || strings.HasPrefix(p.ImportPath, module+"/") {
			mine = append(mine, p)
		}
	}
	return mine, exports
}

// sees type-checks package p and returns how a type it uses from another
// package reaches go-redis's baseClient, or "".
func sees(t *testing.T, fset *token.FileSet, imp types.Importer, p listed) string {
	var files []*ast.File
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	if _, err := (&types.Config{Importer: imp}).Check(p.ImportPath, fset, files, info); err != nil {
		t.Fatalf("%s: %v", p.ImportPath, err)
	}
	best := ""
	for _, o := range info.Uses {
		if o.Pkg() == nil || o.Pkg().Path() == p.ImportPath {
			continue
		}
		if path := reach(o.Type(), map[types.Type]bool{}); path != "" {
			why := o.Pkg().Name() + "." + o.Name() + " → " + path
			if best == "" || len(why) < len(best) || len(why) == len(best) && why < best {
				best = why
			}
		}
	}
	return best
}

// reach follows t's fields, elements, signatures and methods to go-redis's
// baseClient and returns the way there, or "".
func reach(t types.Type, seen map[types.Type]bool) string {
	if seen[t] {
		return ""
	}
	seen[t] = true
	var next []types.Type
	switch t := t.(type) {
	case *types.Named:
		o := t.Obj()
		if o.Pkg() != nil && o.Pkg().Path() == "github.com/redis/go-redis/v9" && o.Name() == "baseClient" {
			return "redis.baseClient"
		}
		next = append(next, t.Underlying())
		for m := range t.Methods() {
			next = append(next, m.Type())
		}
		for _, n := range next {
			if p := reach(n, seen); p != "" {
				return o.Name() + " → " + p
			}
		}
		return ""
	case *types.Alias:
		next = append(next, types.Unalias(t))
	case *types.Pointer:
		next = append(next, t.Elem())
	case *types.Slice:
		next = append(next, t.Elem())
	case *types.Array:
		next = append(next, t.Elem())
	case *types.Chan:
		next = append(next, t.Elem())
	case *types.Map:
		next = append(next, t.Key(), t.Elem())
	case *types.Struct:
		for f := range t.Fields() {
			next = append(next, f.Type())
		}
	case *types.Signature:
		for v := range t.Params().Variables() {
			next = append(next, v.Type())
		}
		for v := range t.Results().Variables() {
			next = append(next, v.Type())
		}
	case *types.Interface:
		for m := range t.Methods() {
			next = append(next, m.Type())
		}
	}
	for _, n := range next {
		if p := reach(n, seen); p != "" {
			return p
		}
	}
	return ""
}

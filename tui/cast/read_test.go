package cast

import (
	"bytes"
	"flag"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"
)

// endless repeats its bytes forever.
type endless struct {
	unit []byte
	i    int
}

func (r *endless) Read(p []byte) (int, error) {
	for n := range p {
		p[n] = r.unit[r.i]
		r.i = (r.i + 1) % len(r.unit)
	}
	return len(p), nil
}

func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

const castHeader = `{"version":2,"width":80,"height":24}` + "\n"

// TestReadHostile gives Read each hostile input: one line naming the line
// and the limit, and memory to match.
func TestReadHostile(t *testing.T) {
	defer func(n int) { maxEvents = n }(maxEvents)
	maxEvents = 10000
	for name, tc := range map[string]struct {
		in   func() io.Reader
		want string
	}{
		"dev zero": {func() io.Reader { return &endless{unit: []byte{0}} },
			"line 1: longer than 16 MiB; a line of a recording is at most 16 MiB"},
		"endless line": {func() io.Reader {
			return io.MultiReader(strings.NewReader(castHeader+`[0.5, "o", "`), &endless{unit: []byte("ab")})
		}, "line 2: longer than 16 MiB"},
		"endless events": {func() io.Reader {
			return io.MultiReader(strings.NewReader(castHeader), &endless{unit: []byte(`[0.5, "o", "x"]` + "\n")})
		}, "line 10002: more than 10000 events; a recording holds at most 10000"},
		"huge size": {func() io.Reader { return strings.NewReader(`{"version":2,"width":2000000000,"height":24}` + "\n") },
			"line 1: version 2, size 2000000000x24: want version 2 and a size from 1x1 to 10000x10000"},
		"a year long": {func() io.Reader { return strings.NewReader(castHeader + `[31536000, "o", "x"]` + "\n") },
			"line 2: time 3.1536e+07 s is past 168h0m0s, the longest a recording lasts"},
		"negative time": {func() io.Reader { return strings.NewReader(castHeader + `[-1, "o", "x"]` + "\n") },
			"line 2: time -1.000000 goes back from 0.000000"},
	} {
		var err error
		n := allocated(func() { _, _, err = Read(tc.in()) })
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v\nwant %s…", name, err, tc.want)
		}
		if n > 128<<20 { // generous: a 16 MiB line costs its buffer's doublings
			t.Errorf("%s: allocated %d MiB", name, n>>20)
		}
	}
}

// FuzzRead reads any bytes as a recording: no panic, a one-line error,
// memory in proportion to the input, and (only when fuzzing) a time bound
// far above what the input needs.
func FuzzRead(f *testing.F) {
	f.Add([]byte(castHeader + `[0.1, "o", "hi"]` + "\n" + `[0.2, "r", "100x30"]` + "\n"))
	f.Add([]byte(castHeader + `[1e308, "m", "x"]` + "\n"))
	f.Add([]byte(`{"version":2,"width":-1,"height":24}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		start := time.Now()
		var err error
		n := allocated(func() { _, _, err = Read(bytes.NewReader(data)) })
		if limit := uint64(64*len(data)) + 1<<20; n > limit {
			t.Fatalf("%d bytes of input allocated %d bytes", len(data), n)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("the error is not one line: %q", err)
		}
		if fl := flag.Lookup("test.fuzz"); fl != nil && fl.Value.String() != "" && time.Since(start) > 5*time.Second {
			t.Fatalf("%d bytes of input took %v", len(data), time.Since(start))
		}
	})
}

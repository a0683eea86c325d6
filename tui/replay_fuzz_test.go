package tui

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/themes"
)

// FuzzReplayView plays any log the reader accepts through the view, frame
// by frame to its end, as replay and record --from do: no panic.
func FuzzReplayView(f *testing.F) {
	for _, name := range []string{"crash.jsonl", "oversell-none-beats.jsonl", "naive-flaws-naive.jsonl"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	h := `{"format":"locklab-events","version":1,"scenario":"redlock","strategy":"redlock","params":{"workers":3,"nodes":5},"lanes":["w00","w01","w02"]}` + "\n"
	f.Add([]byte(h + `{"seq":1,"t":5,"worker":2,"kind":"vote","node":4,"ok":true,"res":"lock"}` + "\n" +
		`{"seq":2,"t":9,"worker":1,"kind":"wait","peer":2,"res":"lock"}` + "\n"))
	f.Add([]byte(h + `{"seq":1,"t":5,"worker":-5,"kind":"attempt","res":"lock:stock"}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := scenario.LoadLog(bytes.NewReader(data))
		if err != nil || l.Log.Len() == 0 || l.Log.At(l.Log.Len()-1).T > 10*time.Second {
			return // refused, or longer than a fuzzed input should take
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // far above what it needs
		defer cancel()
		err = Record(ctx, io.Discard, []*scenario.Loaded{l}, []string{"fuzz.jsonl"},
			RecordOptions{Theme: themes.Mono(), Width: 80, Height: 24, FPS: 1, Speed: 10, End: time.Second})
		if err != nil {
			t.Fatalf("%d events over %v: %v", l.Log.Len(), l.Log.At(l.Log.Len()-1).T, err)
		}
	})
}

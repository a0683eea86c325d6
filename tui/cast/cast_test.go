package cast

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func fixed(ts ...time.Duration) Clock {
	i := 0
	return func() time.Duration {
		t := ts[min(i, len(ts)-1)]
		i++
		return t
	}
}

func TestWriterFormat(t *testing.T) {
	var b bytes.Buffer
	w, err := NewWriter(&b, Header{Width: 120, Height: 36, Timestamp: 1, Title: "t",
		Theme: &Theme{FG: "#ffffff", BG: "#000000", Palette: strings.Repeat("#000000:", 15) + "#ffffff"}},
		fixed(0, time.Second, 500*time.Millisecond, 2*time.Second, 3*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("\x1b[2J\"quoted\" \\ tab\t\r\n"))
	// "█" is E2 96 88: split across two writes.
	w.Write([]byte("a\xe2\x96"))
	w.Resize(80, 24)
	w.Write([]byte("\x88b"))
	w.Marker("beat: w00's TTL lapsed")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	h, evs, err := Read(&b)
	if err != nil {
		t.Fatal(err)
	}
	if h.Version != 2 || h.Width != 120 || h.Theme == nil || h.Theme.BG != "#000000" {
		t.Fatalf("header %+v", h)
	}
	var out strings.Builder
	codes := ""
	for _, e := range evs {
		codes += e.Code
		if e.Code == "o" {
			if !utf8.ValidString(e.Data) {
				t.Fatalf("event data %q is not UTF-8", e.Data)
			}
			out.WriteString(e.Data)
		}
	}
	if codes != "oorom" {
		t.Fatalf("codes %q", codes)
	}
	if got := out.String(); got != "\x1b[2J\"quoted\" \\ tab\t\r\na█b" {
		t.Fatalf("output %q", got)
	}
	// The clock went back (0.5 s after 1 s): times stay monotonic.
	if evs[1].Time != 1 {
		t.Fatalf("time %v", evs[1].Time)
	}
}

func TestReadRejects(t *testing.T) {
	for name, text := range map[string]string{
		"no version":    `{"width":80,"height":24}`,
		"version 1":     `{"version":1,"width":80,"height":24}`,
		"back in time":  `{"version":2,"width":80,"height":24}` + "\n[1.0, \"o\", \"a\"]\n[0.5, \"o\", \"b\"]",
		"bad code":      `{"version":2,"width":80,"height":24}` + "\n[1.0, \"x\", \"a\"]",
		"bad resize":    `{"version":2,"width":80,"height":24}` + "\n[1.0, \"r\", \"80 by 24\"]",
		"not an array":  `{"version":2,"width":80,"height":24}` + "\n{}",
		"two elements":  `{"version":2,"width":80,"height":24}` + "\n[1.0, \"o\"]",
		"string time":   `{"version":2,"width":80,"height":24}` + "\n[\"1\", \"o\", \"a\"]",
		"invalid UTF-8": `{"version":2,"width":80,"height":24}` + "\n[1.0, \"o\", \"\xff\"]",
	} {
		if _, _, err := Read(strings.NewReader(text)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func FuzzWriterRoundTrip(f *testing.F) {
	f.Add([]byte("plain"), 3)
	f.Add([]byte("\x1b[31m█░▒\x1b[0m\"\\\x00\xff"), 2)
	f.Fuzz(func(t *testing.T, data []byte, split int) {
		var b bytes.Buffer
		w, _ := NewWriter(&b, Header{Width: 1, Height: 1}, fixed(0))
		split = min(max(split, 0), len(data))
		w.Write(data[:split])
		w.Write(data[split:])
		w.Close()
		_, evs, err := Read(&b)
		if err != nil {
			t.Fatal(err)
		}
		var out []byte
		for _, e := range evs {
			out = append(out, e.Data...)
		}
		if want := []byte(strings.ToValidUTF8(string(data), "\ufffd")); utf8.Valid(data) && !bytes.Equal(out, want) {
			t.Fatalf("%q came back as %q", data, out)
		}
	})
}

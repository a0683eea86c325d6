package tui

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/event"

	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui/cast"
)

// outputs are a recording's non-empty output events.
func outputs(t *testing.T, b []byte) (out []string, markers []string) {
	t.Helper()
	_, evs, err := cast.Read(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		switch {
		case e.Code == "o" && e.Data != "":
			out = append(out, e.Data)
		case e.Code == "m":
			markers = append(markers, e.Data)
		}
	}
	return out, markers
}

// Interactive keyHints are for people at a keyboard; a recording has none.
var keyHints = []string{"runs it again", "esc ", "space plays", "→ next", "leaves presenter", "? help", "q quit"}

// TestRecordAtHumanPace: oversell without a lock races through 5 ms of
// virtual time; recorded at the scenario's own pace (as the view opens it),
// the race fills many frames that differ, and no hint of a key shows.
func TestRecordAtHumanPace(t *testing.T) {
	for _, present := range []bool{false, true} {
		b := record(t, RecordOptions{Theme: themes.Mono(), Width: 100, Height: 30, Present: present, Timestamp: 1}, "oversell-none.jsonl")
		out, _ := outputs(t, b)
		distinct := map[string]bool{}
		for _, o := range out {
			distinct[o] = true
		}
		if len(distinct) < 20 {
			t.Errorf("present=%v: %d frames that differ, want at least 20", present, len(distinct))
		}
		for _, h := range keyHints {
			if bytes.Contains(b, []byte(h)) {
				t.Errorf("present=%v: the recording shows the hint %q", present, h)
			}
		}
	}
}

// TestRecordTalk records a talk of three saved runs twice: the same bytes,
// a title card and a marker per scene, a marker per beat, the talk's
// extra caption, and no keyHints.
func TestRecordTalk(t *testing.T) {
	tk, logs := loadTalk(t, "talk-3.yaml")
	rec := func() []byte {
		var b bytes.Buffer
		names := []string{"a", "b", "c"}
		o := RecordOptions{Theme: themes.Dark(), Width: 100, Height: 30, Present: true, Talk: tk, Title: "t", Timestamp: 1}
		if err := Record(context.Background(), &b, logs, names, o); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	a, b := rec(), rec()
	if !bytes.Equal(a, b) {
		t.Fatal("two recordings of the same talk differ")
	}
	_, markers := outputs(t, a)
	var scenes, beats int
	for _, m := range markers {
		if strings.HasPrefix(m, "scene ") {
			scenes++
		}
		if strings.HasPrefix(m, "beat: ") {
			beats++
		}
	}
	want := 0
	for _, l := range logs {
		for i := range l.Log.Len() {
			if l.Log.At(i).Kind == event.KindBeat {
				want++
			}
		}
	}
	if scenes != 3 || beats != want {
		t.Errorf("%d scene and %d beat markers, want 3 and %d", scenes, beats, want)
	}
	for _, s := range []string{"scene 1 of 3", "scene 3 of 3", "EXTRA CAPTION TWO"} {
		if !bytes.Contains(a, []byte(s)) {
			t.Errorf("the recording never shows %q", s)
		}
	}
	for _, h := range keyHints {
		if bytes.Contains(a, []byte(h)) {
			t.Errorf("the recording shows the hint %q", h)
		}
	}
}

// TestRecordMaxGap: with MaxGap, no stretch from one beat to the next (or
// to the end) plays longer than the caption's hold and MaxGap; without it,
// oversell's long tail after the race plays at the race's pace.
func TestRecordMaxGap(t *testing.T) {
	gaps := func(o RecordOptions) (longest float64, b []byte) {
		b = record(t, o, "oversell-none-beats.jsonl")
		_, evs, err := cast.Read(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		last := -1.0
		for _, e := range evs {
			if e.Code == "m" && strings.HasPrefix(e.Data, "beat: ") {
				if last >= 0 {
					longest = max(longest, e.Time-last)
				}
				last = e.Time
			}
		}
		if last < 0 {
			t.Fatal("no beat markers")
		}
		return max(longest, evs[len(evs)-1].Time-last), b
	}
	o := RecordOptions{Theme: themes.Mono(), Width: 100, Height: 30, Present: true, FPS: 2, Hold: time.Second, End: time.Second, Timestamp: 1}
	slow, _ := gaps(o)
	o.MaxGap = 5 * time.Second
	fast, a := gaps(o)
	if _, b := gaps(o); !bytes.Equal(a, b) {
		t.Error("two recordings with MaxGap differ")
	}
	if want := (o.Hold + o.End + o.MaxGap + time.Second).Seconds(); fast > want {
		t.Errorf("with MaxGap %v a stretch lasts %.1fs, want at most %.1fs", o.MaxGap, fast, want)
	}
	if slow <= fast {
		t.Errorf("without MaxGap the longest stretch is %.1fs, with it %.1fs: nothing was fitted", slow, fast)
	}
}

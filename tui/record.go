package tui

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/event"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/talk"
	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui/cast"
	"github.com/locklab/locklab/tui/draw"
	"github.com/locklab/locklab/tui/present"
	"github.com/locklab/locklab/tui/timeline"
	"github.com/locklab/locklab/untrusted"
	"github.com/muesli/termenv"
)

// RecordOptions say how to record.
type RecordOptions struct {
	Theme         *themes.Theme
	Width, Height int
	Present       bool          // stop at each beat with its caption
	FPS           int           // frames per second of the recording (default 10)
	Hold          time.Duration // how long a beat's caption stays in presenter mode (default 3s)
	End           time.Duration // how long the last screen stays (default 3s)
	// Speed is the playback speed; 0 plays each run at its scenario's own
	// pace, the one the view opens it at, so every race lasts several frames.
	Speed float64
	// MaxGap, in presenter mode, is the longest a stretch between two beats
	// (or from the last beat to the run's end) plays: a longer one plays at
	// the slowest speed of the ladder that fits it in. 0 plays each at the
	// run's pace.
	MaxGap    time.Duration
	Title     string
	Timestamp int64 // Unix time for the header; 0 leaves it out
	// Talk, when set, is the talk the runs are the scenes of (one run per
	// scene, in order): each scene opens with its title card, held for Hold,
	// and its beats carry the talk's extra captions.
	Talk *talk.Talk
	// EventMarks puts a marker at every event of the runs (a shrunk
	// schedule's few dozen steps), besides the violations and the rest.
	EventMarks bool
}

// pace is the playback speed of l: the one asked for, else its scenario's.
func (o RecordOptions) pace(l *scenario.Loaded) float64 {
	if o.Speed > 0 {
		return o.Speed
	}
	return openingSpeed(l.Header.Scenario, l.Header.Strategy, l.Header.Params)
}

// Record plays recorded runs, one after the other, through the run view at
// fixed frame intervals and writes what the terminal would show as an
// asciicast v2 recording. Nothing in it depends on the wall clock, so the
// same runs and options give the same bytes.
//
// A recording lasts at most MaxRecording: a log whose span would make it
// longer is refused before the first frame. ctx ends it early (Ctrl-C):
// Record then returns ctx's error, with what was recorded so far written.
func Record(ctx context.Context, out io.Writer, runs []*scenario.Loaded, names []string, o RecordOptions) error {
	o.fill()
	if err := o.check(runs); err != nil {
		return err
	}
	defer playerColours()()
	r := &recorder{o: o, step: time.Second / time.Duration(o.FPS), th: o.Theme, scr: &screen2{}}
	if o.Present && r.th.Name != "mono" {
		r.th = presentTheme
	}
	var err error
	r.rec, err = cast.NewWriter(out, castHeader(r.th, o.Width, o.Height, o.Title, o.Timestamp), func() time.Duration { return r.t })
	if err != nil {
		return err
	}
	for i, l := range runs {
		if i > 0 {
			r.scr.clear()
		}
		a := r.open(l, names[i])
		if o.Talk != nil {
			r.titleCard(a.run, i)
		} else if len(runs) > 1 {
			r.rec.Marker(fmt.Sprintf("run %d: %s · %s", i+1, l.Header.Scenario, l.Header.Strategy))
		}
		if err := r.play(ctx, a, l); err != nil {
			r.rec.Close()
			return err
		}
	}
	r.rec.Write([]byte(fmt.Sprintf("\x1b[%d;1H\r\n\x1b[?25h", o.Height)))
	return r.rec.Close()
}

// fill sets the options left zero to their defaults.
func (o *RecordOptions) fill() {
	if o.FPS <= 0 {
		o.FPS = 10
	}
	if o.Hold <= 0 {
		o.Hold = 3 * time.Second
	}
	if o.End <= 0 {
		o.End = 3 * time.Second
	}
	if o.Theme == nil {
		o.Theme = themes.Dark()
	}
}

// check refuses a talk whose scenes are not the runs given, and runs that
// would make a recording longer than MaxRecording.
func (o RecordOptions) check(runs []*scenario.Loaded) error {
	if o.Talk != nil && len(o.Talk.Scenes) != len(runs) {
		return fmt.Errorf("the talk has %d scenes and %d runs were given", len(o.Talk.Scenes), len(runs))
	}
	if d := recordingLength(runs, o); d > MaxRecording {
		pace := fmt.Sprintf("at playback speed %g", o.Speed)
		if o.Speed <= 0 {
			pace = "at each scenario's own pace"
		}
		return fmt.Errorf("the recording would last %v %s; a recording lasts at most %v: raise the speed or record a shorter run",
			d.Round(time.Second), pace, MaxRecording)
	}
	return nil
}

// recorder is a recording being made: its frames' clock t advances a
// step a frame, whatever the wall clock does.
type recorder struct {
	o    RecordOptions
	rec  *cast.Writer
	scr  *screen2
	th   *themes.Theme // the title cards'
	step time.Duration
	t    time.Duration
}

// open sets up the view of one run as a recording plays it: no status,
// no hints, a frame a step, markers into the recording.
func (r *recorder) open(l *scenario.Loaded, name string) *App {
	a := New(Options{Theme: r.o.Theme, Replay: l, Name: name, Speed: r.o.pace(l), Present: r.o.Present})
	a.recording = true
	a.Update(tea.WindowSizeMsg{Width: r.o.Width, Height: r.o.Height})
	v := a.run
	v.speed = r.o.pace(l)
	v.frameStep = r.step
	v.mark = r.rec.Marker
	v.eventMarks = r.o.EventMarks
	v.status = ""
	v.noHints = true
	return a
}

// titleCard shows scene i's title card for Hold, and gives the view the
// scene's beats.
func (r *recorder) titleCard(v *runView, i int) {
	sc := &r.o.Talk.Scenes[i]
	v.scene, v.pr.extras = sc, sceneExtras(sc)
	r.rec.Marker(fmt.Sprintf("scene %d: %s", i+1, sc.Title))
	card := draw.Backdrop(r.th, present.Card(r.th, r.o.Talk, i, r.o.Width, r.o.Height, ""), r.o.Width)
	for end := r.t + r.o.Hold; r.t < end; r.t += r.step {
		r.rec.Write(r.scr.frame(card))
	}
	r.scr.clear()
}

// play records a's run frame by frame to its end (and End beyond it),
// holding each presenter's stop for Hold.
func (r *recorder) play(ctx context.Context, a *App, l *scenario.Loaded) error {
	v := a.run
	epoch := time.Unix(0, 0).Add(r.t) // the frames' own clock
	a.Update(frameMsg(epoch.Add(r.t)))
	if r.o.Present {
		v.pr.next()
		v.fitGap(r.o.pace(l), r.o.MaxGap)
	} else {
		v.togglePause()
	}
	var stoppedAt, endAt time.Duration = -1, -1
	for frame := 0; ; frame++ {
		if frame%64 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if r.t > MaxRecording {
			return fmt.Errorf("the recording passed %v, the most a recording lasts: record a shorter run", MaxRecording)
		}
		a.Update(frameMsg(epoch.Add(r.t)))
		r.rec.Write(r.scr.frame(a.View()))
		r.t += r.step
		switch {
		case v.pr.on && v.pr.waiting:
			if stoppedAt < 0 {
				stoppedAt = r.t
			} else if r.t-stoppedAt >= r.o.Hold {
				stoppedAt = -1
				v.pr.next()
				v.fitGap(r.o.pace(l), r.o.MaxGap)
			}
			continue
		case v.cursor >= v.tl.N-1:
			if endAt < 0 {
				endAt = r.t
			}
		}
		if endAt >= 0 && r.t-endAt >= r.o.End {
			return nil
		}
	}
}

// fitGap sets the speed the view plays on at, from a beat: pace, or, when
// the stretch to the next beat (or to the run's end) would last longer than
// most at pace, the slowest speed of the ladder that plays it within most.
func (v *runView) fitGap(pace float64, most time.Duration) {
	v.speed = pace
	if most <= 0 || v.tl.N == 0 {
		return
	}
	end := v.eventT(v.tl.N - 1)
	if b, ok := v.pr.nextBeat(max(v.pr.at, int64(v.cursor)), v.tl.N-1); ok {
		end = v.eventT(int(b))
	}
	gap := end - v.playT
	if time.Duration(float64(gap)/pace) <= most {
		return
	}
	v.speed = speeds[len(speeds)-1]
	for _, s := range speeds {
		if s > pace && time.Duration(float64(gap)/s) <= most {
			v.speed = s
			return
		}
	}
}

// MaxRecording is the longest recording Record makes: 36,000 frames at the
// default 10 per second, far beyond a run a talk or a page shows.
const MaxRecording = time.Hour

// recordingLength is how long the recording of runs lasts at least: each
// run's span at the playback speed, and the end screen.
func recordingLength(runs []*scenario.Loaded, o RecordOptions) time.Duration {
	var d time.Duration
	for _, l := range runs {
		if n := l.Log.Len(); n > 0 {
			d += time.Duration(float64(l.Log.At(n-1).T) / o.pace(l))
		}
		d += o.End
		if o.Talk != nil {
			d += o.Hold
		}
	}
	return d
}

// castHeader is a recording's header: the size, the title and the theme's
// terminal colours.
func castHeader(th *themes.Theme, w, h int, title string, ts int64) cast.Header {
	return cast.Header{Width: w, Height: h, Timestamp: ts, Title: title,
		Env:   map[string]string{"TERM": "xterm-256color"},
		Theme: &cast.Theme{FG: th.Terminal.FG, BG: th.Terminal.BG, Palette: themes.Palette}}
}

// screen2 turns whole frames into the terminal output that draws them over
// the previous frame: only the lines that changed.
type screen2 struct {
	prev []string
	b    strings.Builder
}

func (s *screen2) clear() { s.prev = nil }

func (s *screen2) frame(view string) []byte {
	s.b.Reset()
	if s.prev == nil {
		s.b.WriteString("\x1b[?25l\x1b[H\x1b[2J")
	}
	lines := strings.Split(view, "\n")
	for i, l := range lines {
		if i < len(s.prev) && s.prev[i] == l {
			continue
		}
		// Erase first: an erase after a full-width line would take its
		// last cell with it (the cursor waits on it to wrap).
		fmt.Fprintf(&s.b, "\x1b[%d;1H\x1b[0m\x1b[2K%s\x1b[0m", i+1, l)
	}
	s.prev = lines
	return []byte(s.b.String())
}

// markLabel is a recording marker's label for a timeline marker, or "" for
// the kinds that are not recorded as markers.
func (v *runView) markLabel(m timeline.Marker) string {
	switch m.Kind {
	case timeline.MarkerBeat:
		return "beat: " + v.s.log.At(int(m.Seq)).Msg
	case timeline.MarkerViolation:
		return "violation: " + v.s.log.At(int(m.Seq)).Msg
	}
	return ""
}

// markPassed reports markers the cursor has reached for the first time to
// the recording: each beat, and the violations of one frame as one marker
// (fifty workers walking in at once are one moment to seek to, not fifty).
func (v *runView) markPassed() {
	if v.mark == nil {
		return
	}
	if v.eventMarks {
		v.markEvents()
	}
	var violation string
	more := 0
	flush := func() {
		switch {
		case violation == "":
		case more > 0:
			v.mark(fmt.Sprintf("%s (and %d more)", violation, more))
		default:
			v.mark(violation)
		}
		violation, more = "", 0
	}
	for v.marked < len(v.tl.Markers) && int(v.tl.Markers[v.marked].Seq) <= v.cursor {
		m := v.tl.Markers[v.marked]
		v.marked++
		l := v.markLabel(m)
		switch {
		case l == "":
		case m.Kind == timeline.MarkerViolation && violation != "":
			more++
		case m.Kind == timeline.MarkerViolation:
			violation = l
		default:
			flush()
			v.mark(l)
		}
	}
	flush()
}

// recordings counts the recordings under way in this process, which draw
// in a player's colours (256) whatever stdout is; the profile stdout had
// comes back when the last one ends, not when the first does.
var recordings struct {
	sync.Mutex
	n   int
	was termenv.Profile
}

// playerColours sets the colour profile recordings draw in and returns
// what gives it back.
func playerColours() (restore func()) {
	recordings.Lock()
	defer recordings.Unlock()
	if recordings.n == 0 {
		recordings.was = lipgloss.ColorProfile()
		lipgloss.SetColorProfile(termenv.ANSI256)
	}
	recordings.n++
	return func() {
		recordings.Lock()
		defer recordings.Unlock()
		if recordings.n--; recordings.n == 0 {
			lipgloss.SetColorProfile(recordings.was)
		}
	}
}

// markEvents marks every event the playhead has passed since the last
// frame: "event 7: w01 reads stock stock=1".
func (v *runView) markEvents() {
	for ; v.evMarked <= v.cursor && v.evMarked < v.tl.N; v.evMarked++ {
		e := v.s.log.At(v.evMarked)
		if e.Kind == event.KindViolation || e.Kind == event.KindBeat {
			continue // a violation has its own marker; a beat is narration
		}
		v.mark(fmt.Sprintf("event %d: %s", v.evMarked+1, untrusted.Line(draw.Describe(e))))
	}
}

package tui

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/check"
	"github.com/locklab/locklab/tui/draw"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/untrusted"
)

// hostSpeed is the pace a finished round replays at: its race lasts a few
// hundred milliseconds of real time.
const hostSpeed = 0.02

// lobbyEvery is how often the host asks who is in the lobby.
const lobbyEvery = 500 * time.Millisecond

// HostView is the workshop's view: the lobby, then each round's lanes and
// the scoreboard. The host's own (with a Workshop) opens rounds; a
// viewer's (without) can only watch, with its own playhead.
type HostView struct {
	stage     *Stage
	ws        Workshop // nil for a viewer
	theme     *themes.Theme
	w, h      int
	run       *runView
	round     int // the stage's round run shows
	keys      hostKeys
	help      help.Model
	showHelp  bool
	err       string
	opening   bool
	polled    time.Time
	bigCode   bigCache // the room code in block letters
	me        string   // a participant's name: their lanes and line are marked
	standings bool     // the leaderboard is shown instead of the scoreboard
	asking    bool     // the host pressed q: y quits
	menu      steerMenu
	reserve   int           // rows under the view kept for a participant's lines
	ownLines  bool          // a participant's view: its own lines replace the room's footer
	pace      time.Duration // between frames; 0: frameEvery
	entries   viewEntries   // the lobby's lines as this view lays them out
}

// NewHostView returns the view of stage; ws is nil for a viewer.
func NewHostView(stage *Stage, ws Workshop, th *themes.Theme, w, h int) *HostView {
	if th == nil {
		th = themes.Dark()
	}
	v := &HostView{stage: stage, ws: ws, theme: th, w: w, h: h, keys: defaultHostKeys(ws != nil), help: help.New(), bigCode: bigCache{}}
	if _, ok := ws.(Steerable); ok {
		v.keys.Steer.SetEnabled(true)
	}
	v.keys.Board.SetEnabled(!stage.Requests) // a served race's requests are nobody's
	return v
}

// RunHost runs the host's view until the user quits or ctx ends.
func RunHost(ctx context.Context, stage *Stage, ws Workshop, th *themes.Theme, in io.Reader, out io.Writer) error {
	v := NewHostView(stage, ws, th, fullW, fullH)
	p := tea.NewProgram(v, tea.WithAltScreen(), tea.WithInput(in), tea.WithOutput(out), tea.WithContext(ctx))
	_, err := p.Run()
	if ctx.Err() != nil {
		return nil
	}
	return err
}

type lobbyMsg struct {
	l   []Attendee
	err error
}

type openedMsg struct {
	run *scenario.Run
	err error
}

// Init starts the frame tick.
func (v *HostView) Init() tea.Cmd { return v.frame() }

// Pace sets the time between frames: a view over the network (one of
// many) needs fewer than the host's own.
func (v *HostView) Pace(d time.Duration) { v.pace = d }

func (v *HostView) frame() tea.Cmd {
	if v.pace <= 0 {
		return frame()
	}
	return tea.Tick(v.pace, func(t time.Time) tea.Msg { return frameMsg(t) })
}

// Update handles frames, the lobby, new rounds and keys.
func (v *HostView) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	v.catchUp(msg)
	defer v.hold()()
	return v.update(msg)
}

func (v *HostView) update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		v.w, v.h = msg.Width, msg.Height
		v.help.Width = msg.Width
	case frameMsg:
		return v, tea.Batch(v.frame(), v.onFrame(time.Time(msg)))
	case lobbyMsg:
		v.stage.setLobby(msg.l, msg.err)
	case openedMsg:
		v.opening = false
		if msg.err != nil {
			v.err = untrusted.Line(msg.err.Error())
			return v, nil
		}
		v.err = ""
		v.stage.SetRound(msg.run)
	case tea.KeyMsg:
		return v.handleKey(msg)
	}
	return v, nil
}

// onFrame follows the stage to its newest round and folds new events.
func (v *HostView) onFrame(now time.Time) tea.Cmd {
	if r, n := v.stage.Round(); n != v.round && r != nil {
		v.round = n
		s := &session{spec: runSpec{Scenario: r.Header.Scenario, Strategy: r.Header.Strategy, Params: r.Header.Params, Seed: r.Header.Seed},
			header: r.Header, log: r.Log, run: r, kind: store.Real}
		v.run = newRunView(s, hostSpeed)
		v.run.shared = v.stage.sharedFold(r, n)
		s.summarize = v.run.shared.summarize
		v.run.names = markOwn(r.Header.Lanes, v.me)
		v.run.lookAtShared()
		for i, l := range r.Header.Lanes {
			if v.me != "" && check.AttendeeOf(l) == v.me {
				v.run.own = append(v.run.own, int32(i))
			}
		}
		v.run.keys.Save.SetEnabled(v.ws != nil)
	}
	if v.run != nil {
		v.run.onFrame(now)
	}
	if v.ws == nil || now.Sub(v.polled) < lobbyEvery {
		return nil
	}
	v.polled = now
	ws := v.ws
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		l, err := ws.Lobby(ctx)
		return lobbyMsg{l, err}
	}
}

// View draws the lobby or the round, the scoreboard and the footer.
func (v *HostView) View() string {
	defer v.hold()()
	return draw.Backdrop(v.theme, v.view(v.theme), v.w)
}

func (v *HostView) view(th *themes.Theme) string {
	if v.w < minW || v.h < minH {
		return draw.TooSmall(th, v.w, v.h)
	}
	keys := v.helpKeys()
	if v.showHelp {
		return strings.Join(flow(helpEntries(th, keys), v.w), "\n")
	}
	var body []string
	if v.run == nil {
		body = v.lobbyView(th)
	} else {
		board := v.board(th)
		runH := max(v.h-v.reserve-1-len(board), minH-v.reserve-1-len(board))
		body = strings.Split(v.run.View(th, v.w, runH), "\n")
		body = append(body[:min(len(body), runH)], board...)
	}
	height := v.h - v.reserve - 1
	if len(body) > height {
		body = body[:height]
	}
	for len(body) < height {
		body = append(body, "")
	}
	footer := ""
	if !v.ownLines { // a participant's lines take the footer's place
		footer = footerView(th, keys.short, []key.Binding{v.keys.Help, v.keys.Quit}, v.w)
	}
	switch {
	case v.asking:
		footer = th.Warn.Render("end the room? y prints and writes the results and quits · any other key goes on")
	case v.err != "":
		footer = th.Alarm.Render(v.err)
	case v.opening:
		footer = th.Accent.Render("opening a round…")
	}
	return strings.Join(body, "\n") + "\n" + draw.Fit(footer, v.w)
}

// board is what goes under the lanes: the scoreboard, or for a served
// run the line that says how to send it a worker.
func (v *HostView) board(th *themes.Theme) []string {
	if v.stage.Requests {
		_, n := v.stage.Round()
		return []string{th.Accent.Render(draw.Fit(fmt.Sprintf(" round %d · %s", n, v.stage.Hint), v.w))}
	}
	var out []string
	switch {
	case v.menu.open:
		out = v.menuLines(th)
	case v.standings:
		out = v.leaderboard(th)
	default:
		out = v.scoreboard(th)
	}
	return append(out, v.comingLines(th)...)
}

// comingLines say what the next round races, once the host changed it,
// and who joins it: attendees here now who are not in this round.
func (v *HostView) comingLines(th *themes.Theme) []string {
	var out []string
	if d := v.stage.Countdown(time.Now()); d > 0 {
		_, n := v.stage.Round()
		out = append(out, th.Warn.Render(draw.Fit(fmt.Sprintf(" round %d starts in %.1fs", n, d.Seconds()), v.w)))
	}
	if n := v.stage.Next(); n != "" {
		out = append(out, th.Accent.Render(draw.Fit(" "+n, v.w)))
	}
	run, n := v.stage.Round()
	lobby, _ := v.stage.Lobby()
	if run == nil || len(lobby) == 0 {
		return out
	}
	if late := v.stage.sharedFold(run, n).lateOf(lobby); late != "" {
		out = append(out, th.Muted.Render(draw.Fit(" joins next round: "+late, v.w)))
	}
	return out
}

// helpEntries lists every enabled binding, for the help screen.
func helpEntries(th *themes.Theme, h helpMap) []string {
	var out []string
	seen := map[string]bool{}
	for _, col := range h.full {
		for _, b := range col {
			if !b.Enabled() || seen[b.Help().Key] {
				continue
			}
			seen[b.Help().Key] = true
			out = append(out, th.Key.Render(b.Help().Key)+" "+th.KeyDesc.Render(b.Help().Desc))
		}
	}
	return out
}

// lobbyView is the screen before the first round. The attendees flow
// in columns into the rows the rest leaves, and those that do not fit are
// counted: the count, what the next round races and the ways in stay on
// screen however full the room.
func (v *HostView) lobbyView(th *themes.Theme) []string {
	out := []string{th.Title.Render(draw.Fit("locklab host — "+v.stage.Title, v.w)), ""}
	lobby, err := v.stage.Lobby()
	if err != "" {
		out = append(out, th.Alarm.Render(err), "")
	}
	total := 0
	for _, a := range lobby {
		total += a.Workers
	}
	tail := []string{"", th.Text.Render(fmt.Sprintf("%d attendee(s), %d worker(s)", len(lobby), total)), ""}
	if v.menu.open {
		tail = append(tail, v.menuLines(th)...)
	} else if n := v.stage.Next(); n != "" {
		tail = append(tail, th.Accent.Render(draw.Fit(n, v.w)))
	}
	tail = append(tail, "")
	tail = append(tail, v.waysIn(th)...)
	if v.ws != nil {
		tail = append(tail, th.Text.Render("enter opens a round: everyone's workers start at the same instant"))
	} else {
		tail = append(tail, th.Muted.Render("waiting for the host to open a round"))
	}
	if len(lobby) == 0 {
		out = append(out, th.Muted.Render("nobody here yet"))
	}
	out = append(out, v.attendeeRows(th, lobby, v.h-v.reserve-1-len(out)-len(tail))...)
	return append(out, tail...)
}

// attendeeRows lists the lobby in at most rows rows (at least one), in
// columns; a participant's own entry comes first; the attendees that do
// not fit are counted on the last row.
func (v *HostView) attendeeRows(th *themes.Theme, lobby []Attendee, rows int) []string {
	if len(lobby) == 0 {
		return nil
	}
	rows = max(rows, 1)
	c := &v.entries
	shared := v.stage.lobbyEntries(th, lobby)
	if c.lines != nil && c.w == v.w && c.rows == rows && len(c.of) > 0 && &c.of[0] == &shared[0] {
		return c.lines
	}
	entries := shared
	if i := slices.IndexFunc(lobby, func(a Attendee) bool { return v.me != "" && a.Name == v.me }); i >= 0 {
		entries = slices.Insert(slices.Delete(slices.Clone(shared), i, i+1), 0, th.Accent.Render(ownMark)+shared[i])
	}
	lines := flow(entries, v.w-2)
	if len(lines) > rows {
		cols := (len(entries) + len(lines) - 1) / len(lines)
		shown := max((rows-1)*cols, 0)
		lines = append(flow(entries[:shown], v.w-2), th.Muted.Render(fmt.Sprintf("… and %d more", len(entries)-shown)))
	}
	for i, l := range lines {
		lines[i] = "  " + l
	}
	*c = viewEntries{of: shared, lines: lines, w: v.w, rows: rows}
	return lines
}

// viewEntries are a view's lobby lines as laid out, kept until the
// stage's entries, the width or the rows change.
type viewEntries struct {
	of      []string // the stage's entries they were laid out from
	lines   []string
	w, rows int
}

// waysIn shows the room code in big type, when it fits beside what the
// lobby lists, and the lines to join with.
func (v *HostView) waysIn(th *themes.Theme) []string {
	ways := v.stage.WaysIn
	if len(ways) == 0 && v.stage.Hint != "" {
		ways = []string{v.stage.Hint}
	}
	if len(ways) == 0 {
		return nil
	}
	out := []string{th.Text.Render("join with:")}
	if v.stage.Code != "" && v.h >= 30 {
		if big := v.bigCode.letters(v.stage.Code, v.w-2, false); big != nil {
			for _, r := range big {
				out = append(out, "  "+th.Accent.Render(r))
			}
		}
	}
	for _, w := range ways {
		out = append(out, "  "+th.Accent.Render(draw.Fit(w, v.w-2)))
	}
	return append(out, "")
}

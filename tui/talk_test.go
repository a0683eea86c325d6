package tui

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/talk"
	"github.com/locklab/locklab/themes"
)

// loadTalk reads a talk of testdata and the logs its scenes name.
func loadTalk(t testing.TB, name string) (*talk.Talk, []*scenario.Loaded) {
	t.Helper()
	tk, err := talk.Load(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var logs []*scenario.Loaded
	for _, sc := range tk.Scenes {
		logs = append(logs, loadTestdata(t, filepath.Base(sc.Log)))
	}
	return tk, logs
}

// TestTalkPlaysWithRightOnly gives a talk of three scenes with → alone,
// from the first title card to the end card, while a notes client attached
// to its socket sees each beat's note as the beat comes.
func TestTalkPlaysWithRightOnly(t *testing.T) {
	t.Parallel()
	tk, logs := loadTalk(t, "talk-3.yaml")
	dir, err := os.MkdirTemp("", "ll") // short: a socket's path is limited
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	pub, err := talk.Publish(filepath.Join(dir, "t.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	ctx, cancel := context.WithCancel(context.Background())
	notes := make(chan talk.Position, 256)
	followed := make(chan struct{})
	go func() {
		defer close(followed)
		talk.Follow(ctx, pub.Path(), func(bool) {}, func(p talk.Position) { notes <- p })
	}()
	defer func() { cancel(); <-followed }()

	app := New(Options{Theme: themes.Mono(), Talk: tk, TalkLogs: logs, Publish: pub.Send, Speed: 10, SpeedSet: true})
	tm := teatest.NewTestModel(t, app, teatest.WithInitialTermSize(100, 30))
	term := &terminal{tm: tm}
	right := tea.KeyMsg{Type: tea.KeyRight}
	// waitNote waits until the notes client has seen want.
	waitNote := func(want string) {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			select {
			case p := <-notes:
				if p.Notes == want {
					return
				}
			case <-deadline:
				t.Fatalf("the notes client never saw %q", want)
			}
		}
	}
	step := func(what string) {
		t.Helper()
		mark := len(term.all)
		tm.Send(right)
		term.waitFor(t, what, since(mark, func(b []byte) bool { return bytes.Contains(b, []byte(what)) }))
	}
	term.waitFor(t, "card 1", func(b []byte) bool { return bytes.Contains(b, []byte("scene 1 of 3")) })
	waitNote("card 1")
	beats := []int{4, 3, 4}
	for i, n := range beats {
		if i > 0 {
			step(fmt.Sprintf("scene %d of 3", i+1))
			waitNote(fmt.Sprintf("card %d", i+1))
		}
		for b := 1; b <= n; b++ {
			step(fmt.Sprintf("beat %d of %d", b, n))
			waitNote(fmt.Sprintf("s%db%d", i+1, b))
			if i == 0 && b == 2 && !bytes.Contains(term.all, []byte("EXTRA CAPTION TWO")) {
				t.Error("the talk's extra caption for beat 2 is not on screen")
			}
		}
	}
	step("the end of the talk")
	tm.Send(keyRunes("q")) // on stage, quitting asks once
	tm.Send(keyRunes("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
}

// TestTalkKeysStayInTheTalk: Esc neither leaves a scene nor the talk, and
// ← at the first beat goes back to the scene's title card.
func TestTalkKeysStayInTheTalk(t *testing.T) {
	t.Parallel()
	tk, logs := loadTalk(t, "talk-3.yaml")
	app := New(Options{Theme: themes.Mono(), Talk: tk, TalkLogs: logs, Speed: 10, SpeedSet: true})
	app.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	now := time.Unix(0, 0)
	frames := func(n int) {
		for range n {
			now = now.Add(frameEvery)
			app.Update(frameMsg(now))
		}
	}
	press := func(k tea.KeyMsg) { app.Update(k); frames(1) }
	press(tea.KeyMsg{Type: tea.KeyEsc})
	if !app.talk.card || app.talk.i != 0 {
		t.Fatal("esc left the first title card")
	}
	press(tea.KeyMsg{Type: tea.KeyRight})
	frames(300) // plays to the first beat
	if app.run == nil || !app.run.pr.waiting {
		t.Fatal("the scene did not stop at its first beat")
	}
	press(tea.KeyMsg{Type: tea.KeyEsc})
	if app.talk.card || app.run == nil || app.screen != screenRun {
		t.Fatal("esc left the scene")
	}
	press(tea.KeyMsg{Type: tea.KeyLeft})
	if !app.talk.card || app.talk.i != 0 {
		t.Fatal("← at the first beat did not go back to the title card")
	}
}

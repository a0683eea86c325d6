package tui

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/store"
	"github.com/locklab/locklab/themes"
)

// BenchmarkLobbyView130 is one frame of a viewer's lobby of 130
// attendees at 120×40: every SSH participant draws it ten times a second.
//
//	go test ./tui -run '^$' -bench LobbyView130
func BenchmarkLobbyView130(b *testing.B) {
	st := NewStage("room load", "")
	var l []Attendee
	for i := range 130 {
		l = append(l, Attendee{Name: fmt.Sprintf("p%03d", i), Workers: 3})
	}
	st.setLobby(l, nil)
	st.WaysIn = []string{"ssh -p 2222 load@10.0.0.5", "locklab join K7QX2M@10.0.0.5"}
	st.Code = "K7QX2M"
	v := NewHostView(st, nil, themes.Dark(), 120, 40)
	b.ResetTimer()
	for range b.N {
		v.Update(frameMsg(time.Now()))
		_ = v.View()
	}
}

// BenchmarkRoomView390 is one frame of an SSH participant's view (80×24)
// of a finished round of 390 lanes, replaying: the frame's fold and View.
//
//	go test ./tui -run '^$' -bench RoomView390
func BenchmarkRoomView390(b *testing.B) {
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	def, _ := scenario.Lookup("oversell")
	p := def.Defaults
	p.Workers, p.Stock = 390, 100
	run, err := scenario.Start(ctx, st, scenario.Config{Scenario: "oversell", Strategy: "none", Params: p, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	if err := run.Wait(); err != nil {
		b.Fatal(err)
	}
	stage := NewStage("bench", "")
	stage.SetRound(run)
	v := NewHostView(stage, nil, themes.Dark(), 80, 24)
	t := time.Now()
	b.ResetTimer()
	for range b.N {
		t = t.Add(100 * time.Millisecond)
		v.Update(frameMsg(t))
		_ = v.View()
	}
}

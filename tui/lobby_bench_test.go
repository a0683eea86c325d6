package tui

import (
	"fmt"
	"testing"
	"time"

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

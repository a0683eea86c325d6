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

func TestParticipantViewOf390Lanes(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	def, _ := scenario.Lookup("oversell")
	p := def.Defaults
	p.Workers, p.Stock = 390, 100
	run, err := scenario.Start(ctx, st, scenario.Config{Scenario: "oversell", Strategy: "none", Params: p, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Wait(); err != nil {
		t.Fatal(err)
	}
	var lanes []string
	for i := range 100 {
		for w := range 3 {
			lanes = append(lanes, fmt.Sprintf("p%03d/%d", i+1, w+1))
		}
	}
	for i := range 30 {
		for w := range 3 {
			lanes = append(lanes, fmt.Sprintf("j%02d/%d", i+1, w+1))
		}
	}
	run.Header.Lanes = lanes
	stage := NewStage("bench", "")
	stage.SetRound(run)
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		for _, me := range []string{"p001", "p050", "p100"} {
			v := NewParticipantView(stage, &Participation{Name: me, Said: &Said{}, Done: make(chan struct{})}, themes.Dark(), size[0], size[1])
			now := time.Now()
			for range 30 {
				now = now.Add(100 * time.Millisecond)
				v.Update(frameMsg(now))
				_ = v.View()
			}
		}
	}
}

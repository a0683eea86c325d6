package tui

import (
	"fmt"
	"strings"

	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui/timeline"
)

// stockNow is the stock at cursor k: initial, current, sold, expected.
type stockNow struct {
	initial, current, expected int64
	sold                       int
}

func stockAt(tl *timeline.Timeline, k int) stockNow {
	pts, sold := tl.StockAt(k)
	s := stockNow{initial: tl.Initial, current: tl.Initial, sold: sold}
	if len(pts) > 0 {
		s.current = pts[len(pts)-1].Stock
	}
	s.expected = s.initial - int64(sold)
	return s
}

// gauge renders the stock box content: the numbers and a bar of sold
// against the stock there was; oversold in the alarm style.
func gauge(th *themes.Theme, tl *timeline.Timeline, k, width int) []string {
	if !tl.HasStock {
		return []string{th.Muted.Render("no stock in this scenario")}
	}
	s := stockAt(tl, k)
	over := int64(s.sold) > s.initial
	num := th.Text
	if over {
		num = th.Alarm
	}
	line1 := fmt.Sprintf("initial %s  current %s", th.Text.Render(fmt.Sprint(s.initial)), num.Render(fmt.Sprint(s.current)))
	line2 := fmt.Sprintf("expected %s  sold %s", num.Render(fmt.Sprint(s.expected)), num.Render(fmt.Sprintf("%d of %d", s.sold, s.initial)))
	barW := max(width-12, 4)
	denom := max(s.initial, int64(s.sold), 1)
	okCells := int(int64(barW) * min(int64(s.sold), s.initial) / denom)
	overCells := 0
	if over {
		overCells = barW - int(int64(barW)*s.initial/denom)
	}
	bar := th.OK.Render(strings.Repeat("█", okCells)) + th.Alarm.Render(strings.Repeat("▓", overCells)) +
		th.Muted.Render(strings.Repeat("░", max(barW-okCells-overCells, 0)))
	tag := th.OK.Render(" ok")
	if over {
		tag = th.Alarm.Render(" OVERSOLD")
	}
	return []string{line1, line2, bar + tag}
}

// gaugeLine is the one-line stock summary of the compact layout.
func gaugeLine(th *themes.Theme, tl *timeline.Timeline, k int) string {
	if !tl.HasStock {
		return ""
	}
	s := stockAt(tl, k)
	text := fmt.Sprintf("stock %d → %d   sold %d of %d   expected %d", s.initial, s.current, s.sold, s.initial, s.expected)
	if int64(s.sold) > s.initial {
		return th.Alarm.Render(text + "   OVERSOLD")
	}
	return th.Text.Render(text)
}

package draw

import (
	"fmt"
	"strings"

	"github.com/locklab/locklab/check"

	"github.com/locklab/locklab/themes"
	"github.com/locklab/locklab/tui/timeline"
)

// stockNow is the stock at cursor k, as the run's tally has it: initial,
// current, sold, expected, the lost updates, the stale writes and the
// checker's violations so far.
type stockNow struct {
	initial, current, expected int64
	sold, lost, violations     int
	staleLanded, staleRefused  int
	saved                      bool
}

func StockAt(tl *timeline.Timeline, k int) stockNow {
	t := tl.TallyAt(k)
	return stockNow{initial: int64(t.Get(check.NInitialStock)), current: int64(t.Get(check.NCurrentStock)),
		expected: t.Expected(), sold: t.Get(check.NSold), lost: t.Get(check.NLostUpdates),
		violations: t.Get(check.NViolations), staleLanded: t.Get(check.NStaleLanded),
		staleRefused: t.Get(check.NStaleRefused), saved: t.SavedByFencing()}
}

// verdictTag is the gauge's tag: ok only while the checker has found
// nothing; saved when fencing refused the stale write that an overlap
// would have made; oversold, or the number of violations, in the alarm
// style.
func (s stockNow) tag(th *themes.Theme) string {
	switch {
	case int64(s.sold) > s.initial:
		return th.Alarm.Render("OVERSOLD")
	case s.saved:
		return th.OK.Render("SAVED BY FENCING")
	case s.violations > 0:
		return th.Alarm.Render(fmt.Sprintf("UNSAFE: %d violation(s)", s.violations))
	}
	return th.OK.Render("ok")
}

// staleWords is "  stale landed 1 refused 0" (stale writes) once there is one.
func (s stockNow) staleWords() string {
	if s.staleLanded == 0 && s.staleRefused == 0 {
		return ""
	}
	return fmt.Sprintf("  stale landed %d refused %d", s.staleLanded, s.staleRefused)
}

// Gauge renders the stock box's content: sold against the stock there was,
// the counter, the lost updates, and a bar; anything the checker found
// turns it to the alarm style.
func Gauge(th *themes.Theme, tl *timeline.Timeline, k, width int) []string {
	if !tl.HasStock {
		return nil
	}
	s := StockAt(tl, k)
	over := int64(s.sold) > s.initial
	num := th.Text
	if over || (s.violations > 0 && !s.saved) {
		num = th.Alarm
	}
	lostStyle := th.Text
	if s.lost > 0 {
		lostStyle = th.Alarm
	}
	line1 := fmt.Sprintf("sold %s  stock %s → %s  expected %s", num.Render(fmt.Sprintf("%d of %d", s.sold, s.initial)),
		th.Text.Render(fmt.Sprint(s.initial)), num.Render(fmt.Sprint(s.current)), num.Render(fmt.Sprint(s.expected)))
	line2 := fmt.Sprintf("lost updates %s", lostStyle.Render(fmt.Sprint(s.lost))) + th.Muted.Render(s.staleWords())
	tag := s.tag(th)
	barW := max(width-AnsiWidth(tag)-1, 4)
	denom := max(s.initial, int64(s.sold), 1)
	okCells := int(int64(barW) * min(int64(s.sold), s.initial) / denom)
	overCells := 0
	if over {
		overCells = barW - int(int64(barW)*s.initial/denom)
	}
	sold := th.OK
	if s.violations > 0 && !s.saved {
		sold = th.Warn
	}
	bar := sold.Render(strings.Repeat("█", okCells)) + th.Alarm.Render(strings.Repeat("▓", overCells)) +
		th.Muted.Render(strings.Repeat("░", max(barW-okCells-overCells, 0)))
	return []string{line1, line2, bar + " " + tag}
}

// GaugeLine is the one-line stock summary of the compact layout.
func GaugeLine(th *themes.Theme, tl *timeline.Timeline, k int) string {
	if !tl.HasStock {
		return ""
	}
	s := StockAt(tl, k)
	text := fmt.Sprintf("stock %d → %d  sold %d of %d  lost updates %d%s  ", s.initial, s.current, s.sold, s.initial, s.lost, s.staleWords())
	if int64(s.sold) > s.initial || (s.violations > 0 && !s.saved) {
		return th.Alarm.Render(text) + s.tag(th)
	}
	return th.Text.Render(text) + s.tag(th)
}

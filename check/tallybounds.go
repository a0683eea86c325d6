package check

import (
	"fmt"
	"strings"
)

// What the tally's fold holds is bounded whatever the log: per resource a
// few counts, per worker and resource one read at most (maxReads in all),
// the writes a held read may still have seen overtaken (maxWrites in
// all), and per worker maxRenewing tokens. A log no run writes can pass
// these bounds; the counts they cost are then said to be unknown or
// bounds (UntrackedWords), never given as exact.

// Held is how many entries the fold holds: the reads, writes, tokens and
// unpaired derived events its memory grows with.
func (f *TallyFold) Held() int {
	n := f.upd.Held() + f.rd.Checker.Held() + f.rd.Held() + len(f.moot) + len(f.sysRenewing)
	for i := range f.ws {
		n += len(f.ws[i].renewing)
	}
	return n
}

// LostUnknown reports whether the lost updates are unknown: the fold let
// go of reads it could not hold.
func (t *Tally) LostUnknown() bool { return t.c[NLostUnknown] > 0 }

// UntrackedWords says which counts the fold's bounds made unknown or
// bounds, and why, one item each; none when every count is exact.
func (t *Tally) UntrackedWords() []string {
	var p []string
	if t.c[NLostUnknown] > 0 {
		p = append(p, fmt.Sprintf("lost updates: unknown (past %s reads held)", thousands(maxReads)))
	}
	if t.c[NStaleUnknown] > 0 {
		p = append(p, fmt.Sprintf("stale writes landed: a lower bound (past %s held)", thousands(maxReads)))
	}
	if t.c[NRenewUnknown] > 0 {
		p = append(p, fmt.Sprintf("unanswered renewals: an upper bound (past %d tokens a worker)", maxRenewing))
	}
	return p
}

// untrackedVerdict: a run in which nothing was seen wrong, but whose lost
// updates or stale writes the fold could not follow, is not called
// correct — whether it is cannot be told.
func (s *Summary) untrackedVerdict() {
	if len(s.Untracked) == 0 || !strings.HasPrefix(s.Verdict, "CORRECT") {
		return
	}
	s.Verdict = "UNKNOWN — the log passed the checker's bounds (" + strings.Join(s.Untracked, "; ") + ")"
	s.Detail = "No violation was seen, but a log no run writes held more than the checker keeps: whether updates were lost cannot be told from it."
}

package themes

import "github.com/charmbracelet/lipgloss"

// Symbol is one word of locklab's glyph language: a worker state or a mark
// on a lock lane, the time axis or a node row. The first StateCount symbols
// are the worker states, in the same order.
type Symbol uint8

// The marks after the states.
const (
	SymHeld      Symbol = Symbol(StateCount) + iota // a lock held, in the holder's colour
	SymHeldNoTTL                                    // a lock held that never expires
	SymRenewal                                      // the holder extended the TTL
	SymLapse                                        // the TTL ran out while the holder still worked
	SymExpired                                      // the TTL ran out, the holder not working
	SymForeign                                      // a release deleted someone else's lock
	SymRefused                                      // a release was refused
	SymLost                                         // a watchdog gave the lock up
	SymOverlap                                      // two or more workers in the critical section
	SymDeadlock                                     // a wait-for cycle closed
	SymBeat                                         // a beat of the story
	SymNodeUp                                       // a Redis node answering
	SymNodeDown                                     // a Redis node stopped
	SymNodeClock                                    // a node whose clock was moved
	SymFailover                                     // a replica promoted in a node's place
	SymVoteNone                                     // a node has not answered yet
	SymNetFault                                     // a network fault on a worker's link to a node
	SymbolCount
)

// Role is the colour role a glyph is drawn in: which of the theme's styles.
type Role uint8

// The roles.
const (
	RoleState  Role = iota // the state's own style (Theme.States)
	RoleHolder             // the colour of the worker concerned
	RoleMuted
	RoleOK
	RoleWarn
	RoleAlarm
	RoleAccent
	RoleRenewal
	RoleLapse
)

// Place is where a glyph appears; a glyph may appear in several.
type Place uint8

// The places.
const (
	InLanes Place = 1 << iota // worker swimlanes
	InLocks                   // lock lanes
	InAxis                    // the time axis under the lanes
	InNodes                   // Redlock node rows
)

// Glyph is an entry of the glyph table.
type Glyph struct {
	Rune    rune
	Role    Role
	Places  Place
	Meaning string
}

// Table is the glyph language: every glyph locklab draws, once. Lanes,
// lock lanes, the axis, node rows, the legend, the help and the README all
// read it; a glyph means the same thing wherever it appears.
var Table = [SymbolCount]Glyph{
	Symbol(Idle):       {'·', RoleState, InLanes, "idle"},
	Symbol(Attempting): {'?', RoleState, InLanes, "attempting"},
	Symbol(Waiting):    {'░', RoleState, InLanes, "waiting"},
	Symbol(Holding):    {'▒', RoleState, InLanes, "holding"},
	Symbol(Critical):   {'█', RoleState, InLanes, "critical"},
	Symbol(Paused):     {'‖', RoleState, InLanes | InNodes, "paused"},
	Symbol(Crashed):    {'†', RoleState, InLanes | InAxis, "crashed"},
	Symbol(Violation):  {'✖', RoleState, InLanes | InAxis, "violation"},
	Symbol(DoneOK):     {'✓', RoleState, InLanes | InLocks, "ok"},
	Symbol(DoneFail):   {'✗', RoleState, InLanes | InLocks, "failed"},
	SymHeld:            {'━', RoleHolder, InLocks, "held (holder's colour)"},
	SymHeldNoTTL:       {'═', RoleAlarm, InLocks, "held, no TTL: never expires (∞)"},
	SymRenewal:         {'┿', RoleRenewal, InLocks, "TTL renewed"},
	SymLapse:           {'×', RoleLapse, InLocks | InAxis, "TTL lapsed under a working holder"},
	SymExpired:         {'∘', RoleWarn, InLocks, "TTL ran out"},
	SymForeign:         {'⊘', RoleAlarm, InLocks, "deleted another's lock"},
	SymRefused:         {'!', RoleWarn, InLocks, "release refused"},
	SymLost:            {'↯', RoleWarn, InLocks, "lock lost"},
	SymOverlap:         {'▲', RoleAlarm, InAxis, "two inside at once"},
	SymDeadlock:        {'↻', RoleAlarm, InAxis, "deadlock"},
	SymBeat:            {'◆', RoleAccent, InAxis, "beat"},
	SymNodeUp:          {'●', RoleOK, InNodes, "node up"},
	SymNodeDown:        {'○', RoleAlarm, InNodes, "node stopped"},
	SymNodeClock:       {'±', RoleWarn, InNodes, "clock moved"},
	SymFailover:        {'⇄', RoleWarn, InNodes, "failed over"},
	SymVoteNone:        {'-', RoleMuted, InLocks, "no vote yet"},
	SymNetFault:        {'≈', RoleWarn, InNodes, "network fault"},
}

// Rune is s's glyph.
func (s Symbol) Rune() rune { return Table[s].Rune }

// Style is the style symbol s is drawn in; holder is the worker concerned,
// for RoleHolder.
func (t *Theme) Style(s Symbol, holder int) lipgloss.Style {
	switch Table[s].Role {
	case RoleState:
		if s < Symbol(StateCount) {
			return t.States[s]
		}
	case RoleHolder:
		return t.Worker(holder)
	case RoleMuted:
		return t.Muted
	case RoleOK:
		return t.OK
	case RoleWarn:
		return t.Warn
	case RoleAlarm:
		return t.Alarm
	case RoleAccent:
		return t.Accent
	case RoleRenewal:
		return t.Renewal
	case RoleLapse:
		return t.Lapse
	}
	return t.Text
}

// Mark renders symbol s once, for holder (RoleHolder).
func (t *Theme) Mark(s Symbol, holder int) string {
	return t.Style(s, holder).Render(string(Table[s].Rune))
}

// Legend lists the symbols that appear in place p, in table order.
func Legend(p Place) []Symbol {
	var out []Symbol
	for s := range SymbolCount {
		if Table[s].Places&p != 0 {
			out = append(out, s)
		}
	}
	return out
}

package event

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// errSlowPath sends a line to encoding/json, for anything the fast decoder
// does not handle (or an error, which encoding/json then words exactly).
var errSlowPath = errors.New("slow path")

// decodeEvent is a fast decoder for one event line: it reads the fields
// locklab writes, skips any others, and gives up (errSlowPath) on anything
// unusual so that encoding/json decides. It never accepts what
// encoding/json would reject as a JSON object.
func decodeEvent(b []byte, e *Event) (hasT, hasWorker bool, err error) {
	d := Decoder{b: b}
	return d.event(e)
}

// NewDecoder returns a Decoder that keeps one copy of each string it reads.
func NewDecoder() *Decoder { return &Decoder{strs: map[string]string{}} }

// Decode reads the event on line b into e, as decodeEvent does.
func (d *Decoder) Decode(b []byte, e *Event) (hasT, hasWorker bool, err error) {
	d.b, d.i = b, 0
	return d.event(e)
}

func (d *Decoder) event(e *Event) (hasT, hasWorker bool, err error) {
	*e = Event{Worker: System}
	d.space()
	if !d.byte('{') {
		return false, false, errSlowPath
	}
	d.space()
	if d.byte('}') {
		return false, false, d.end()
	}
	for {
		d.space()
		key, ok := d.plainBytes()
		if !ok {
			return false, false, errSlowPath
		}
		d.space()
		if !d.byte(':') {
			return false, false, errSlowPath
		}
		d.space()
		ok = d.field(key, e, &hasT, &hasWorker)
		if !ok {
			return false, false, errSlowPath
		}
		d.space()
		if d.byte('}') {
			return hasT, hasWorker, d.end()
		}
		if !d.byte(',') {
			return false, false, errSlowPath
		}
	}
}

// field reads the value of key into e; false sends the line to the slow
// path (a value it does not read, a key only encoding/json matches).
func (d *Decoder) field(key []byte, e *Event, hasT, hasWorker *bool) (ok bool) {
	switch string(key) {
	case "seq":
		e.Seq, ok = d.int()
	case "t":
		var us int64
		us, ok = d.int()
		e.T, *hasT = durationOf(us), ok
	case "call":
		var us int64
		us, ok = d.int()
		e.Call, e.Has = durationOf(us), e.Has|HasCall
	case "outcome":
		var o []byte
		o, ok = d.plainBytes()
		switch string(o) {
		case "failed":
			e.Outcome = OutcomeFailed
		case "indeterminate":
			e.Outcome = OutcomeIndeterminate
		case "gave_up":
			e.Outcome = OutcomeGaveUp
		}
	case "worker":
		var w int64
		w, ok = d.intIn(32)
		e.Worker, *hasWorker = int32(w), ok
	case "kind":
		var k []byte
		k, ok = d.plainBytes()
		e.Kind = d.kind(k)
	case "res":
		e.Res, ok = d.str()
	case "token":
		e.Token, ok = d.str()
	case "code":
		e.Code, ok = d.str()
	case "msg":
		e.Msg, ok = d.str()
	case "fence":
		e.Fence, ok = d.int()
		e.Has |= HasFence
	case "stock":
		e.Stock, ok = d.int()
		e.Has |= HasStock
	case "ttl_ms":
		e.TTL, ok = d.millis()
		e.Has |= HasTTL
	case "delay_ms":
		e.Delay, ok = d.millis()
		e.Has |= HasDelay
	case "node":
		var n int64
		n, ok = d.intIn(16)
		e.Node, e.Has = int16(n), e.Has|HasNode
	case "peer":
		var n int64
		n, ok = d.intIn(32)
		e.Peer, e.Has = int32(n), e.Has|HasPeer
	case "attempt":
		var n int64
		n, ok = d.intIn(32)
		e.Attempt, e.Has = int32(n), e.Has|HasAttempt
	case "ok":
		e.OK, ok = d.bool()
		e.Has |= HasOK
	case "summary": // the end record
		return false
	default:
		if knownKey(string(key)) { // encoding/json matches keys regardless of case
			return false
		}
		ok = d.skipScalar()
	}
	return ok
}

var knownKeys = []string{"seq", "t", "call", "outcome", "worker", "kind", "res", "token", "code", "msg", "fence", "stock",
	"ttl_ms", "delay_ms", "node", "peer", "attempt", "ok", "summary"}

func knownKey(k string) bool {
	for _, n := range knownKeys {
		if strings.EqualFold(k, n) {
			return true
		}
	}
	return false
}

type Decoder struct {
	b    []byte
	i    int
	strs map[string]string // reuses the strings of earlier lines
	// recent are strings and kinds read lately, by length and first
	// byte: a log repeats its keys, tokens, messages and kinds, and
	// comparing with one of them costs less than hashing for a map.
	recent [16]string
	kinds  [8]Kind
}

// slot is where recent strings of b's length and first byte are kept.
func slot(b []byte, n int) int {
	if len(b) == 0 {
		return 0
	}
	return (len(b) ^ int(b[0])) & (n - 1)
}

// kind is the kind named b (KindUnknown for a name it does not know).
func (d *Decoder) kind(b []byte) Kind {
	c := &d.kinds[slot(b, len(d.kinds))]
	if *c != KindUnknown && kindNames[*c] == string(b) {
		return *c
	}
	k := kindByName[string(b)]
	if k != KindUnknown {
		*c = k
	}
	return k
}

func (d *Decoder) space() {
	b, i := d.b, d.i // in registers: the loops below run for every byte of a log
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	d.i = i
}

func (d *Decoder) byte(c byte) bool {
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

func (d *Decoder) end() error {
	d.space()
	if d.i != len(d.b) {
		return errSlowPath
	}
	return nil
}

// plainString reads a string without escapes or control bytes.
func (d *Decoder) plainString() (string, bool) {
	b, ok := d.plainBytes()
	if !ok {
		return "", false
	}
	if d.strs == nil {
		return string(b), true
	}
	c := &d.recent[slot(b, len(d.recent))]
	if *c == string(b) && len(b) > 0 {
		return *c, true
	}
	if s, ok := d.strs[string(b)]; ok {
		*c = s
		return s, true
	}
	s := string(b)
	if len(d.strs) < 1<<16 && len(s) <= 256 { // a long string (longer than a name, MaxNameBytes) is not worth keeping
		d.strs[s] = s
		*c = s
	}
	return s, true
}

// plainBytes reads a string without escapes or control bytes, in place.
func (d *Decoder) plainBytes() ([]byte, bool) {
	if !d.byte('"') {
		return nil, false
	}
	b, i := d.b, d.i
	start := i
	ascii := true
	for ; i < len(b); i++ {
		c := b[i]
		if plain[c] {
			continue
		}
		switch {
		case c == '"':
			if !ascii && !utf8.Valid(b[start:i]) {
				return nil, false // encoding/json would replace the bad bytes
			}
			d.i = i + 1
			return b[start:i], true
		case c >= 0x80:
			ascii = false
		default: // a backslash or a control byte
			return nil, false
		}
	}
	return nil, false
}

// plain are the bytes a string without escapes holds as they are: not
// its closing quote, a backslash, a control byte or a byte past ASCII.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str reads a string without escapes; one with escapes (or control
// bytes) sends the line to the slow path, encoding/json.
func (d *Decoder) str() (string, bool) {
	return d.plainString()
}

func (d *Decoder) int() (int64, bool) {
	b, i := d.b, d.i
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := i
	var n int64
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		n = n*10 + int64(b[i]-'0') // wraps past 18 digits: not used then
	}
	d.i = i
	if i == digits || (b[digits] == '0' && i-digits > 1) {
		return 0, false
	}
	if i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E') {
		return 0, false
	}
	if i-digits <= 18 { // fits in an int64 whatever its digits: no overflow to check
		if start != digits {
			n = -n
		}
		return n, true
	}
	n, err := strconv.ParseInt(string(b[start:i]), 10, 64)
	return n, err == nil
}

// intIn reads an integer that fits in a signed integer of bits bits.
func (d *Decoder) intIn(bits uint) (int64, bool) {
	n, ok := d.int()
	return n, ok && n >= -1<<(bits-1) && n < 1<<(bits-1)
}

// millis reads milliseconds with at most three decimals, as µs precision.
func (d *Decoder) millis() (time.Duration, bool) {
	start := d.i
	if d.i < len(d.b) && d.b[d.i] == '-' {
		d.i++
	}
	for d.i < len(d.b) && (d.b[d.i] >= '0' && d.b[d.i] <= '9' || d.b[d.i] == '.' || d.b[d.i] == 'e' || d.b[d.i] == 'E' || d.b[d.i] == '+' || d.b[d.i] == '-') {
		d.i++
	}
	var m Millis
	if err := m.UnmarshalJSON(d.b[start:d.i]); err != nil || !validNumber(d.b[start:d.i]) {
		return 0, false
	}
	return m.D(), true
}

// validNumber reports whether b is a JSON number.
func validNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i == len(b) {
		return false
	}
	if b[i] == '0' {
		i++
	} else {
		if b[i] < '1' || b[i] > '9' {
			return false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && b[i] == '.' {
		i++
		n := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == n {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		n := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == n {
			return false
		}
	}
	return i == len(b)
}

func (d *Decoder) bool() (bool, bool) {
	switch {
	case len(d.b)-d.i >= 4 && string(d.b[d.i:d.i+4]) == "true":
		d.i += 4
		return true, true
	case len(d.b)-d.i >= 5 && string(d.b[d.i:d.i+5]) == "false":
		d.i += 5
		return false, true
	}
	return false, false
}

// skipScalar skips an unknown field's value when it is a plain string,
// number, boolean or null; anything else takes the slow path.
func (d *Decoder) skipScalar() bool {
	if d.i >= len(d.b) {
		return false
	}
	switch c := d.b[d.i]; {
	case c == '"':
		_, ok := d.plainBytes()
		return ok
	case c == 't' || c == 'f':
		_, ok := d.bool()
		return ok
	case c == 'n':
		if len(d.b)-d.i >= 4 && string(d.b[d.i:d.i+4]) == "null" {
			d.i += 4
			return true
		}
		return false
	case c == '-' || c >= '0' && c <= '9':
		start := d.i
		for d.i < len(d.b) && (d.b[d.i] >= '0' && d.b[d.i] <= '9' || d.b[d.i] == '.' || d.b[d.i] == 'e' || d.b[d.i] == 'E' || d.b[d.i] == '+' || d.b[d.i] == '-') {
			d.i++
		}
		return validNumber(d.b[start:d.i])
	}
	return false
}

// DecodeEvent reads one event written by AppendJSON.
func DecodeEvent(b []byte) (Event, error) {
	var e Event
	_, _, err := decodeEvent(b, &e)
	if errors.Is(err, errSlowPath) {
		var w Wire
		if err := json.Unmarshal(b, &w); err != nil {
			return Event{}, err
		}
		return w.Event(), nil
	}
	return e, err
}

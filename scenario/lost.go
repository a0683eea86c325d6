package scenario

// Updates counts lost updates: the one count the summary, the verdict, the
// gauge and the JSON all show. Each successful write to a resource is based
// on the version its worker last read (or on the latest version, when it
// did not read); a write's effect survives when a chain of writes, each
// based on the one before, leads from it to the resource's current
// version. Lost updates are the writes whose effect did not survive:
// writes − the length of the current version's chain. For a counter that
// every sale decrements, that is sold − (initial − final).
//
// The log's order is not the order the server applied things (an event is
// stamped when its answer arrives), so the count never rests on it where
// values decide: once the run's own final read of a counter is in — a
// counter whose every write was the value its worker read minus one — the
// count is writes − (initial − final), the same under every order of the
// operations. Until then, and for other resources, it follows the log's
// order. Writes that were never answered (indeterminate) may have landed:
// LostMax adds them, so the count is a bound [Lost, LostMax].
type Updates struct {
	res     map[string]*updChain
	read    map[readKey]int   // version of Res when Worker last read it
	readVal map[readKey]int64 // the value it read
}

type updChain struct {
	depth []int32 // depth[v−1]: chain length of version v (version 0 is the start)
	lost  int     // by the chain of the log's order

	initial, final     int64
	stocked, hasFinal  bool
	notCounter         bool // a write that was not its read minus one, or blind
	writes, unanswered int
}

// count is the chain's lost updates: by values once they decide.
func (c *updChain) count() int {
	if c.stocked && c.hasFinal && !c.notCounter && c.writes > 0 {
		return max(c.writes-int(c.initial-c.final), 0)
	}
	return c.lost
}

func (c *updChain) at(v int) int32 {
	if v <= 0 || v > len(c.depth) {
		return 0
	}
	return c.depth[v-1]
}

// Fold takes one event into the count.
func (u *Updates) Fold(e *Event) {
	switch e.Kind {
	case KindInit:
		if e.Has&HasStock != 0 {
			c := u.chain(e.Res)
			c.initial, c.stocked = e.Stock, true
		}
	case KindError:
		if e.Code == "write" && e.Outcome == OutcomeIndeterminate {
			u.chain(e.Res).unanswered++
		}
	case KindRead:
		if e.Worker == System {
			if e.Has&HasStock != 0 {
				c := u.chain(e.Res)
				c.final, c.hasFinal = e.Stock, true
			}
			return
		}
		if u.read == nil {
			u.read, u.readVal = map[readKey]int{}, map[readKey]int64{}
		}
		k := readKey{e.Res, e.Worker}
		u.read[k] = len(u.chain(e.Res).depth)
		if e.Has&HasStock != 0 {
			u.readVal[k] = e.Stock
		} else {
			delete(u.readVal, k)
		}
	case KindWrite:
		if e.Has&HasOK != 0 && !e.OK {
			return
		}
		c := u.chain(e.Res)
		base := len(c.depth)
		k := readKey{e.Res, e.Worker}
		if v, ok := u.read[k]; ok {
			base = v
			delete(u.read, k)
		}
		if v, ok := u.readVal[k]; !ok || e.Has&HasStock == 0 || e.Stock != v-1 {
			c.notCounter = true
		}
		delete(u.readVal, k)
		c.writes++
		before := len(c.depth) - int(c.at(len(c.depth)))
		c.depth = append(c.depth, c.at(base)+1)
		c.lost += len(c.depth) - int(c.at(len(c.depth))) - before
	}
}

func (u *Updates) chain(res string) *updChain {
	if u.res == nil {
		u.res = map[string]*updChain{}
	}
	c := u.res[res]
	if c == nil {
		c = &updChain{}
		u.res[res] = c
	}
	return c
}

// Lost is the number of lost updates so far, over every resource (the
// least, when unanswered writes leave it a bound).
func (u *Updates) Lost() int {
	n := 0
	for _, c := range u.res {
		n += c.count()
	}
	return n
}

// LostMax is the most lost updates there can have been: Lost, plus the
// writes that were never answered and may have landed.
func (u *Updates) LostMax() int {
	n := u.Lost()
	for _, c := range u.res {
		n += c.unanswered
	}
	return n
}

// LostUpdates counts the lost updates of a run's events.
func LostUpdates(events Events) int {
	var u Updates
	for i := range events.Len() {
		e := events.At(i)
		u.Fold(&e)
	}
	return u.Lost()
}

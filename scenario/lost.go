package scenario

// Updates counts lost updates: the one count the summary, the verdict, the
// gauge and the JSON all show. Each successful write to a resource is based
// on the version its worker last read (or on the latest version, when it
// did not read); a write's effect survives when a chain of writes, each
// based on the one before, leads from it to the resource's current
// version. Lost updates are the writes whose effect did not survive:
// writes − the length of the current version's chain. For a counter that
// every sale decrements, that is sold − (initial − final).
type Updates struct {
	res  map[string]*updChain
	read map[readKey]int // version of Res when Worker last read it
	lost int
}

type updChain struct {
	depth []int32 // depth[v−1]: chain length of version v (version 0 is the start)
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
	case KindRead:
		if e.Worker == System {
			return
		}
		if u.read == nil {
			u.read = map[readKey]int{}
		}
		u.read[readKey{e.Res, e.Worker}] = len(u.chain(e.Res).depth)
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
		before := len(c.depth) - int(c.at(len(c.depth)))
		c.depth = append(c.depth, c.at(base)+1)
		u.lost += len(c.depth) - int(c.at(len(c.depth))) - before
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

// Lost is the number of lost updates so far, over every resource.
func (u *Updates) Lost() int { return u.lost }

// LostUpdates counts the lost updates of a run's events.
func LostUpdates(events Events) int {
	var u Updates
	for i := range events.Len() {
		e := events.At(i)
		u.Fold(&e)
	}
	return u.Lost()
}

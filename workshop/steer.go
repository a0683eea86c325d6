package workshop

import (
	"fmt"

	"github.com/locklab/locklab/lock"
	"github.com/locklab/locklab/scenario"
)

// Next is what the host's next round races: the choices of the picker
// that a shared race can take.
type Next struct {
	Scenario string
	Strategy string
	Retry    string
	Stock    int64
}

// Next is what the next round will race.
func (h *Host) Next() Next {
	h.mu.Lock()
	defer h.mu.Unlock()
	return Next{Scenario: h.cfg.Scenario, Strategy: h.cfg.Strategy, Retry: h.cfg.Params.Retry, Stock: h.cfg.Params.Stock}
}

// SetNext changes what the next round races, from its opening on; the
// round on now is left as it is. A new scenario starts from its own
// defaults; a retry policy other than none gets retries to make.
func (h *Host) SetNext(n Next) error {
	if err := scenario.Joinable(n.Scenario, n.Strategy); err != nil {
		return err
	}
	if _, err := lock.ParsePolicy(n.Retry); err != nil {
		return fmt.Errorf("%q is not a retry policy: want one of %s", n.Retry, lock.PolicyNames())
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.cfg.Params
	if n.Scenario != h.cfg.Scenario {
		def, _ := scenario.Lookup(n.Scenario)
		p = def.Defaults
	}
	p.Retry, p.Stock = n.Retry, n.Stock
	if n.Retry != string(lock.RetryNone) && p.MaxRetries == 0 {
		p.MaxRetries = 20
	}
	p.Workers = 1 // the attendees bring theirs
	if err := p.Validate(); err != nil {
		return err
	}
	h.cfg.Scenario, h.cfg.Strategy, h.cfg.Params = n.Scenario, n.Strategy, p
	return nil
}

package clock

import "context"

// A Gate is what an actor whose context carries it passes after each of
// its sleeps on a clock and around each command it sends to a store: a
// worker's way of stopping wherever it is while it is paused, as a stopped
// process does (SIGSTOP, a garbage-collection pause, a frozen VM). It
// blocks while its worker is paused and returns an error only if ctx ends
// meanwhile.
type Gate func(ctx context.Context) error

type gateKey struct{}

type pastGate struct{}

// WithGate makes every sleep on a clock and every store command made with
// ctx (or a context derived from it) pass g.
func WithGate(ctx context.Context, g Gate) context.Context {
	return context.WithValue(ctx, gateKey{}, g)
}

// PastGate is ctx with its gate lifted: for what runs while its worker is
// paused on purpose (the pause's own sleep), and for what a command sends
// inside itself, which must not stop twice.
func PastGate(ctx context.Context) context.Context {
	if ctx.Value(gateKey{}) == nil || ctx.Value(pastGate{}) != nil {
		return ctx
	}
	return context.WithValue(ctx, pastGate{}, true)
}

// PassGate waits at ctx's gate, if it has one.
func PassGate(ctx context.Context) error {
	if ctx.Value(pastGate{}) != nil {
		return nil
	}
	if g, ok := ctx.Value(gateKey{}).(Gate); ok {
		return g(ctx)
	}
	return nil
}

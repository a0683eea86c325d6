package store

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/clock"
)

// gateHook stops a command at its context's gate (clock.WithGate). It is
// every node client's first hook, so a paused worker stops before its
// command starts its trip (in a simulation, before its latency), and the
// reply of one already under way waits for the worker, which sees it — and
// the time then — only after the pause.
type gateHook struct{}

func (gateHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (gateHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		return gated(ctx, func(ctx context.Context) error { return next(ctx, cmd) }, cmd)
	}
}

func (gateHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		return gated(ctx, func(ctx context.Context) error { return next(ctx, cmds) }, cmds...)
	}
}

// gated runs do between two passes of ctx's gate; what do sends inside
// itself (the safety net's PEXPIRE) does not stop again. A worker that
// ends while paused (its run stopped, it crashed) never sees the reply:
// its commands fail with why.
func gated(ctx context.Context, do func(context.Context) error, cmds ...redis.Cmder) error {
	inner := clock.PastGate(ctx)
	if inner == ctx {
		return do(ctx)
	}
	if err := clock.PassGate(ctx); err != nil {
		return fail(ctx, err, cmds)
	}
	err := do(inner)
	if gerr := clock.PassGate(ctx); gerr != nil {
		return fail(ctx, gerr, cmds)
	}
	return err
}

package peers

import (
	"context"
	"fmt"
	"sync"
)

// gate is what every runner's Call and Close share: calls run concurrently,
// Close waits for them and runs once, a call after Close is ErrClosed, and
// every error names the runner.
type gate struct {
	name   string
	mu     sync.RWMutex // calls hold it shared, Close exclusively
	closed bool
}

// call runs fn as one call of the runner.
func (g *gate) call(ctx context.Context, fn func() ([]byte, error)) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", g.name, err)
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.closed {
		return nil, fmt.Errorf("%s: %w", g.name, ErrClosed)
	}
	out, err := fn()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", g.name, err)
	}
	return out, nil
}

// close runs release once, after the calls in progress.
func (g *gate) close(release func() error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil
	}
	g.closed = true
	if err := release(); err != nil {
		return fmt.Errorf("%s: close: %w", g.name, err)
	}
	return nil
}

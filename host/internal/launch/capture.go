package launch

import "sync"

// Capture is an io.Writer for a child's output that keeps the first Max
// bytes and counts the rest: a child (which may run untrusted code) cannot
// make the host hold more than Max bytes of its output. Writes never fail,
// so the child is never blocked or broken by the cap. It is safe for
// concurrent use.
type Capture struct {
	// Max is the number of bytes kept.
	Max int

	mu      sync.Mutex
	buf     []byte
	dropped int64
}

// Write keeps what fits under Max and reports the whole of p written.
func (c *Capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	keep := min(max(c.Max-len(c.buf), 0), len(p))
	c.buf = append(c.buf, p[:keep]...)
	c.dropped += int64(len(p) - keep)
	return len(p), nil
}

// Bytes returns a copy of the kept output.
func (c *Capture) Bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]byte(nil), c.buf...)
}

// Dropped is the number of bytes written beyond Max.
func (c *Capture) Dropped() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dropped
}

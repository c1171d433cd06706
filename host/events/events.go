package events

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Kinds of event. The names are Palyra's hook event names where it has one.
const (
	SkillInstalled   = "skill:installed"
	SkillUpdated     = "skill:updated"
	SkillEnabled     = "skill:enabled"
	SkillDisabled    = "skill:disabled"
	SkillQuarantined = "skill:quarantined"
	SkillRemoved     = "skill:removed"
	// SkillCrashLooping: the supervisor stopped restarting a version's
	// sidecar (the inventory status crashlooping).
	SkillCrashLooping = "skill:crashlooping"
)

// DefaultBuffer is the buffer of a subscription made with a buffer ≤ 0.
const DefaultBuffer = 256

// Event is one change to a skill.
type Event struct {
	// ID is the event's journal id in the inventory (0 when not journaled).
	ID        int64          `json:"id"`
	Kind      string         `json:"kind"`
	SkillID   string         `json:"skill_id"`
	Version   string         `json:"version"`
	Status    string         `json:"status,omitempty"`
	Reason    string         `json:"reason,omitempty"`
	Principal string         `json:"operator_principal,omitempty"`
	At        time.Time      `json:"at"`
	Details   map[string]any `json:"details,omitempty"`
}

// Bus delivers published events to its current subscribers. The zero value
// is ready to use.
type Bus struct {
	mu   sync.Mutex
	subs map[*Subscription]struct{}
}

// Subscription receives events published after it was made, in publish
// order, until it is closed or its context ends.
type Subscription struct {
	bus     *Bus
	ch      chan Event
	dropped atomic.Uint64
	once    sync.Once
	stop    func() bool
}

// Subscribe returns a subscription with room for buffer undelivered events
// (DefaultBuffer when buffer ≤ 0). It is closed when ctx ends or Close is
// called, whichever comes first; its channel is then closed.
func (b *Bus) Subscribe(ctx context.Context, buffer int) *Subscription {
	if buffer <= 0 {
		buffer = DefaultBuffer
	}
	s := &Subscription{bus: b, ch: make(chan Event, buffer)}
	b.mu.Lock()
	if b.subs == nil {
		b.subs = map[*Subscription]struct{}{}
	}
	b.subs[s] = struct{}{}
	b.mu.Unlock()
	// An ended ctx runs Close at once, concurrently: stop is set and read
	// under the bus's lock.
	stop := context.AfterFunc(ctx, s.Close)
	b.mu.Lock()
	s.stop = stop
	b.mu.Unlock()
	return s
}

// Publish delivers e to every subscriber that has room for it and counts a
// drop for every one that has not. It never blocks.
func (b *Bus) Publish(e Event) {
	if e.At.IsZero() {
		e.At = time.Now()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		select {
		case s.ch <- e:
		default:
			s.dropped.Add(1)
		}
	}
}

// Subscribers returns the number of open subscriptions.
func (b *Bus) Subscribers() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs)
}

// C returns the channel events arrive on. It is closed when the
// subscription closes.
func (s *Subscription) C() <-chan Event { return s.ch }

// Dropped returns how many events did not fit in the buffer.
func (s *Subscription) Dropped() uint64 { return s.dropped.Load() }

// Close ends the subscription and closes its channel. It is idempotent.
func (s *Subscription) Close() {
	s.once.Do(func() {
		s.bus.mu.Lock()
		stop := s.stop
		delete(s.bus.subs, s)
		close(s.ch)
		s.bus.mu.Unlock()
		if stop != nil {
			stop()
		}
	})
}

package broker

import (
	"maps"
	"sync"
	"time"
)

// Stats are the broker's counters for one skill since the broker started.
// The daemon exports them as metrics.
type Stats struct {
	// Invocations registered for the skill.
	Invocations int64 `json:"invocations"`
	// CapabilityCalls by kind ("http", "secret", "storage", "channel")
	// whose handle resolved.
	CapabilityCalls map[string]int64 `json:"capability_calls"`
	// Denials by reason: host_not_allowed, private_address, scheme_not_allowed,
	// port_not_allowed, redirect_denied, not_granted, quota reasons,
	// secret_read_disabled, read_only, ...
	Denials map[string]int64 `json:"denials"`
	// Failures that were not denials, by reason (timeout, upstream_failure,
	// too_large, invalid_request, unavailable, internal).
	Failures map[string]int64 `json:"failures"`
	// HTTPRequests counts requests sent, redirect hops included.
	HTTPRequests int64 `json:"http_requests"`
	// EgressBytesOut and EgressBytesIn count HTTP body bytes sent and
	// received.
	EgressBytesOut int64 `json:"egress_bytes_out"`
	EgressBytesIn  int64 `json:"egress_bytes_in"`
	// SecretInjections counts secret values put into requests;
	// SecretReads values handed to the guest.
	SecretInjections int64 `json:"secret_injections"`
	SecretReads      int64 `json:"secret_reads"`
	// StorageKeys and StorageBytes are the skill's stored keys and bytes
	// as of its last storage write.
	StorageKeys  int64 `json:"storage_keys"`
	StorageBytes int64 `json:"storage_bytes"`
	// ChannelMessages counts messages delivered.
	ChannelMessages int64 `json:"channel_messages"`
	// LastDenial is when the skill was last denied something.
	LastDenial time.Time `json:"last_denial,omitzero"`
}

type skillStats struct {
	mu sync.Mutex
	s  Stats
}

func newStats() Stats {
	return Stats{CapabilityCalls: map[string]int64{}, Denials: map[string]int64{}, Failures: map[string]int64{}}
}

func (st *skillStats) add(f func(*Stats)) {
	st.mu.Lock()
	before := total(st.s.Denials)
	f(&st.s)
	if total(st.s.Denials) > before {
		st.s.LastDenial = now()
	}
	st.mu.Unlock()
}

func total(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

func (st *skillStats) snapshot() Stats {
	st.mu.Lock()
	defer st.mu.Unlock()
	s := st.s
	s.CapabilityCalls = maps.Clone(s.CapabilityCalls)
	s.Denials = maps.Clone(s.Denials)
	s.Failures = maps.Clone(s.Failures)
	return s
}

func (b *Broker) skillLocked(id string) *skillStats {
	st := b.stats[id]
	if st == nil {
		st = &skillStats{s: newStats()}
		b.stats[id] = st
	}
	return st
}

// Stats returns the counters of one skill (zero counters for a skill the
// broker has not seen).
func (b *Broker) Stats(skillID string) Stats {
	b.mu.Lock()
	st := b.stats[skillID]
	b.mu.Unlock()
	if st == nil {
		return newStats()
	}
	return st.snapshot()
}

// AllStats returns the counters of every skill the broker has seen.
func (b *Broker) AllStats() map[string]Stats {
	b.mu.Lock()
	ids := make(map[string]*skillStats, len(b.stats))
	maps.Copy(ids, b.stats)
	b.mu.Unlock()
	out := make(map[string]Stats, len(ids))
	for id, st := range ids {
		out[id] = st.snapshot()
	}
	return out
}

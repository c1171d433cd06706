package inventory

import (
	"bytes"
	"slices"
	"sync"
	"time"
)

// MaxSkillCacheAge bounds how long DB.Skill serves an entry from memory.
// Writers that go through DB.Update (every writer of this module, in any
// process) invalidate the cache at once by advancing the change counter in
// "<path>.lock"; the age bounds what a writer that bypasses it (the sqlite3
// shell) can leave stale.
const MaxSkillCacheAge = time.Second

// skillCache keeps the entries DB.Skill read. The host reads the entry of a
// skill on every call, and a read costs a SQLite query that returns the
// manifest and the audit report; the cache makes the common case one
// 8-byte pread of the change counter. Entries are valid while the counter
// is the one they were read under and for at most MaxSkillCacheAge.
type skillCache struct {
	mu      sync.Mutex
	gen     uint64
	entries map[skillKey]cachedEntry
}

type skillKey struct{ id, version string }

type cachedEntry struct {
	e  Entry
	at time.Time
}

// get returns the copy view makes of the entry cached for key under gen.
func (c *skillCache) get(gen uint64, key skillKey, now time.Time, view func(Entry) Entry) (Entry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		if gen > c.gen { // counters only grow: an older one is a reader that started earlier
			c.gen, c.entries = gen, nil
		}
		return Entry{}, false
	}
	ce, ok := c.entries[key]
	if !ok || now.Sub(ce.at) >= MaxSkillCacheAge || now.Before(ce.at) {
		return Entry{}, false
	}
	return view(ce.e), true
}

// put caches a copy of e for key, read under gen at time at.
func (c *skillCache) put(gen uint64, key skillKey, e Entry, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return // a newer counter was seen meanwhile
	}
	if c.entries == nil {
		c.entries = make(map[skillKey]cachedEntry)
	}
	c.entries[key] = cachedEntry{e: e.clone(), at: at}
}

// clear drops every entry.
func (c *skillCache) clear() {
	c.mu.Lock()
	c.entries = nil
	c.mu.Unlock()
}

// clone returns a deep copy of e, so neither the cache nor a caller can
// change what the other holds.
// head is a copy of e without its documents (Manifest, AuditReport and
// Grants nil).
func (e Entry) head() Entry {
	out := e
	out.Manifest, out.AuditReport, out.Grants = nil, nil, nil
	out.MissingSecrets = slices.Clone(e.MissingSecrets)
	if e.Status != nil {
		st := *e.Status
		out.Status = &st
	}
	return out
}

func (e Entry) clone() Entry {
	out := e
	out.Manifest = bytes.Clone(e.Manifest)
	out.AuditReport = bytes.Clone(e.AuditReport)
	out.Grants = bytes.Clone(e.Grants)
	out.MissingSecrets = slices.Clone(e.MissingSecrets)
	if e.Status != nil {
		st := *e.Status
		out.Status = &st
	}
	return out
}

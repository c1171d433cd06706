package host

import (
	"crypto/rand"
	"encoding/json"
	"sync"
	"time"

	"github.com/palyra-go/palyra/host/a2ui"
)

// Bounds of the A2UI documents the daemon keeps for form submits.
const (
	maxDocuments = 1024
	documentTTL  = time.Hour
)

// keptDoc is an A2UI document a tool returned: where it came from and what
// it is, so that a form submit can be validated and sent back to that tool.
type keptDoc struct {
	id            string
	skillID, tool string
	version       string
	doc           *a2ui.Document
	raw           json.RawMessage
	at            time.Time
}

// docStore keeps the latest documents, at most max of them and none older
// than ttl. It is safe for concurrent use.
type docStore struct {
	max   int
	ttl   time.Duration
	mu    sync.Mutex
	byID  map[string]*keptDoc
	order []string // ids, oldest first
}

func newDocStore(max int, ttl time.Duration) *docStore {
	return &docStore{max: max, ttl: ttl, byID: map[string]*keptDoc{}}
}

// put keeps d under a new id and returns the id.
func (s *docStore) put(d *keptDoc) string {
	d.id = newULID(time.Now())
	d.at = time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byID[d.id] = d
	s.order = append(s.order, d.id)
	for len(s.order) > s.max {
		delete(s.byID, s.order[0])
		s.order = s.order[1:]
	}
	return d.id
}

// get returns the document with id, nil when unknown or expired.
func (s *docStore) get(id string) *keptDoc {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.byID[id]
	if d == nil || time.Since(d.at) > s.ttl {
		return nil
	}
	return d
}

// swap replaces the document under prev's id with next (keeping the id and
// renewing its age) if prev is still the one kept; it reports whether it
// did. Two patches that raced on one document: the second one loses.
func (s *docStore) swap(prev, next *keptDoc) bool {
	next.id = prev.id
	next.at = time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byID[prev.id] != prev {
		return false
	}
	s.byID[prev.id] = next
	return true
}

// crockford is the ULID alphabet.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// newULID returns a ULID (26 Crockford base32 characters: 48 bits of
// milliseconds, 80 random bits), the id shape of A2UI envelopes.
func newULID(t time.Time) string {
	var b [16]byte
	ms := uint64(t.UnixMilli())
	for i := 5; i >= 0; i-- {
		b[i] = byte(ms)
		ms >>= 8
	}
	if _, err := rand.Read(b[6:]); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	var out [26]byte
	// 128 bits as 26 base32 digits: the first digit holds the top 3 bits.
	var acc uint64
	bits := 0
	j := 25
	for i := 15; i >= 0; i-- {
		acc |= uint64(b[i]) << bits
		bits += 8
		for bits >= 5 && j >= 0 {
			out[j] = crockford[acc&31]
			acc >>= 5
			bits -= 5
			j--
		}
	}
	if j >= 0 {
		out[j] = crockford[acc&31]
	}
	return string(out[:])
}

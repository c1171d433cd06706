package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
)

// Space is one skill's whole key space held in memory, with the write,
// quota and list semantics of Backend applied to it. A backend that keeps
// each key space as one record (the cluster's JetStream key-value backend:
// read the record, apply the operation to its Space, write it back if
// nobody wrote in between) uses it, so its rules are this package's rules
// and not a copy of them. Its methods do not validate arguments: the
// backend calls CheckEntry, CheckWrite or CheckList first, as *Store does.
//
// The zero Space is empty. A Space is not safe for concurrent use.
type Space struct {
	entries []spaceEntry // sorted by key, keys unique
	usage   Usage
}

type spaceEntry struct {
	key   string
	value []byte
}

// spaceVersion is the first byte of an encoded Space.
const spaceVersion = 1

// DecodeSpace decodes what Space.Encode produced.
func DecodeSpace(b []byte) (*Space, error) {
	s := &Space{}
	if len(b) == 0 {
		return s, nil
	}
	if b[0] != spaceVersion {
		return nil, fmt.Errorf("%w: version %d, this build reads %d", ErrCorruptSpace, b[0], spaceVersion)
	}
	b = b[1:]
	next := func() ([]byte, error) {
		n, w := binary.Uvarint(b)
		if w <= 0 || n > uint64(len(b)-w) {
			return nil, fmt.Errorf("%w: bad length", ErrCorruptSpace)
		}
		out := b[w : w+int(n)]
		b = b[w+int(n):]
		return out, nil
	}
	for len(b) > 0 {
		k, err := next()
		if err != nil {
			return nil, err
		}
		v, err := next()
		if err != nil {
			return nil, err
		}
		key := string(k)
		if n := len(s.entries); n > 0 && s.entries[n-1].key >= key {
			return nil, fmt.Errorf("%w: keys out of order", ErrCorruptSpace)
		}
		s.entries = append(s.entries, spaceEntry{key: key, value: bytes.Clone(v)})
		s.usage.Keys++
		s.usage.Bytes += entrySize(key, len(v))
	}
	return s, nil
}

// Encode returns the key space as bytes: a version byte, then each entry
// in key order as uvarint length and bytes of the key, then of the value.
func (s *Space) Encode() []byte {
	n := 1
	for _, e := range s.entries {
		n += 2*binary.MaxVarintLen32 + len(e.key) + len(e.value)
	}
	out := make([]byte, 1, n)
	out[0] = spaceVersion
	for _, e := range s.entries {
		out = binary.AppendUvarint(out, uint64(len(e.key)))
		out = append(out, e.key...)
		out = binary.AppendUvarint(out, uint64(len(e.value)))
		out = append(out, e.value...)
	}
	return out
}

// EncodedLen is len(s.Encode()) without encoding.
func (s *Space) EncodedLen() int {
	n := 1
	for _, e := range s.entries {
		n += uvarintLen(len(e.key)) + len(e.key) + uvarintLen(len(e.value)) + len(e.value)
	}
	return n
}

func uvarintLen(n int) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], uint64(n))
}

// Usage returns what the key space holds.
func (s *Space) Usage() Usage { return s.usage }

func (s *Space) find(key string) (int, bool) {
	return slices.BinarySearchFunc(s.entries, key, func(e spaceEntry, k string) int { return strings.Compare(e.key, k) })
}

// Get returns the value under key (a found empty value is non-empty slice
// of length 0) and whether there is one.
func (s *Space) Get(key string) ([]byte, bool) {
	i, ok := s.find(key)
	if !ok {
		return nil, false
	}
	v := s.entries[i].value
	if v == nil {
		v = []byte{}
	}
	return bytes.Clone(v), true
}

// Put stores value under key, judging q on the usage after the write
// (see Backend); it changes nothing when it fails.
func (s *Space) Put(skillID, key string, value []byte, q Quota) error {
	i, existed := s.find(key)
	after := s.usage
	if existed {
		after.Bytes -= entrySize(key, len(s.entries[i].value))
	} else {
		after.Keys++
	}
	after.Bytes += entrySize(key, len(value))
	if err := judge(skillID, q, s.usage, after); err != nil {
		return err
	}
	v := bytes.Clone(value)
	if v == nil {
		v = []byte{}
	}
	if existed {
		s.entries[i].value = v
	} else {
		s.entries = slices.Insert(s.entries, i, spaceEntry{key: key, value: v})
	}
	s.usage = after
	return nil
}

// CompareAndSwap stores value under key only if it holds expected (nil:
// absent), as Backend.CompareAndSwap.
func (s *Space) CompareAndSwap(skillID, key string, expected, value []byte, q Quota) (CASResult, error) {
	cur, existed := s.Get(key)
	if existed != (expected != nil) || existed && !bytes.Equal(cur, expected) {
		return CASResult{Found: existed, Current: cur}, nil
	}
	if err := s.Put(skillID, key, value, q); err != nil {
		return CASResult{}, err
	}
	v := bytes.Clone(value)
	if v == nil {
		v = []byte{}
	}
	return CASResult{Swapped: true, Found: true, Current: v}, nil
}

// Delete removes key and reports whether it was there.
func (s *Space) Delete(key string) bool {
	i, ok := s.find(key)
	if !ok {
		return false
	}
	s.usage.Keys--
	s.usage.Bytes -= entrySize(key, len(s.entries[i].value))
	s.entries = slices.Delete(s.entries, i, i+1)
	return true
}

// List returns the keys that start with prefix, in byte order, strictly
// after cursor, at most limit (> 0) of them, and the cursor of the next
// page ("" at the end), as Backend.List.
func (s *Space) List(prefix string, limit int, cursor string) (keys []string, next string) {
	from := prefix
	if cursor >= prefix {
		from = cursor
	}
	i, found := s.find(from)
	if found && from == cursor {
		i++ // strictly after the cursor
	}
	keys = []string{}
	for ; i < len(s.entries) && strings.HasPrefix(s.entries[i].key, prefix); i++ {
		if len(keys) == limit {
			return keys, keys[limit-1]
		}
		keys = append(keys, s.entries[i].key)
	}
	return keys, ""
}

package skilltest

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"sync"

	"github.com/palyra-go/palyra/sdk/go/skill/internal/abi"
)

// MemoryStorage is a Backend that implements the storage operations of
// sdk/ABI.md §5.3 (get, put, cas, delete, list) in memory, one key space per granted prefix, and answers
// any other kind with -3 (invalid_request). Keep one across Runs to test
// state that survives calls. It is safe for concurrent use.
type MemoryStorage struct {
	mu   sync.Mutex
	data map[string]map[string][]byte // prefix → key → value
}

// NewMemoryStorage returns an empty MemoryStorage.
func NewMemoryStorage() *MemoryStorage {
	return &MemoryStorage{data: make(map[string]map[string][]byte)}
}

// Value returns the value under key in the space of prefix.
func (m *MemoryStorage) Value(prefix, key string) ([]byte, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.data[prefix][key]
	return v, ok
}

// Capability serves one storage request.
func (m *MemoryStorage) Capability(req Request) Response {
	if req.Kind != abi.KindStorage {
		return Fail(abi.CodeInvalidRequest, "invalid_request", "MemoryStorage serves storage only")
	}
	var r struct {
		Op          string  `json:"op"`
		Key         string  `json:"key"`
		ValueBase64 *[]byte `json:"value_base64"`
		Expected    *[]byte `json:"expected_base64"`
		Prefix      string  `json:"prefix"`
		Limit       int     `json:"limit"`
		Cursor      string  `json:"cursor"`
	}
	if err := json.Unmarshal(req.Body, &r); err != nil {
		return Fail(abi.CodeInvalidRequest, "invalid_request", err.Error())
	}
	if r.Op != "list" && !validKey(r.Key) {
		return Fail(abi.CodeInvalidRequest, "invalid_key", "invalid storage key")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	space := m.data[req.Name]
	if space == nil {
		space = make(map[string][]byte)
		m.data[req.Name] = space
	}
	switch r.Op {
	case "get":
		v, ok := space[r.Key]
		if !ok {
			return OK(map[string]bool{"found": false})
		}
		return OK(map[string]any{"found": true, "value_base64": v})
	case "put":
		if r.ValueBase64 == nil {
			return Fail(abi.CodeInvalidRequest, "invalid_request", "put needs value_base64")
		}
		space[r.Key] = append([]byte{}, (*r.ValueBase64)...)
		return OK(struct{}{})
	case "cas":
		if r.ValueBase64 == nil {
			return Fail(abi.CodeInvalidRequest, "invalid_request", "cas needs value_base64")
		}
		cur, ok := space[r.Key]
		if ok != (r.Expected != nil) || ok && !bytes.Equal(cur, *r.Expected) {
			if !ok {
				return OK(map[string]bool{"swapped": false, "found": false})
			}
			return OK(map[string]any{"swapped": false, "found": true, "value_base64": cur})
		}
		space[r.Key] = append([]byte{}, (*r.ValueBase64)...)
		return OK(map[string]bool{"swapped": true})
	case "delete":
		_, ok := space[r.Key]
		delete(space, r.Key)
		return OK(map[string]bool{"deleted": ok})
	case "list":
		limit := r.Limit
		if limit <= 0 {
			limit = 100
		}
		var keys []string
		for k := range space {
			if strings.HasPrefix(k, r.Prefix) && k > r.Cursor {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		next := ""
		if len(keys) > limit {
			keys = keys[:limit]
			next = keys[limit-1]
		}
		if keys == nil {
			keys = []string{}
		}
		return OK(map[string]any{"keys": keys, "next_cursor": next})
	}
	return Fail(abi.CodeInvalidRequest, "invalid_request", "unknown op "+r.Op)
}

// validKey applies the key rule of sdk/ABI.md §5.3.
func validKey(k string) bool {
	if len(k) == 0 || len(k) > 256 {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '/' || c == '-') {
			return false
		}
	}
	for _, seg := range strings.Split(k, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

package skill

import (
	"github.com/palyra-go/palyra/sdk/go/skill/internal/abi"
)

// Storage returns the granted storage prefix (a filesystem.write_roots entry
// of skill.toml, e.g. "counters"). The empty prefix selects the only storage
// grant when there is exactly one.
func (c *Context) Storage(prefix string) *Storage {
	hd, ok := c.doc.Grants.storageHandle(prefix)
	return &Storage{c: c, prefix: prefix, handle: hd, granted: ok}
}

// Storage is a key-value space under one granted prefix (sdk/ABI.md §5.3).
// Keys are 1–256 bytes of [A-Za-z0-9._/-] with no empty, "." or ".."
// segment; the host rejects others with ErrInvalidRequest. Values are bytes.
type Storage struct {
	c       *Context
	prefix  string
	handle  int32
	granted bool
}

// DefaultListLimit is the page size List asks for when given a limit ≤ 0.
const DefaultListLimit = 100

type storageKeyRequest struct {
	Op  string `json:"op"`
	Key string `json:"key"`
}

type storagePutRequest struct {
	Op          string `json:"op"`
	Key         string `json:"key"`
	ValueBase64 []byte `json:"value_base64"`
}

type storageCASRequest struct {
	Op             string  `json:"op"`
	Key            string  `json:"key"`
	ExpectedBase64 *[]byte `json:"expected_base64,omitempty"`
	ValueBase64    []byte  `json:"value_base64"`
}

type storageListRequest struct {
	Op     string `json:"op"`
	Prefix string `json:"prefix"`
	Limit  int    `json:"limit"`
	Cursor string `json:"cursor"`
}

func (s *Storage) check(op string) error {
	if !s.granted {
		return notGranted(abi.KindStorage, op, "no storage grant for prefix %q", s.prefix)
	}
	return nil
}

// Get returns the value stored under key; found is false when there is none.
func (s *Storage) Get(key string) (value []byte, found bool, err error) {
	if err := s.check("get"); err != nil {
		return nil, false, err
	}
	var resp struct {
		Found       bool   `json:"found"`
		ValueBase64 []byte `json:"value_base64"`
	}
	if err := s.c.callJSON(abi.KindStorage, "get", s.handle, storageKeyRequest{"get", key}, &resp); err != nil {
		return nil, false, err
	}
	if !resp.Found {
		return nil, false, nil
	}
	if resp.ValueBase64 == nil {
		resp.ValueBase64 = []byte{}
	}
	return resp.ValueBase64, true, nil
}

// Put stores value under key, replacing any previous value.
func (s *Storage) Put(key string, value []byte) error {
	if err := s.check("put"); err != nil {
		return err
	}
	if value == nil {
		value = []byte{} // "" rather than null
	}
	return s.c.callJSON(abi.KindStorage, "put", s.handle, storagePutRequest{"put", key, value}, nil)
}

// CompareAndSwap stores value under key only if key holds expected now,
// as one step of the host: no other call's write can come between the
// comparison and the write. A nil expected means "key is absent"; a non-nil
// one, even empty, means "key holds exactly these bytes", so the value (or
// nil) that Get returned can be passed back as it is. swapped reports
// whether value was written; current is what key holds after the call
// (value when swapped, nil when absent, a non-nil empty slice for a found
// empty value). The key rules and the quota apply as for Put.
//
// Update a value that other calls may change at the same time with a
// loop: Get, compute, CompareAndSwap from what Get returned, and on
// swapped == false compute again from current.
func (s *Storage) CompareAndSwap(key string, expected, value []byte) (swapped bool, current []byte, err error) {
	if err := s.check("cas"); err != nil {
		return false, nil, err
	}
	if value == nil {
		value = []byte{} // "" rather than null
	}
	req := storageCASRequest{Op: "cas", Key: key, ValueBase64: value}
	if expected != nil {
		req.ExpectedBase64 = &expected
	}
	var resp struct {
		Swapped     bool   `json:"swapped"`
		Found       bool   `json:"found"`
		ValueBase64 []byte `json:"value_base64"`
	}
	if err := s.c.callJSON(abi.KindStorage, "cas", s.handle, req, &resp); err != nil {
		return false, nil, err
	}
	switch {
	case resp.Swapped:
		return true, value, nil
	case !resp.Found:
		return false, nil, nil
	case resp.ValueBase64 == nil:
		return false, []byte{}, nil
	}
	return false, resp.ValueBase64, nil
}

// Delete removes key; deleted is false when it was absent.
func (s *Storage) Delete(key string) (deleted bool, err error) {
	if err := s.check("delete"); err != nil {
		return false, err
	}
	var resp struct {
		Deleted bool `json:"deleted"`
	}
	if err := s.c.callJSON(abi.KindStorage, "delete", s.handle, storageKeyRequest{"delete", key}, &resp); err != nil {
		return false, err
	}
	return resp.Deleted, nil
}

// List returns up to limit keys that start with prefix, in byte order,
// starting after cursor ("" for the first page). next is the cursor of the
// following page, "" at the end. A limit ≤ 0 asks for DefaultListLimit.
func (s *Storage) List(prefix string, limit int, cursor string) (keys []string, next string, err error) {
	if err := s.check("list"); err != nil {
		return nil, "", err
	}
	if limit <= 0 {
		limit = DefaultListLimit
	}
	var resp struct {
		Keys       []string `json:"keys"`
		NextCursor string   `json:"next_cursor"`
	}
	req := storageListRequest{Op: "list", Prefix: prefix, Limit: limit, Cursor: cursor}
	if err := s.c.callJSON(abi.KindStorage, "list", s.handle, req, &resp); err != nil {
		return nil, "", err
	}
	return resp.Keys, resp.NextCursor, nil
}

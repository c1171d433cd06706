package broker

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/palyra-go/palyra/host/storage"
	"github.com/palyra-go/palyra/sdk/abi"
)

type storageRequestDoc struct {
	Op          string  `json:"op"`
	Key         string  `json:"key"`
	ValueBase64 *[]byte `json:"value_base64"`
	// ExpectedBase64 is the value a cas expects; absent or null expects
	// the key to be absent.
	ExpectedBase64 *[]byte `json:"expected_base64"`
	Prefix         string  `json:"prefix"`
	Limit          int     `json:"limit"`
	Cursor         string  `json:"cursor"`
}

type storageGetDoc struct {
	Found       bool   `json:"found"`
	ValueBase64 []byte `json:"value_base64,omitempty"`
}

type storageDeleteDoc struct {
	Deleted bool `json:"deleted"`
}

// storageCASDoc is the answer of a cas: whether it swapped, and, when it
// did not, what the key holds (found and value_base64, as a get).
type storageCASDoc struct {
	Swapped     bool   `json:"swapped"`
	Found       *bool  `json:"found,omitempty"`
	ValueBase64 []byte `json:"value_base64,omitempty"`
}

type storageListDoc struct {
	Keys       []string `json:"keys"`
	NextCursor string   `json:"next_cursor"`
}

func (op *operation) storage(ctx context.Context, prefix string) ([]byte, error) {
	st := op.b.cfg.Storage
	if st == nil {
		return nil, refuse(abi.CodeUnavailable, "unavailable", "storage is not configured on this host")
	}
	var doc storageRequestDoc
	if err := decodeStrict(op.req.Request, &doc); err != nil {
		return nil, err
	}
	in := op.in
	readOnly := slices.Contains(in.Grants.StorageReadOnly, prefix)
	full := func() (string, error) {
		k, err := storage.JoinKey(prefix, doc.Key)
		if err != nil {
			return "", storageFailure(err)
		}
		return k, nil
	}
	switch doc.Op {
	case "get":
		k, err := full()
		if err != nil {
			return nil, err
		}
		v, found, err := st.Get(ctx, in.SkillID, k)
		if err != nil {
			return nil, storageFailure(err)
		}
		out := storageGetDoc{Found: found}
		if found {
			out.ValueBase64 = v
			if v == nil {
				out.ValueBase64 = []byte{}
			}
		}
		return mustJSON(out), nil
	case "put", "delete", "cas":
		if readOnly {
			return nil, deny("read_only", "storage prefix %q is a read root: %s is not allowed through it", prefix, doc.Op)
		}
		k, err := full()
		if err != nil {
			return nil, err
		}
		if doc.ExpectedBase64 != nil && doc.Op != "cas" {
			return nil, refuse(abi.CodeInvalidRequest, "invalid_request", "expected_base64 is a member of cas only, not of %s", doc.Op)
		}
		var resp []byte
		q := storage.Quota{MaxKeys: in.Limits.MaxStorageKeys, MaxBytes: in.Limits.MaxStorageBytes}
		switch doc.Op {
		case "put":
			if doc.ValueBase64 == nil {
				return nil, refuse(abi.CodeInvalidRequest, "invalid_request", "put needs value_base64")
			}
			if err := st.Put(ctx, in.SkillID, k, *doc.ValueBase64, q); err != nil {
				return nil, storageFailure(err)
			}
			resp = []byte("{}")
		case "cas":
			if doc.ValueBase64 == nil {
				return nil, refuse(abi.CodeInvalidRequest, "invalid_request", "cas needs value_base64")
			}
			var expected []byte // nil: the key must be absent
			if doc.ExpectedBase64 != nil {
				expected = *doc.ExpectedBase64
				if expected == nil {
					expected = []byte{}
				}
			}
			res, err := st.CompareAndSwap(ctx, in.SkillID, k, expected, *doc.ValueBase64, q)
			if err != nil {
				return nil, storageFailure(err)
			}
			out := storageCASDoc{Swapped: res.Swapped}
			if !res.Swapped {
				out.Found = &res.Found
				out.ValueBase64 = res.Current
			}
			resp = mustJSON(out)
			if !res.Swapped {
				return resp, nil // nothing written: usage unchanged
			}
		default:
			deleted, err := st.Delete(ctx, in.SkillID, k)
			if err != nil {
				return nil, storageFailure(err)
			}
			resp = mustJSON(storageDeleteDoc{Deleted: deleted})
		}
		if u, err := st.Usage(ctx, in.SkillID); err == nil {
			op.in.st.add(func(s *Stats) { s.StorageKeys, s.StorageBytes = u.Keys, u.Bytes })
		}
		return resp, nil
	case "list":
		base := prefix + "/"
		if doc.Prefix != "" && strings.ContainsRune(doc.Prefix, 0) {
			return nil, refuse(abi.CodeInvalidRequest, "invalid_request", "list prefix contains a NUL byte")
		}
		limit := doc.Limit
		switch {
		case limit == 0:
			limit = storage.DefaultListLimit
		case limit < 0 || limit > storage.MaxListLimit:
			return nil, refuse(abi.CodeInvalidRequest, "invalid_request", "list limit %d is outside 1..%d", limit, storage.MaxListLimit)
		}
		cursor := ""
		if doc.Cursor != "" {
			cursor = base + doc.Cursor
		}
		keys, next, err := st.List(ctx, in.SkillID, base+doc.Prefix, limit, cursor)
		if err != nil {
			return nil, storageFailure(err)
		}
		out := storageListDoc{Keys: make([]string, 0, len(keys))}
		for _, k := range keys {
			out.Keys = append(out.Keys, strings.TrimPrefix(k, base))
		}
		if next != "" {
			out.NextCursor = strings.TrimPrefix(next, base)
		}
		return mustJSON(out), nil
	}
	return nil, refuse(abi.CodeInvalidRequest, "invalid_request", "unknown storage op %q (get, put, cas, delete, list)", doc.Op)
}

func storageFailure(err error) error {
	var qe *storage.QuotaError
	switch {
	case errors.As(err, &qe):
		return &failure{code: abi.CodeQuotaExceeded, reason: "storage_quota_" + qe.Limit, msg: err.Error(), cause: err}
	case errors.Is(err, storage.ErrInvalidKey):
		return &failure{code: abi.CodeInvalidRequest, reason: "invalid_key", msg: err.Error(), cause: err}
	case errors.Is(err, storage.ErrValueTooLarge):
		return &failure{code: abi.CodeTooLarge, reason: "too_large", msg: err.Error(), cause: err}
	}
	return err
}

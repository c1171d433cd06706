package cluster

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/palyra-go/palyra/host/storage"
)

// KVStorage is the skills' storage when clustered: a storage.Backend over
// the JetStream key-value bucket StorageBucket, shared by every node, so a
// skill keeps one state across the cluster (kv-counter counts across
// nodes). Its semantics are storage.Backend's, checked by the same
// behaviour table as the SQLite store's (host/storage/storagetest).
//
// # One entry per skill
//
// Each skill's whole key space is one entry of the bucket, its KV key the
// skill id in lower-case hex (so every skill id, ':' and ".." included, is
// a valid KV key), its value the key space as storage.Space encodes it. A
// write reads the entry and its revision, applies the operation to the
// decoded storage.Space (the key rules, quota judgement and list order are
// host/storage's own code, not a copy), and writes it back with
// kv.Update(revision): if another writer (any node) wrote in between, the
// update is refused and the write starts again from the new entry. So a
// Put, a compare-and-swap or a Delete and the usage/quota check on which
// it depends are one atomic step across the cluster, and of concurrent
// swaps from one expected value exactly one succeeds. Writers of one node
// to one skill queue in the node first (a striped lock), so retries come
// only from other nodes.
//
// Reads ask the stream leader (STREAM.MSG.GET), not a direct get, which a
// follower may answer from behind: a Get after a Put on any node sees it.
// Writes need a quorum of the bucket's replicas and fail with
// ErrClusterUnavailable without one (a read may still be answered for a
// moment by a leader that has not yet noticed it lost its quorum).
//
// # The size of a key space
//
// An entry is one JetStream message, so a skill's key space, encoded, is at
// most the bucket's largest value (the smaller of its MaxMsgSize and the
// connection's max payload, less room for headers: about 8 MiB with the
// embedded server). A write that would take it past that fails with a
// *storage.QuotaError on LimitBytes whose Bound names the bucket. The
// skill's own quota is judged first; it is not refused up front when it
// is larger than the bucket's value (the default policy grants 64 MiB per
// skill, so that would refuse every skill): what bounds a skill is the
// smaller of the two, and the error says which one it hit.
//
// Purge puts a purge marker on the skill's entry (the bucket keeps one
// revision); Skills lists the bucket's keys and decodes each entry.
type KVStorage struct {
	kv       jetstream.KeyValue
	nc       *nats.Conn
	stream   string // the bucket's stream, "KV_" + bucket
	subject  string // the bucket's subject prefix, "$KV.<bucket>."
	maxValue int

	// locks serialize this node's writers of one skill (by hash of the id),
	// honouring their contexts.
	locks  [64]chan struct{}
	closed atomic.Bool
}

// Compile-time check: the cluster's storage is a storage.Backend.
var _ storage.Backend = (*KVStorage)(nil)

// kvReadTimeout bounds a read of a key space when the caller's context has
// no deadline (the jetstream package's default API timeout).
const kvReadTimeout = 5 * time.Second

// kvHeaderRoom is what an entry leaves of the bucket's largest message for
// the message's headers.
const kvHeaderRoom = 1 << 10

// NewKVStorage returns the storage backend over kv (the bucket
// StorageBucket, Link.StorageKV) reached through nc.
func NewKVStorage(ctx context.Context, nc *nats.Conn, kv jetstream.KeyValue) (*KVStorage, error) {
	st, err := kv.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("cluster: storage bucket %s: %w", kv.Bucket(), Unavailable(err))
	}
	max := int(nc.MaxPayload())
	if bs, ok := st.(*jetstream.KeyValueBucketStatus); ok && bs.StreamInfo() != nil {
		if m := int(bs.StreamInfo().Config.MaxMsgSize); m > 0 && m < max {
			max = m
		}
	}
	s := &KVStorage{
		kv: kv, nc: nc, stream: "KV_" + kv.Bucket(), subject: "$KV." + kv.Bucket() + ".",
		maxValue: max - kvHeaderRoom,
	}
	for i := range s.locks {
		s.locks[i] = make(chan struct{}, 1)
	}
	return s, nil
}

// MaxSpaceBytes is the largest encoded key space one skill may have.
func (s *KVStorage) MaxSpaceBytes() int { return s.maxValue }

// kvKey is the bucket key of skillID's key space.
func kvKey(skillID string) string { return hex.EncodeToString([]byte(skillID)) }

// Close marks the backend closed; the bucket belongs to the Link.
func (s *KVStorage) Close() error {
	s.closed.Store(true)
	return nil
}

func (s *KVStorage) usable() error {
	if s.closed.Load() {
		return storage.ErrClosed
	}
	return nil
}

// msgGetResponse is the JetStream API's answer to STREAM.MSG.GET.
type msgGetResponse struct {
	Error *struct {
		Code        int    `json:"code"`
		ErrCode     int    `json:"err_code"`
		Description string `json:"description"`
	} `json:"error,omitempty"`
	Message *struct {
		Sequence uint64 `json:"seq"`
		Header   []byte `json:"hdrs,omitempty"`
		Data     []byte `json:"data,omitempty"`
	} `json:"message,omitempty"`
}

// kvReadTry bounds one try of a key space read.
const kvReadTry = time.Second

// load reads skillID's key space and its revision from the stream leader:
// an empty Space and revision 0 when the skill never wrote, an empty Space
// and the marker's revision after a delete or purge.
func (s *KVStorage) load(ctx context.Context, skillID string) (*storage.Space, uint64, error) {
	req, _ := json.Marshal(map[string]string{"last_by_subj": s.subject + kvKey(skillID)})
	if _, ok := ctx.Deadline(); !ok {
		// As the jetstream package does: a leaderless stream may never
		// answer, and a caller without a deadline must not wait forever.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, kvReadTimeout)
		defer cancel()
	}
	// A leader that died leaves the request unanswered until the replicas
	// elect another (a few seconds): short tries, until ctx ends.
	var msg *nats.Msg
	var err error
	for {
		try, cancel := context.WithTimeout(ctx, kvReadTry)
		msg, err = s.nc.RequestWithContext(try, "$JS.API.STREAM.MSG.GET."+s.stream, req)
		cancel()
		if err == nil || ctx.Err() != nil || !(errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrNoResponders) || errors.Is(err, nats.ErrTimeout)) {
			break
		}
		// No leader now: a replica's copy answers the read (it may lag
		// the last write by a moment; a write still goes to the leader
		// and checks the revision, so nothing is lost on it).
		if sp, rev, ok := s.loadReplica(ctx, skillID); ok {
			return sp, rev, nil
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
	if err != nil {
		return nil, 0, fmt.Errorf("storage: read key space of skill %s: %w", skillID, Unavailable(err))
	}
	var resp msgGetResponse
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return nil, 0, fmt.Errorf("storage: read key space of skill %s: %w", skillID, err)
	}
	switch {
	case resp.Error != nil && resp.Error.ErrCode == int(jetstream.JSErrCodeMessageNotFound):
		return &storage.Space{}, 0, nil
	case resp.Error != nil:
		err := &jetstream.APIError{Code: resp.Error.Code, ErrorCode: jetstream.ErrorCode(resp.Error.ErrCode), Description: resp.Error.Description}
		return nil, 0, fmt.Errorf("storage: read key space of skill %s: %w", skillID, Unavailable(err))
	case resp.Message == nil:
		return nil, 0, fmt.Errorf("storage: read key space of skill %s: %w", skillID, jetstream.ErrInvalidJetStreamResponse)
	}
	m := resp.Message
	if len(m.Header) > 0 {
		h, err := nats.DecodeHeadersMsg(m.Header)
		if err == nil && h.Get("KV-Operation") != "" {
			return &storage.Space{}, m.Sequence, nil // deleted or purged
		}
	}
	sp, err := storage.DecodeSpace(m.Data)
	if err != nil {
		return nil, 0, fmt.Errorf("storage: key space of skill %s (revision %d): %w", skillID, m.Sequence, err)
	}
	return sp, m.Sequence, nil
}

// loadReplica reads skillID's key space from any replica of the bucket
// (a direct get); ok is false when none answers within kvReadTry.
func (s *KVStorage) loadReplica(ctx context.Context, skillID string) (*storage.Space, uint64, bool) {
	try, cancel := context.WithTimeout(ctx, kvReadTry)
	defer cancel()
	e, err := s.kv.Get(try, kvKey(skillID))
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return &storage.Space{}, 0, true
	case err != nil:
		return nil, 0, false
	}
	sp, err := storage.DecodeSpace(e.Value())
	if err != nil {
		return nil, 0, false
	}
	return sp, e.Revision(), true
}

// lock takes this node's write lock of skillID.
func (s *KVStorage) lock(ctx context.Context, skillID string) (func(), error) {
	h := fnv.New32a()
	h.Write([]byte(skillID))
	l := s.locks[h.Sum32()%uint32(len(s.locks))]
	select {
	case l <- struct{}{}:
		return func() { <-l }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("storage: waiting for the write lock of skill %s: %w", skillID, ctx.Err())
	}
}

// update applies fn to skillID's key space and writes the result back if
// fn changed it and nobody wrote in between, else starts again.
func (s *KVStorage) update(ctx context.Context, skillID string, fn func(sp *storage.Space) (changed bool, err error)) error {
	unlock, err := s.lock(ctx, skillID)
	if err != nil {
		return err
	}
	defer unlock()
	key := kvKey(skillID)
	for {
		if err := s.usable(); err != nil {
			return err
		}
		sp, rev, err := s.load(ctx, skillID)
		if err != nil {
			return err
		}
		before := sp.Usage()
		changed, err := fn(sp)
		if err != nil || !changed {
			return err
		}
		if sp.Usage().Keys == 0 {
			err = s.kv.Purge(ctx, key, jetstream.LastRevision(rev))
		} else {
			if n := sp.EncodedLen(); n > s.maxValue && sp.Usage().Bytes > before.Bytes {
				return &storage.QuotaError{SkillID: skillID, Limit: storage.LimitBytes, Max: int64(s.maxValue), Would: int64(n),
					Bound: fmt.Sprintf("the largest value of the cluster's key-value bucket %s (a skill's encoded key space is one value)", s.kv.Bucket())}
			}
			_, err = s.kv.Update(ctx, key, sp.Encode(), rev)
		}
		switch {
		case err == nil:
			return nil
		case isRevisionConflict(err):
			continue // another node wrote: judge again on what it wrote
		}
		return fmt.Errorf("storage: write key space of skill %s: %w", skillID, Unavailable(err))
	}
}

// isRevisionConflict reports whether err is JetStream's "wrong last
// sequence": the entry changed since it was read.
func isRevisionConflict(err error) bool {
	if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return true
	}
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

// Get returns the value under fullKey in skillID's key space.
func (s *KVStorage) Get(ctx context.Context, skillID, fullKey string) ([]byte, bool, error) {
	if err := s.usable(); err != nil {
		return nil, false, err
	}
	if err := storage.CheckEntry(skillID, fullKey); err != nil {
		return nil, false, err
	}
	sp, _, err := s.load(ctx, skillID)
	if err != nil {
		return nil, false, err
	}
	v, found := sp.Get(fullKey)
	return v, found, nil
}

// Put stores value under fullKey (see storage.Backend).
func (s *KVStorage) Put(ctx context.Context, skillID, fullKey string, value []byte, q storage.Quota) error {
	if err := s.usable(); err != nil {
		return err
	}
	if err := storage.CheckWrite(skillID, fullKey, value, q); err != nil {
		return err
	}
	return s.update(ctx, skillID, func(sp *storage.Space) (bool, error) {
		return true, sp.Put(skillID, fullKey, value, q)
	})
}

// CompareAndSwap stores value under fullKey only if it holds expected
// (see storage.Backend).
func (s *KVStorage) CompareAndSwap(ctx context.Context, skillID, fullKey string, expected, value []byte, q storage.Quota) (storage.CASResult, error) {
	if err := s.usable(); err != nil {
		return storage.CASResult{}, err
	}
	if err := storage.CheckWrite(skillID, fullKey, value, q); err != nil {
		return storage.CASResult{}, err
	}
	var res storage.CASResult
	err := s.update(ctx, skillID, func(sp *storage.Space) (bool, error) {
		var err error
		res, err = sp.CompareAndSwap(skillID, fullKey, expected, value, q)
		return res.Swapped, err
	})
	if err != nil {
		return storage.CASResult{}, err
	}
	return res, nil
}

// Delete removes fullKey and reports whether it was there.
func (s *KVStorage) Delete(ctx context.Context, skillID, fullKey string) (bool, error) {
	if err := s.usable(); err != nil {
		return false, err
	}
	if err := storage.CheckEntry(skillID, fullKey); err != nil {
		return false, err
	}
	deleted := false
	err := s.update(ctx, skillID, func(sp *storage.Space) (bool, error) {
		deleted = sp.Delete(fullKey)
		return deleted, nil
	})
	return deleted, err
}

// List returns keys of skillID's key space (see storage.Backend).
func (s *KVStorage) List(ctx context.Context, skillID, prefix string, limit int, cursor string) ([]string, string, error) {
	if err := s.usable(); err != nil {
		return nil, "", err
	}
	limit, err := storage.CheckList(skillID, prefix, limit, cursor)
	if err != nil {
		return nil, "", err
	}
	sp, _, err := s.load(ctx, skillID)
	if err != nil {
		return nil, "", err
	}
	keys, next := sp.List(prefix, limit, cursor)
	return keys, next, nil
}

// Usage returns what skillID's key space holds.
func (s *KVStorage) Usage(ctx context.Context, skillID string) (storage.Usage, error) {
	if err := s.usable(); err != nil {
		return storage.Usage{}, err
	}
	if err := storage.ValidateSkillID(skillID); err != nil {
		return storage.Usage{}, err
	}
	sp, _, err := s.load(ctx, skillID)
	if err != nil {
		return storage.Usage{}, err
	}
	return sp.Usage(), nil
}

// Purge deletes skillID's whole key space and returns what it held.
func (s *KVStorage) Purge(ctx context.Context, skillID string) (storage.Usage, error) {
	if err := s.usable(); err != nil {
		return storage.Usage{}, err
	}
	if err := storage.ValidateSkillID(skillID); err != nil {
		return storage.Usage{}, err
	}
	var gone storage.Usage
	err := s.update(ctx, skillID, func(sp *storage.Space) (bool, error) {
		gone = sp.Usage()
		*sp = storage.Space{}
		return gone.Keys > 0, nil
	})
	if err != nil {
		return storage.Usage{}, err
	}
	return gone, nil
}

// Skills returns the usage of every skill that holds a key.
func (s *KVStorage) Skills(ctx context.Context) (map[string]storage.Usage, error) {
	if err := s.usable(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lister, err := s.kv.ListKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("storage: list skills: %w", Unavailable(err))
	}
	var ids []string
	for k := range lister.Keys() {
		if b, err := hex.DecodeString(k); err == nil {
			ids = append(ids, string(b))
		}
	}
	out := map[string]storage.Usage{}
	for _, id := range ids {
		sp, _, err := s.load(ctx, id)
		if err != nil {
			return nil, err
		}
		if u := sp.Usage(); u.Keys > 0 {
			out[id] = u
		}
	}
	return out, nil
}

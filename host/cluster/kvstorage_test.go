package cluster

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/storage"
	"github.com/palyra-go/palyra/host/storage/storagetest"
)

// dialSolo joins a one-node embedded cluster, closed when the test ends.
func dialSolo(t *testing.T) *Link {
	t.Helper()
	l, err := Dial(context.Background(), Config{NodeName: "solo", Embedded: &EmbeddedConfig{StoreDir: t.TempDir(), Listen: "127.0.0.1:0"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// TestKVStorageBackend runs the storage.Backend behaviour table of the
// SQLite store on the JetStream key-value backend: same key rules, quota,
// list order and cursors, compare-and-swap.
func TestKVStorageBackend(t *testing.T) {
	l := dialSolo(t)
	storagetest.Run(t, func(t *testing.T) storage.Backend {
		ctx := context.Background()
		// Every subtest starts from an empty bucket.
		all, err := l.SkillStorage().Skills(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for id := range all {
			if _, err := l.SkillStorage().Purge(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
		s, err := NewKVStorage(ctx, l.Conn(), l.StorageKV())
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestKVStorageBucketBound: a key space that would not fit one value of
// the bucket is refused with a quota error naming the bucket, and a write
// that shrinks it is not.
func TestKVStorageBucketBound(t *testing.T) {
	ctx := context.Background()
	l := dialSolo(t)
	s := l.SkillStorage().(*KVStorage)
	val := make([]byte, storage.MaxValueBytes)
	n := s.MaxSpaceBytes()/len(val) + 1
	var err error
	for i := range n {
		if err = s.Put(ctx, "big", "k/"+string(rune('a'+i)), val, storage.Quota{}); err != nil {
			break
		}
	}
	var qe *storage.QuotaError
	if !errors.As(err, &qe) || qe.Limit != storage.LimitBytes || !strings.Contains(err.Error(), StorageBucket) || qe.Max != int64(s.MaxSpaceBytes()) {
		t.Fatalf("over the bucket's value: %v", err)
	}
	if err := s.Put(ctx, "big", "k/a", []byte("small"), storage.Quota{}); err != nil {
		t.Fatalf("shrinking: %v", err)
	}
}

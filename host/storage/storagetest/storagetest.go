// Package storagetest is the behaviour table every storage.Backend must
// pass: the SQLite store (host/storage) and the cluster's JetStream
// key-value backend (host/cluster) run the same table, so the semantics
// stated on storage.Backend are checked once, for both.
package storagetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/palyra-go/palyra/host/storage"
)

// Run runs the behaviour table against the backends open returns: one
// fresh, empty backend per subtest, closed by Run.
func Run(t *testing.T, open func(t *testing.T) storage.Backend) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := open(t)
			defer func() {
				if err := b.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			}()
			c.run(t, context.Background(), b)
		})
	}
}

type testCase struct {
	name string
	run  func(t *testing.T, ctx context.Context, b storage.Backend)
}

const skill = "acme.counter"

func put(t *testing.T, ctx context.Context, b storage.Backend, id, key, value string) {
	t.Helper()
	if err := b.Put(ctx, id, key, []byte(value), storage.Quota{}); err != nil {
		t.Fatalf("Put(%s, %q): %v", id, key, err)
	}
}

func wantGet(t *testing.T, ctx context.Context, b storage.Backend, id, key string, want []byte) {
	t.Helper()
	v, found, err := b.Get(ctx, id, key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	switch {
	case want == nil && found:
		t.Fatalf("Get(%q) = %q, want missing", key, v)
	case want != nil && !found:
		t.Fatalf("Get(%q) missing, want %q", key, want)
	case want != nil && (v == nil || !bytes.Equal(v, want)):
		t.Fatalf("Get(%q) = %q (nil %v), want %q", key, v, v == nil, want)
	}
}

func wantUsage(t *testing.T, ctx context.Context, b storage.Backend, id string, want storage.Usage) {
	t.Helper()
	u, err := b.Usage(ctx, id)
	if err != nil {
		t.Fatalf("Usage(%s): %v", id, err)
	}
	if u != want {
		t.Fatalf("Usage(%s) = %+v, want %+v", id, u, want)
	}
}

func listAll(t *testing.T, ctx context.Context, b storage.Backend, prefix string, limit int) ([]string, int) {
	t.Helper()
	var all []string
	cursor, pages := "", 0
	for {
		keys, next, err := b.List(ctx, skill, prefix, limit, cursor)
		if err != nil {
			t.Fatalf("List(%q, %d, %q): %v", prefix, limit, cursor, err)
		}
		if keys == nil {
			t.Fatal("List returned nil keys")
		}
		pages++
		all = append(all, keys...)
		if next == "" {
			return all, pages
		}
		if next != keys[len(keys)-1] {
			t.Fatalf("next %q is not the last key %q", next, keys[len(keys)-1])
		}
		cursor = next
	}
}

var cases = []testCase{
	{"get missing, put, get, replace", func(t *testing.T, ctx context.Context, b storage.Backend) {
		wantGet(t, ctx, b, skill, "c/visits", nil)
		put(t, ctx, b, skill, "c/visits", "1")
		wantGet(t, ctx, b, skill, "c/visits", []byte("1"))
		put(t, ctx, b, skill, "c/visits", "22")
		wantGet(t, ctx, b, skill, "c/visits", []byte("22"))
		wantUsage(t, ctx, b, skill, storage.Usage{Keys: 1, Bytes: int64(len("c/visits") + 2)})
		wantGet(t, ctx, b, "other.skill", "c/visits", nil) // key spaces are apart
	}},
	{"empty value is found and non-nil", func(t *testing.T, ctx context.Context, b storage.Backend) {
		if err := b.Put(ctx, skill, "c/empty", nil, storage.Quota{}); err != nil {
			t.Fatal(err)
		}
		wantGet(t, ctx, b, skill, "c/empty", []byte{})
	}},
	{"delete", func(t *testing.T, ctx context.Context, b storage.Backend) {
		put(t, ctx, b, skill, "c/a", "x")
		for i, want := range []bool{true, false} {
			got, err := b.Delete(ctx, skill, "c/a")
			if err != nil || got != want {
				t.Fatalf("Delete #%d = %v, %v; want %v", i, got, err, want)
			}
		}
		wantGet(t, ctx, b, skill, "c/a", nil)
		wantUsage(t, ctx, b, skill, storage.Usage{})
	}},
	{"argument errors", func(t *testing.T, ctx context.Context, b storage.Backend) {
		big := make([]byte, storage.MaxValueBytes+1)
		for _, c := range []struct {
			name string
			err  error
			want error
		}{
			{"key ..", b.Put(ctx, skill, "c/../x", []byte("v"), storage.Quota{}), storage.ErrInvalidKey},
			{"key NUL", b.Put(ctx, skill, "c/a\x00", []byte("v"), storage.Quota{}), storage.ErrInvalidKey},
			{"get key //", func() error { _, _, err := b.Get(ctx, skill, "c//x"); return err }(), storage.ErrInvalidKey},
			{"delete empty key", func() error { _, err := b.Delete(ctx, skill, ""); return err }(), storage.ErrInvalidKey},
			{"value too large", b.Put(ctx, skill, "c/big", big, storage.Quota{}), storage.ErrValueTooLarge},
			{"cas value too large", func() error {
				_, err := b.CompareAndSwap(ctx, skill, "c/big", nil, big, storage.Quota{})
				return err
			}(), storage.ErrValueTooLarge},
			{"skill id", b.Put(ctx, "Bad/Skill", "c/a", []byte("v"), storage.Quota{}), storage.ErrInvalidSkillID},
			{"negative quota", b.Put(ctx, skill, "c/a", []byte("v"), storage.Quota{MaxKeys: -1}), storage.ErrInvalidQuota},
			{"list limit", func() error { _, _, err := b.List(ctx, skill, "", storage.MaxListLimit+1, ""); return err }(), storage.ErrInvalidListLimit},
			{"list prefix", func() error { _, _, err := b.List(ctx, skill, "c/../", 0, ""); return err }(), storage.ErrInvalidKey},
			{"list cursor", func() error { _, _, err := b.List(ctx, skill, "", 0, "c/\x01"); return err }(), storage.ErrInvalidKey},
			{"usage skill id", func() error { _, err := b.Usage(ctx, ""); return err }(), storage.ErrInvalidSkillID},
		} {
			if !errors.Is(c.err, c.want) {
				t.Errorf("%s: %v, want %v", c.name, c.err, c.want)
			}
		}
		var ke *storage.KeyError
		if err := b.Put(ctx, skill, "c/../x", []byte("v"), storage.Quota{}); !errors.As(err, &ke) || !strings.Contains(ke.Reason, `".."`) {
			t.Errorf("key error %v does not name the rule", err)
		}
		wantUsage(t, ctx, b, skill, storage.Usage{})
	}},
	{"quota of keys and bytes", func(t *testing.T, ctx context.Context, b storage.Backend) {
		q := storage.Quota{MaxKeys: 2}
		for _, k := range []string{"c/1", "c/2"} {
			if err := b.Put(ctx, skill, k, []byte("v"), q); err != nil {
				t.Fatal(err)
			}
		}
		var qe *storage.QuotaError
		err := b.Put(ctx, skill, "c/3", []byte("v"), q)
		if !errors.As(err, &qe) || qe.Limit != storage.LimitKeys || qe.Max != 2 || qe.Would != 3 || !errors.Is(err, storage.ErrQuotaExceeded) {
			t.Fatalf("third key: %v (%+v)", err, qe)
		}
		if _, err := b.CompareAndSwap(ctx, skill, "c/3", nil, []byte("v"), q); !errors.As(err, &qe) {
			t.Fatalf("third key by cas: %v", err)
		}
		if err := b.Put(ctx, skill, "c/1", []byte("replaced"), q); err != nil {
			t.Fatalf("replacing under the key quota: %v", err)
		}
		wantGet(t, ctx, b, skill, "c/3", nil)
		// bytes: c/1 (3) + "replaced" (8) + c/2 (3) + "v" (1) = 15
		wantUsage(t, ctx, b, skill, storage.Usage{Keys: 2, Bytes: 15})
		qb := storage.Quota{MaxBytes: 16}
		err = b.Put(ctx, skill, "c/2", []byte("vvv"), qb)
		if !errors.As(err, &qe) || qe.Limit != storage.LimitBytes || qe.Max != 16 || qe.Would != 17 {
			t.Fatalf("over the byte quota: %v (%+v)", err, qe)
		}
		// A skill over a lowered quota may still shrink and delete.
		low := storage.Quota{MaxKeys: 1, MaxBytes: 4}
		if err := b.Put(ctx, skill, "c/1", []byte("r"), low); err != nil {
			t.Fatalf("shrinking over quota: %v", err)
		}
		if _, err := b.Delete(ctx, skill, "c/2"); err != nil {
			t.Fatal(err)
		}
		wantUsage(t, ctx, b, skill, storage.Usage{Keys: 1, Bytes: 4})
	}},
	{"compare and swap", func(t *testing.T, ctx context.Context, b storage.Backend) {
		res, err := b.CompareAndSwap(ctx, skill, "c/n", nil, []byte("1"), storage.Quota{})
		if err != nil || !res.Swapped || !res.Found || string(res.Current) != "1" {
			t.Fatalf("create: %+v %v", res, err)
		}
		res, err = b.CompareAndSwap(ctx, skill, "c/n", nil, []byte("x"), storage.Quota{})
		if err != nil || res.Swapped || !res.Found || string(res.Current) != "1" {
			t.Fatalf("absent expected, key present: %+v %v", res, err)
		}
		res, err = b.CompareAndSwap(ctx, skill, "c/n", []byte("0"), []byte("x"), storage.Quota{})
		if err != nil || res.Swapped || string(res.Current) != "1" {
			t.Fatalf("wrong expected: %+v %v", res, err)
		}
		res, err = b.CompareAndSwap(ctx, skill, "c/n", []byte("1"), []byte{}, storage.Quota{})
		if err != nil || !res.Swapped || res.Current == nil || len(res.Current) != 0 {
			t.Fatalf("swap to empty: %+v %v", res, err)
		}
		res, err = b.CompareAndSwap(ctx, skill, "c/n", nil, []byte("y"), storage.Quota{})
		if err != nil || res.Swapped || !res.Found || res.Current == nil || len(res.Current) != 0 {
			t.Fatalf("empty is not absent: %+v %v", res, err)
		}
		res, err = b.CompareAndSwap(ctx, skill, "c/n", []byte{}, []byte("2"), storage.Quota{})
		if err != nil || !res.Swapped {
			t.Fatalf("swap from empty: %+v %v", res, err)
		}
		res, err = b.CompareAndSwap(ctx, skill, "c/missing", []byte("1"), []byte("2"), storage.Quota{})
		if err != nil || res.Swapped || res.Found || res.Current != nil {
			t.Fatalf("expected on a missing key: %+v %v", res, err)
		}
		wantGet(t, ctx, b, skill, "c/n", []byte("2"))
	}},
	{"list order, prefix, cursor and pages", func(t *testing.T, ctx context.Context, b storage.Backend) {
		keys := []string{"c/b", "c/a", "c/a_b", "c/ab", "c/a/x", "c-d/1", "c/.h", "d/1", "c/z"}
		for _, k := range keys {
			put(t, ctx, b, skill, k, "v")
		}
		put(t, ctx, b, "other.skill", "c/other", "v")
		want := slices.Clone(keys)
		slices.Sort(want)
		for _, limit := range []int{0, 1, 2, 3, 1000} {
			got, pages := listAll(t, ctx, b, "", limit)
			if !slices.Equal(got, want) {
				t.Fatalf("limit %d: %q, want %q", limit, got, want)
			}
			if limit == 1 && pages != len(want) {
				t.Fatalf("limit 1 took %d pages", pages)
			}
		}
		for _, c := range []struct {
			prefix string
			want   []string
		}{
			{"c/", []string{"c/.h", "c/a", "c/a/x", "c/a_b", "c/ab", "c/b", "c/z"}},
			{"c/a", []string{"c/a", "c/a/x", "c/a_b", "c/ab"}},
			{"c/a_", []string{"c/a_b"}}, // '_' is no wildcard
			{"c/a/", []string{"c/a/x"}},
			{"e/", []string{}},
		} {
			got, _ := listAll(t, ctx, b, c.prefix, 2)
			if !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
				t.Errorf("prefix %q: %q, want %q", c.prefix, got, c.want)
			}
		}
		for _, c := range []struct {
			prefix, cursor string
			want           []string
		}{
			{"c/", "c/a_b", []string{"c/ab", "c/b", "c/z"}},
			{"c/", "b", []string{"c/.h", "c/a", "c/a/x", "c/a_b", "c/ab", "c/b", "c/z"}}, // cursor before the prefix
			{"c/", "c/zz", []string{}},
			{"c/", "d", []string{}},
			{"", "c/z", []string{"d/1"}},
		} {
			got, next, err := b.List(ctx, skill, c.prefix, 0, c.cursor)
			if err != nil || next != "" || !slices.Equal(got, c.want) {
				t.Errorf("prefix %q cursor %q: %q %q %v, want %q", c.prefix, c.cursor, got, next, err, c.want)
			}
		}
	}},
	{"purge and skills", func(t *testing.T, ctx context.Context, b storage.Backend) {
		if all, err := b.Skills(ctx); err != nil || len(all) != 0 {
			t.Fatalf("Skills of an empty backend: %v %v", all, err)
		}
		put(t, ctx, b, skill, "c/a", "12")
		put(t, ctx, b, skill, "c/b", "3")
		put(t, ctx, b, "other:skill", "x", "4")
		all, err := b.Skills(ctx)
		want := map[string]storage.Usage{skill: {Keys: 2, Bytes: 9}, "other:skill": {Keys: 1, Bytes: 2}}
		if err != nil || fmt.Sprint(all) != fmt.Sprint(want) {
			t.Fatalf("Skills = %v %v, want %v", all, err, want)
		}
		gone, err := b.Purge(ctx, skill)
		if err != nil || gone != (storage.Usage{Keys: 2, Bytes: 9}) {
			t.Fatalf("Purge = %+v %v", gone, err)
		}
		wantGet(t, ctx, b, skill, "c/a", nil)
		wantUsage(t, ctx, b, skill, storage.Usage{})
		if gone, err := b.Purge(ctx, skill); err != nil || gone != (storage.Usage{}) {
			t.Fatalf("second Purge = %+v %v", gone, err)
		}
		all, err = b.Skills(ctx)
		if err != nil || len(all) != 1 || all["other:skill"] != (storage.Usage{Keys: 1, Bytes: 2}) {
			t.Fatalf("Skills after purge = %v %v", all, err)
		}
	}},
	{"concurrent swaps: no lost update", func(t *testing.T, ctx context.Context, b storage.Backend) {
		const workers, each = 4, 10
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- Increment(ctx, b, skill, "c/n", each)
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		wantGet(t, ctx, b, skill, "c/n", []byte(fmt.Sprint(workers*each)))
	}},
	{"closed", func(t *testing.T, ctx context.Context, b storage.Backend) {
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		if err := b.Put(ctx, skill, "c/a", []byte("v"), storage.Quota{}); !errors.Is(err, storage.ErrClosed) {
			t.Errorf("Put after Close: %v", err)
		}
		if _, _, err := b.Get(ctx, skill, "c/a"); !errors.Is(err, storage.ErrClosed) {
			t.Errorf("Get after Close: %v", err)
		}
		if _, err := b.Skills(ctx); !errors.Is(err, storage.ErrClosed) {
			t.Errorf("Skills after Close: %v", err)
		}
	}},
}

// Increment adds 1 to the decimal counter under key n times, each by
// read, compute, compare-and-swap and retry (what a guest does).
func Increment(ctx context.Context, b storage.Backend, skillID, key string, n int) error {
	for range n {
		for {
			cur, found, err := b.Get(ctx, skillID, key)
			if err != nil {
				return err
			}
			v := 0
			var expected []byte
			if found {
				expected = cur
				if _, err := fmt.Sscan(string(cur), &v); err != nil {
					return fmt.Errorf("counter %q: %w", cur, err)
				}
			}
			res, err := b.CompareAndSwap(ctx, skillID, key, expected, []byte(fmt.Sprint(v+1)), storage.Quota{})
			if err != nil {
				return err
			}
			if res.Swapped {
				break
			}
		}
	}
	return nil
}

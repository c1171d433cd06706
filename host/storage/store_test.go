package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/palyra-go/palyra/host/errcode"
)

func TestGetPutDelete(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)

	if v, ok, err := s.Get(ctx, "acme.x", "counters/visits"); err != nil || ok || v != nil {
		t.Fatalf("Get of a missing key = %q, %v, %v", v, ok, err)
	}
	mustPut(t, s, "acme.x", "counters/visits", "1")
	mustPut(t, s, "acme.x", "counters/visits", "22")
	v, ok, err := s.Get(ctx, "acme.x", "counters/visits")
	if err != nil || !ok || string(v) != "22" {
		t.Fatalf("Get = %q, %v, %v; want 22", v, ok, err)
	}
	if err := s.Put(ctx, "acme.x", "counters/empty", nil, Quota{}); err != nil {
		t.Fatalf("Put of an empty value: %v", err)
	}
	if v, ok, err := s.Get(ctx, "acme.x", "counters/empty"); err != nil || !ok || v == nil || len(v) != 0 {
		t.Fatalf("Get of an empty value = %#v, %v, %v; want a found empty slice", v, ok, err)
	}
	want := Usage{Keys: 2, Bytes: int64(len("counters/visits") + 2 + len("counters/empty"))}
	if u, err := s.Usage(ctx, "acme.x"); err != nil || u != want {
		t.Fatalf("Usage = %+v, %v; want %+v", u, err, want)
	}
	if del, err := s.Delete(ctx, "acme.x", "counters/visits"); err != nil || !del {
		t.Fatalf("Delete = %v, %v; want true", del, err)
	}
	if del, err := s.Delete(ctx, "acme.x", "counters/visits"); err != nil || del {
		t.Fatalf("second Delete = %v, %v; want false", del, err)
	}
	if _, ok, _ := s.Get(ctx, "acme.x", "counters/visits"); ok {
		t.Fatal("deleted key still found")
	}
	want = Usage{Keys: 1, Bytes: int64(len("counters/empty"))}
	if u, err := s.Usage(ctx, "acme.x"); err != nil || u != want || summed(t, s, "acme.x") != want {
		t.Fatalf("Usage after delete = %+v, %v; want %+v", u, err, want)
	}
}

func TestArgumentsRefused(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	big := make([]byte, MaxValueBytes+1)
	tests := []struct {
		name string
		call func() error
		want error
	}{
		{"get traversal", func() error { _, _, err := s.Get(ctx, "acme.x", "a/../b"); return err }, ErrInvalidKey},
		{"put absolute", func() error { return s.Put(ctx, "acme.x", "/etc/passwd", []byte("x"), Quota{}) }, ErrInvalidKey},
		{"delete NUL", func() error { _, err := s.Delete(ctx, "acme.x", "a\x00"); return err }, ErrInvalidKey},
		{"full key too long", func() error {
			return s.Put(ctx, "acme.x", strings.Repeat("k", MaxFullKeyBytes+1), nil, Quota{})
		}, ErrInvalidKey},
		{"list prefix", func() error { _, _, err := s.List(ctx, "acme.x", "../", 0, ""); return err }, ErrInvalidKey},
		{"list cursor", func() error { _, _, err := s.List(ctx, "acme.x", "", 0, "a%"); return err }, ErrInvalidKey},
		{"list limit over", func() error { _, _, err := s.List(ctx, "acme.x", "", MaxListLimit+1, ""); return err }, ErrInvalidListLimit},
		{"list limit negative", func() error { _, _, err := s.List(ctx, "acme.x", "", -1, ""); return err }, ErrInvalidListLimit},
		{"value too large", func() error { return s.Put(ctx, "acme.x", "k", big, Quota{}) }, ErrValueTooLarge},
		{"negative quota", func() error { return s.Put(ctx, "acme.x", "k", nil, Quota{MaxKeys: -1}) }, ErrInvalidQuota},
		{"empty skill", func() error { _, _, err := s.Get(ctx, "", "k"); return err }, ErrInvalidSkillID},
		{"skill with slash", func() error { _, err := s.Usage(ctx, "a/b"); return err }, ErrInvalidSkillID},
		{"purge bad skill", func() error { _, err := s.Purge(ctx, "A%"); return err }, ErrInvalidSkillID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), "storage") {
				t.Fatalf("message %q does not name the storage", err)
			}
		})
	}
	err := s.Put(ctx, "acme.x", "k", big, Quota{})
	if msg := err.Error(); !strings.Contains(msg, "1048577 bytes") || !strings.Contains(msg, "1048576 bytes") ||
		errcode.Of(err) != "storage_value_too_large" {
		t.Fatalf("value too large: %q (%s): want the size and the limit", msg, errcode.Of(err))
	}
	if u, _ := s.Skills(ctx); len(u) != 0 {
		t.Fatalf("refused calls wrote something: %v", u)
	}
}

// TestIsolation checks that nothing skill B passes reaches skill A's keys.
func TestIsolation(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	mustPut(t, s, "acme.a", "counters/secret", "A's value")
	mustPut(t, s, "acme.a", "counters/other", "A's other")
	mustPut(t, s, "acme.b", "counters/mine", "B's value")

	for _, key := range []string{"counters/secret", "acme.a/counters/secret", "counters/other"} {
		if v, ok, err := s.Get(ctx, "acme.b", key); err != nil || ok || v != nil {
			t.Errorf("B Get(%q) = %q, %v, %v; want not found", key, v, ok, err)
		}
		if del, err := s.Delete(ctx, "acme.b", key); err != nil || del {
			t.Errorf("B Delete(%q) = %v, %v; want false", key, del, err)
		}
	}
	for _, key := range []string{"../acme.a/counters/secret", "/acme.a/counters/secret", "counters/../../acme.a"} {
		if _, _, err := s.Get(ctx, "acme.b", key); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("B Get(%q) = %v, want ErrInvalidKey", key, err)
		}
	}
	for _, pc := range []struct{ prefix, cursor string }{
		{"", ""}, {"counters/", ""}, {"counters/s", ""}, {"", "a"}, {"", "counters/a"}, {"c", "counters/"},
	} {
		keys, next, err := s.List(ctx, "acme.b", pc.prefix, MaxListLimit, pc.cursor)
		if err != nil {
			t.Fatalf("B List(%q, %q): %v", pc.prefix, pc.cursor, err)
		}
		for _, k := range keys {
			if k != "counters/mine" {
				t.Errorf("B List(%q, %q) returned %q", pc.prefix, pc.cursor, k)
			}
		}
		if next != "" {
			t.Errorf("B List(%q, %q) next %q", pc.prefix, pc.cursor, next)
		}
	}
	if _, err := s.Purge(ctx, "acme.b"); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"counters/secret", "counters/other"} {
		if v, ok, err := s.Get(ctx, "acme.a", key); err != nil || !ok || !strings.HasPrefix(string(v), "A's") {
			t.Errorf("A Get(%q) after B's purge = %q, %v, %v", key, v, ok, err)
		}
	}
	if u, err := s.Usage(ctx, "acme.a"); err != nil || u.Keys != 2 {
		t.Errorf("A usage after B's purge = %+v, %v", u, err)
	}
}

func TestQuota(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		quota Quota
		// each put is key=value; the last one is refused
		puts      []string
		limit     string
		max, want int64
	}{
		{"keys", Quota{MaxKeys: 3}, []string{"a=1", "b=1", "c=1", "d=1"}, LimitKeys, 3, 4},
		{"bytes", Quota{MaxBytes: 10}, []string{"a=1234", "b=1234", "c=1"}, LimitBytes, 10, 12},
		{"bytes by replacing", Quota{MaxBytes: 10}, []string{"a=1234", "b=1234", "a=12345"}, LimitBytes, 10, 11},
		{"keys before bytes", Quota{MaxKeys: 1, MaxBytes: 2}, []string{"a=1", "b=123"}, LimitKeys, 1, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openTest(t)
			put := func(kv string) error {
				k, v, _ := strings.Cut(kv, "=")
				return s.Put(ctx, "acme.x", k, []byte(v), tt.quota)
			}
			for _, kv := range tt.puts[:len(tt.puts)-1] {
				if err := put(kv); err != nil {
					t.Fatalf("Put %s: %v", kv, err)
				}
			}
			before, _ := s.Usage(ctx, "acme.x")
			err := put(tt.puts[len(tt.puts)-1])
			var qe *QuotaError
			if !errors.As(err, &qe) || !errors.Is(err, ErrQuotaExceeded) || errcode.Of(err) != "storage_quota_exceeded" {
				t.Fatalf("last Put = %v, want a *QuotaError", err)
			}
			if *qe != (QuotaError{SkillID: "acme.x", Limit: tt.limit, Max: tt.max, Would: tt.want}) {
				t.Fatalf("QuotaError = %+v", *qe)
			}
			wantMsg := fmt.Sprintf("storage quota of skill acme.x exceeded: %d %s would pass the limit of %d", tt.want, tt.limit, tt.max)
			if err.Error() != wantMsg {
				t.Fatalf("message %q, want %q", err, wantMsg)
			}
			if after, _ := s.Usage(ctx, "acme.x"); after != before || summed(t, s, "acme.x") != before {
				t.Fatalf("a refused Put changed usage: %+v -> %+v", before, after)
			}
		})
	}

	t.Run("message of a large quota", func(t *testing.T) {
		e := &QuotaError{SkillID: "acme.x", Limit: LimitKeys, Max: 10000, Would: 10001}
		if want := "storage quota of skill acme.x exceeded: 10001 keys would pass the limit of 10000"; e.Error() != want {
			t.Fatalf("%q, want %q", e.Error(), want)
		}
	})
}

// TestOverQuotaShrink checks that a skill over its quota (the operator
// lowered it) may replace a value with a smaller one and delete, but not
// grow.
func TestOverQuotaShrink(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	mustPut(t, s, "acme.x", "a", "0123456789")
	mustPut(t, s, "acme.x", "b", "0123456789")
	tight := Quota{MaxKeys: 1, MaxBytes: 5} // usage is 2 keys, 22 bytes

	if err := s.Put(ctx, "acme.x", "a", []byte("0123"), tight); err != nil {
		t.Fatalf("replacing with a smaller value: %v", err)
	}
	if err := s.Put(ctx, "acme.x", "a", []byte("0123"), tight); err != nil {
		t.Fatalf("replacing with an equal value: %v", err)
	}
	if err := s.Put(ctx, "acme.x", "a", []byte("01234"), tight); !errors.Is(err, ErrQuotaExceeded) {
		t.Fatalf("growing a value over quota = %v, want ErrQuotaExceeded", err)
	}
	if err := s.Put(ctx, "acme.x", "c", nil, tight); !errors.Is(err, ErrQuotaExceeded) {
		t.Fatalf("adding a key over quota = %v, want ErrQuotaExceeded", err)
	}
	if del, err := s.Delete(ctx, "acme.x", "b"); err != nil || !del {
		t.Fatalf("Delete over quota = %v, %v", del, err)
	}
	want := Usage{Keys: 1, Bytes: 5}
	if u, err := s.Usage(ctx, "acme.x"); err != nil || u != want {
		t.Fatalf("Usage = %+v, %v; want %+v", u, err, want)
	}
}

// TestUsageMatchesSum runs a random sequence of writes and checks after
// each step that the usage table equals the sums over the entries, and
// after all of them that the contents equal a model map.
func TestUsageMatchesSum(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	rng := rand.New(rand.NewPCG(1, 2))
	skills := []string{"acme.a", "acme.b", "acme.c"}
	model := map[string]map[string]string{}
	quota := Quota{MaxKeys: 12, MaxBytes: 300}
	for i := 0; i < 300; i++ {
		skill := skills[rng.IntN(len(skills))]
		key := fmt.Sprintf("k/%d", rng.IntN(16))
		if model[skill] == nil {
			model[skill] = map[string]string{}
		}
		switch op := rng.IntN(10); {
		case op < 6:
			v := strings.Repeat("v", rng.IntN(40))
			err := s.Put(ctx, skill, key, []byte(v), quota)
			switch {
			case err == nil:
				model[skill][key] = v
			case !errors.Is(err, ErrQuotaExceeded):
				t.Fatalf("step %d: Put: %v", i, err)
			}
		case op < 9:
			del, err := s.Delete(ctx, skill, key)
			_, had := model[skill][key]
			if err != nil || del != had {
				t.Fatalf("step %d: Delete(%s, %s) = %v, %v; model has it: %v", i, skill, key, del, err, had)
			}
			delete(model[skill], key)
		default:
			gone, err := s.Purge(ctx, skill)
			if err != nil || gone.Keys != int64(len(model[skill])) {
				t.Fatalf("step %d: Purge = %+v, %v; model has %d keys", i, gone, err, len(model[skill]))
			}
			model[skill] = map[string]string{}
		}
		u, err := s.Usage(ctx, skill)
		if err != nil {
			t.Fatal(err)
		}
		if sum := summed(t, s, skill); u != sum {
			t.Fatalf("step %d: usage of %s is %+v, the entries sum to %+v", i, skill, u, sum)
		}
		if u.Keys > quota.MaxKeys || u.Bytes > quota.MaxBytes {
			t.Fatalf("step %d: usage %+v passes quota %+v", i, u, quota)
		}
	}
	all, err := s.Skills(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, skill := range skills {
		var want Usage
		for k, v := range model[skill] {
			want.Keys++
			want.Bytes += int64(len(k) + len(v))
			got, ok, err := s.Get(ctx, skill, k)
			if err != nil || !ok || string(got) != v {
				t.Fatalf("Get(%s, %s) = %q, %v, %v; model %q", skill, k, got, ok, err, v)
			}
		}
		if all[skill] != want {
			t.Fatalf("Skills()[%s] = %+v, model %+v", skill, all[skill], want)
		}
	}
}

func TestListPagination(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	var want []string
	for i := 0; i < 250; i++ {
		k := fmt.Sprintf("items/%04d", rng250(i))
		mustPut(t, s, "acme.x", k, "v")
		want = append(want, k)
	}
	mustPut(t, s, "acme.x", "itemsZ", "outside the prefix")
	mustPut(t, s, "acme.x", "aaa/first", "before the prefix")
	mustPut(t, s, "acme.y", "items/0001", "another skill")
	slices.Sort(want)

	var got []string
	cursor, pages := "", 0
	for {
		keys, next, err := s.List(ctx, "acme.x", "items/", 100, cursor)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if len(keys) > 100 {
			t.Fatalf("page %d has %d keys", pages, len(keys))
		}
		got = append(got, keys...)
		if next == "" {
			break
		}
		if next != keys[len(keys)-1] {
			t.Fatalf("next %q is not the last key %q", next, keys[len(keys)-1])
		}
		cursor = next
	}
	if pages != 3 || !slices.Equal(got, want) {
		t.Fatalf("%d pages, %d keys; want 3 pages and the 250 keys in order without dupes or gaps", pages, len(got))
	}

	// Exactly a page's worth at the end: no empty extra page promised.
	keys, next, err := s.List(ctx, "acme.x", "items/", 50, want[199])
	if err != nil || len(keys) != 50 || next != "" || keys[0] != want[200] {
		t.Fatalf("last 50 = %d keys, next %q, %v", len(keys), next, err)
	}
	// The default limit, and a cursor before the prefix.
	keys, next, err = s.List(ctx, "acme.x", "items/", 0, "aaa")
	if err != nil || len(keys) != DefaultListLimit || keys[0] != want[0] || next != want[99] {
		t.Fatalf("default limit: %d keys, next %q, %v", len(keys), next, err)
	}
	// A cursor past the prefix's range.
	if keys, next, err := s.List(ctx, "acme.x", "items/", 10, "j"); err != nil || len(keys) != 0 || next != "" || keys == nil {
		t.Fatalf("cursor past the range: %q, %q, %v", keys, next, err)
	}
	// Every key of the skill, in byte order.
	keys, _, err = s.List(ctx, "acme.x", "", MaxListLimit, "")
	if err != nil || len(keys) != 252 || keys[0] != "aaa/first" || keys[251] != "itemsZ" {
		t.Fatalf("all keys: %d, %v", len(keys), err)
	}
}

// rng250 permutes 0..249 so that keys are inserted out of order.
func rng250(i int) int { return (i * 37) % 250 }

// TestListWildcards checks that LIKE wildcards in a prefix are plain bytes.
func TestListWildcards(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	for _, k := range []string{"ab", "a_", "a_b", "aXb", "a-", "b"} {
		mustPut(t, s, "acme.x", k, "v")
	}
	tests := []struct {
		prefix string
		want   []string
	}{
		{"a_", []string{"a_", "a_b"}},
		{"a", []string{"a-", "aXb", "a_", "a_b", "ab"}},
		{"a-", []string{"a-"}},
		{"ab", []string{"ab"}},
		{"c", []string{}},
	}
	for _, tt := range tests {
		keys, next, err := s.List(ctx, "acme.x", tt.prefix, 0, "")
		if err != nil || next != "" || !slices.Equal(keys, tt.want) {
			t.Errorf("List(%q) = %q, %q, %v; want %q", tt.prefix, keys, next, err, tt.want)
		}
	}
}

// TestConcurrentPutsRespectQuota races writers of two Stores on one file
// against one quota.
func TestConcurrentPutsRespectQuota(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "storage.db")
	stores := []*Store{openAt(t, path), openAt(t, path)}
	quota := Quota{MaxKeys: 30, MaxBytes: int64(30 * (len("g0/k00") + 4))}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		ok, full int
		other    []error
	)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := stores[g%2]
			for i := 0; i < 8; i++ {
				err := s.Put(ctx, "acme.x", fmt.Sprintf("g%d/k%02d", g, i), []byte("vvvv"), quota)
				mu.Lock()
				switch {
				case err == nil:
					ok++
				case errors.Is(err, ErrQuotaExceeded):
					full++
				default:
					other = append(other, err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(other) > 0 {
		t.Fatalf("unexpected errors: %v", other)
	}
	u, err := stores[0].Usage(ctx, "acme.x")
	if err != nil {
		t.Fatal(err)
	}
	if ok != 30 || full != 34 || u.Keys != 30 || u != summed(t, stores[1], "acme.x") {
		t.Fatalf("%d stored, %d refused, usage %+v; want exactly 30 stored", ok, full, u)
	}
}

// TestReopenPersists checks that data and usage survive a new Store on the
// same file, as they survive a restart of the process.
func TestReopenPersists(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state", "storage", "storage.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		if err := s.Put(ctx, "acme.x", "counters/visits", []byte(fmt.Sprint(i)), Quota{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, _, err := s.Get(ctx, "acme.x", "counters/visits"); !errors.Is(err, ErrClosed) || errcode.Of(err) != "storage_closed" {
		t.Fatalf("Get after Close = %v, want ErrClosed", err)
	}
	if err := s.Put(ctx, "acme.x", "k", nil, Quota{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Put after Close = %v, want ErrClosed", err)
	}

	for _, p := range []struct {
		path string
		mode os.FileMode
	}{{path, 0o600}, {filepath.Dir(path), 0o700 | os.ModeDir}} {
		fi, err := os.Stat(p.path)
		if err != nil || fi.Mode() != p.mode {
			t.Fatalf("%s: mode %v, %v; want %v", p.path, fi.Mode(), err, p.mode)
		}
	}

	s2 := openAt(t, path)
	v, ok, err := s2.Get(ctx, "acme.x", "counters/visits")
	if err != nil || !ok || string(v) != "3" {
		t.Fatalf("after reopen Get = %q, %v, %v; want 3", v, ok, err)
	}
	if u, err := s2.Usage(ctx, "acme.x"); err != nil || u != (Usage{Keys: 1, Bytes: int64(len("counters/visits") + 1)}) {
		t.Fatalf("after reopen Usage = %+v, %v", u, err)
	}
}

func TestPurgeAndSkills(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	mustPut(t, s, "acme.a", "x/1", "12")
	mustPut(t, s, "acme.a", "x/2", "345")
	mustPut(t, s, "acme.b", "y", "6")

	all, err := s.Skills(ctx)
	want := map[string]Usage{"acme.a": {Keys: 2, Bytes: 3 + 2 + 3 + 3}, "acme.b": {Keys: 1, Bytes: 2}}
	if err != nil || len(all) != 2 || all["acme.a"] != want["acme.a"] || all["acme.b"] != want["acme.b"] {
		t.Fatalf("Skills = %v, %v; want %v", all, err, want)
	}
	gone, err := s.Purge(ctx, "acme.a")
	if err != nil || gone != want["acme.a"] {
		t.Fatalf("Purge = %+v, %v; want %+v", gone, err, want["acme.a"])
	}
	if keys, _, err := s.List(ctx, "acme.a", "", 0, ""); err != nil || len(keys) != 0 {
		t.Fatalf("List after Purge = %q, %v", keys, err)
	}
	if u, err := s.Usage(ctx, "acme.a"); err != nil || u != (Usage{}) {
		t.Fatalf("Usage after Purge = %+v, %v", u, err)
	}
	if gone, err := s.Purge(ctx, "acme.a"); err != nil || gone != (Usage{}) {
		t.Fatalf("second Purge = %+v, %v", gone, err)
	}
	all, err = s.Skills(ctx)
	if err != nil || len(all) != 1 || all["acme.b"] != want["acme.b"] {
		t.Fatalf("Skills after Purge = %v, %v", all, err)
	}
	// The key space is usable again after a purge.
	mustPut(t, s, "acme.a", "x/1", "z")
	if v, ok, _ := s.Get(ctx, "acme.a", "x/1"); !ok || !bytes.Equal(v, []byte("z")) {
		t.Fatalf("Get after re-Put = %q, %v", v, ok)
	}
}

func TestCanceledContext(t *testing.T) {
	s := openTest(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Put(ctx, "acme.x", "k", []byte("v"), Quota{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Put with a canceled context = %v", err)
	}
	if _, _, err := s.Get(ctx, "acme.x", "k"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Get with a canceled context = %v", err)
	}
	if u, err := s.Usage(context.Background(), "acme.x"); err != nil || u != (Usage{}) {
		t.Fatalf("a canceled Put wrote: %+v, %v", u, err)
	}
}

func TestSchemaVersion(t *testing.T) {
	ctx := context.Background()
	if len(migrations) != SchemaVersion {
		t.Fatalf("%d migrations, SchemaVersion %d", len(migrations), SchemaVersion)
	}
	path := filepath.Join(t.TempDir(), "storage.db")
	s := openAt(t, path)
	var v int
	var mode string
	if err := s.db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil || v != SchemaVersion {
		t.Fatalf("user_version %d, %v", v, err)
	}
	if err := s.db.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode %q, %v", mode, err)
	}
	if _, err := s.db.ExecContext(ctx, `PRAGMA user_version = 99`); err != nil {
		t.Fatal(err)
	}
	if s2, err := Open(ctx, path); !errors.Is(err, ErrSchemaTooNew) {
		if s2 != nil {
			_ = s2.Close()
		}
		t.Fatalf("Open of a newer schema = %v, want ErrSchemaTooNew", err)
	}
	if _, err := Open(ctx, " "); !errors.Is(err, ErrInvalidPath) {
		t.Fatal("Open of an empty path succeeded")
	}
	if _, err := Open(ctx, t.TempDir()); err == nil {
		t.Fatal("Open of a directory succeeded")
	}
}

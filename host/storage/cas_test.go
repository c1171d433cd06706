package storage

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// TestCompareAndSwap: a swap happens exactly when the key holds the
// expected value (nil expecting absence, empty expecting an empty value),
// the result names what the key holds, and usage follows the writes.
func TestCompareAndSwap(t *testing.T) {
	ctx := context.Background()
	const key = "counters/n"
	tests := []struct {
		name        string
		setup       *string // value stored first; nil: the key is absent
		expected    []byte
		value       string
		wantSwapped bool
		wantFound   bool
		wantCurrent []byte
	}{
		{"absent expected absent", nil, nil, "1", true, true, []byte("1")},
		{"absent expected a value", nil, []byte("1"), "2", false, false, nil},
		{"absent expected empty", nil, []byte{}, "2", false, false, nil},
		{"value expected absent", ptr("7"), nil, "8", false, true, []byte("7")},
		{"value matches", ptr("7"), []byte("7"), "8", true, true, []byte("8")},
		{"value differs", ptr("7"), []byte("6"), "8", false, true, []byte("7")},
		{"value is a prefix", ptr("77"), []byte("7"), "8", false, true, []byte("77")},
		{"empty matches empty", ptr(""), []byte{}, "x", true, true, []byte("x")},
		{"empty expected absent", ptr(""), nil, "x", false, true, []byte{}},
		{"swap to empty", ptr("a"), []byte("a"), "", true, true, []byte{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := openTest(t)
			if tc.setup != nil {
				mustPut(t, s, "acme.x", key, *tc.setup)
			}
			res, err := s.CompareAndSwap(ctx, "acme.x", key, tc.expected, []byte(tc.value), Quota{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Swapped != tc.wantSwapped || res.Found != tc.wantFound || (res.Current == nil) != (tc.wantCurrent == nil) || string(res.Current) != string(tc.wantCurrent) {
				t.Fatalf("CompareAndSwap = %+v; want swapped %v found %v current %q (nil %v)",
					res, tc.wantSwapped, tc.wantFound, tc.wantCurrent, tc.wantCurrent == nil)
			}
			v, found, err := s.Get(ctx, "acme.x", key)
			if err != nil || found != tc.wantFound || string(v) != string(tc.wantCurrent) {
				t.Fatalf("Get after = %q, %v, %v; want %q, %v", v, found, err, tc.wantCurrent, tc.wantFound)
			}
			u, err := s.Usage(ctx, "acme.x")
			if err != nil || u != summed(t, s, "acme.x") {
				t.Fatalf("Usage = %+v, %v; the entries sum to %+v", u, err, summed(t, s, "acme.x"))
			}
		})
	}
}

func ptr(s string) *string { return &s }

// TestCompareAndSwapRules: a swap is refused as a Put is (key rules,
// value size, quota), and a refused swap writes nothing.
func TestCompareAndSwapRules(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	mustPut(t, s, "acme.x", "c/a", "1234")
	tests := []struct {
		name     string
		key      string
		expected []byte
		value    []byte
		q        Quota
		want     error
	}{
		{"bad key", "c/../a", nil, []byte("1"), Quota{}, ErrInvalidKey},
		{"value too large", "c/b", nil, make([]byte, MaxValueBytes+1), Quota{}, ErrValueTooLarge},
		{"negative quota", "c/b", nil, []byte("1"), Quota{MaxKeys: -1}, ErrInvalidQuota},
		{"keys quota", "c/b", nil, []byte("1"), Quota{MaxKeys: 1}, ErrQuotaExceeded},
		{"bytes quota", "c/a", []byte("1234"), []byte("12345"), Quota{MaxBytes: int64(len("c/a") + 4)}, ErrQuotaExceeded},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := s.CompareAndSwap(ctx, "acme.x", tc.key, tc.expected, tc.value, tc.q)
			if !errors.Is(err, tc.want) || res.Swapped {
				t.Fatalf("CompareAndSwap = %+v, %v; want %v", res, err, tc.want)
			}
			if v, _, _ := s.Get(ctx, "acme.x", "c/a"); string(v) != "1234" {
				t.Fatalf("c/a = %q after a refused swap", v)
			}
			if _, found, _ := s.Get(ctx, "acme.x", "c/b"); found {
				t.Fatal("c/b written by a refused swap")
			}
		})
	}
	// Shrinking within a lowered quota is allowed, as for Put.
	res, err := s.CompareAndSwap(ctx, "acme.x", "c/a", []byte("1234"), []byte("1"), Quota{MaxBytes: 1})
	if err != nil || !res.Swapped {
		t.Fatalf("shrinking swap over quota = %+v, %v; want swapped", res, err)
	}
}

// TestCompareAndSwapHammer: goroutines on two Stores of one file (as two
// processes would be) each add k to a counter by read and compare-and-swap
// in a retry loop; the counter ends at exactly goroutines*k, so no
// increment was lost however the swaps interleaved.
func TestCompareAndSwapHammer(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "storage.db")
	stores := []*Store{openAt(t, path), openAt(t, path)}
	const goroutines, k = 8, 25
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		retries int
		errs    []error
	)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := stores[g%2]
			for range k {
				for {
					cur, _, err := s.Get(ctx, "acme.x", "c/n")
					if err != nil {
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
						return
					}
					n := 0
					if cur != nil {
						n, _ = strconv.Atoi(string(cur))
					}
					res, err := s.CompareAndSwap(ctx, "acme.x", "c/n", cur, []byte(strconv.Itoa(n+1)), Quota{MaxKeys: 1})
					if err != nil {
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
						return
					}
					if res.Swapped {
						break
					}
					mu.Lock()
					retries++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
	v, _, err := stores[1].Get(ctx, "acme.x", "c/n")
	if err != nil || string(v) != fmt.Sprint(goroutines*k) {
		t.Fatalf("counter = %q, %v; want %d", v, err, goroutines*k)
	}
	t.Logf("%d increments, %d lost races retried", goroutines*k, retries)
}

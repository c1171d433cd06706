package storage

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkGet reads one key of a skill that holds 1000.
func BenchmarkGet(b *testing.B) {
	ctx := context.Background()
	s := openTest(b)
	for i := 0; i < 1000; i++ {
		mustPut(b, s, "acme.x", fmt.Sprintf("counters/%04d", i), "some value of a few bytes")
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v, ok, err := s.Get(ctx, "acme.x", fmt.Sprintf("counters/%04d", i%1000))
		if err != nil || !ok || len(v) == 0 {
			b.Fatalf("Get: %q, %v, %v", v, ok, err)
		}
	}
}

// BenchmarkPut replaces values under a quota: each Put is one durable
// transaction (synchronous=FULL), so this measures the fsync.
func BenchmarkPut(b *testing.B) {
	ctx := context.Background()
	s := openTest(b)
	q := Quota{MaxKeys: 10000, MaxBytes: 1 << 20}
	value := []byte("some value of a few bytes")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.Put(ctx, "acme.x", fmt.Sprintf("counters/%04d", i%1000), value, q); err != nil {
			b.Fatalf("Put: %v", err)
		}
	}
}

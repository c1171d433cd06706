package inventory

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkInstallTx measures one install-shaped transaction: PutSkill,
// SetStatus (with its event) and AppendEvent, committed durably
// (synchronous=FULL, so it includes the fsync of the WAL).
func BenchmarkInstallTx(b *testing.B) {
	ctx := context.Background()
	db := openTest(b)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := installSkill(ctx, db, fmt.Sprintf("bench.s%d", i)); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkSkill measures the execution gate's read: the current version
// with its status row.
func BenchmarkSkill(b *testing.B) {
	ctx := context.Background()
	db := openTest(b)
	for i := range 100 {
		if err := installSkill(ctx, db, fmt.Sprintf("bench.s%d", i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := db.Skill(ctx, "bench.s50", ""); err != nil {
			b.Fatal(err)
		}
	}
}

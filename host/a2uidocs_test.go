package host

import (
	"strings"
	"testing"
	"time"
)

func TestULID(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		id := newULID(time.UnixMilli(1_700_000_000_000))
		if len(id) != 26 || strings.Trim(id, crockford) != "" || seen[id] {
			t.Fatalf("ulid %q", id)
		}
		seen[id] = true
	}
	a, b := newULID(time.UnixMilli(1000)), newULID(time.UnixMilli(2000))
	if a[:10] >= b[:10] {
		t.Errorf("time prefix not ordered: %s %s", a, b)
	}
}

package procstat

import (
	"os"
	"testing"
)

func TestRSSKiB(t *testing.T) {
	kib, err := RSSKiB(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// A running Go test binary holds at least a megabyte and far less
	// than the machine.
	if kib < 1024 || kib > 16<<20 {
		t.Errorf("RSSKiB(self) = %d KiB, out of range", kib)
	}
}

func TestRSSKiBNoProcess(t *testing.T) {
	if _, err := RSSKiB(-1); err == nil {
		t.Error("RSSKiB(-1): no error")
	}
}

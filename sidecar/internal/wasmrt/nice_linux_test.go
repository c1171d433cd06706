//go:build linux

package wasmrt

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestBackgroundThread: the preparer's thread runs at PreparerNice, and the
// goroutine that called backgroundThread keeps it to itself.
func TestBackgroundThread(t *testing.T) {
	before, err := unix.Getpriority(unix.PRIO_PROCESS, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan int, 1)
	go func() {
		backgroundThread()
		// The raw getpriority syscall answers 20 - nice.
		p, err := unix.Getpriority(unix.PRIO_PROCESS, unix.Gettid())
		if err != nil {
			p = -1
		}
		got <- p
	}()
	if p := <-got; p != 20-PreparerNice {
		t.Errorf("preparer thread priority %d, want %d (nice %d)", p, 20-PreparerNice, PreparerNice)
	}
	if after, _ := unix.Getpriority(unix.PRIO_PROCESS, 0); after != before {
		t.Errorf("the process's own priority changed: %d, was %d", after, before)
	}
}

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

func TestReadMemory(t *testing.T) {
	m, err := ReadMemory(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// A process's PSS is at most its RSS, and splits into anonymous and
	// file-backed pages (shmem, the rest, is none for a test binary; the
	// kernel rounds each part, hence the slack).
	if m.RSS < 1024 || m.PSS <= 0 || m.PSS > m.RSS {
		t.Errorf("ReadMemory(self) = %+v: want 0 < PSS <= RSS, RSS >= 1 MiB", m)
	}
	if d := m.PSS - m.PSSAnon - m.PSSFile; d < -2 || d > 2 {
		t.Errorf("ReadMemory(self) = %+v: PSS is not Pss_Anon + Pss_File", m)
	}
}

func TestReadMemoryNoProcess(t *testing.T) {
	if _, err := ReadMemory(-1); err == nil {
		t.Error("ReadMemory(-1): no error")
	}
}

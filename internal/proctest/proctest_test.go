package proctest_test

import (
	"os"
	"os/exec"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/palyra-go/palyra/internal/proctest"
)

func TestChildrenAndAlive(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if !slices.Contains(proctest.Children(os.Getpid()), pid) {
		t.Fatalf("Children(%d) = %v, want %d among them", os.Getpid(), proctest.Children(os.Getpid()), pid)
	}
	if !proctest.Alive(pid) {
		t.Fatalf("Alive(%d) = false for a running child", pid)
	}
	cmd.Process.Kill()
	// Killed but not reaped: a zombie, which counts as gone.
	proctest.WaitGone(t, []int{pid}, 5*time.Second)
	cmd.Wait()
	if proctest.Alive(pid) || slices.Contains(proctest.Children(os.Getpid()), pid) {
		t.Fatalf("pid %d still seen after Wait", pid)
	}
}

func TestBuffer(t *testing.T) {
	var b proctest.Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				b.Write([]byte("x"))
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if n := len(b.String()); n != 800 {
		t.Fatalf("%d bytes, want 800", n)
	}
}

package escapeprobe

import (
	"context"
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// probeBin is the probe build TestMain makes once, in a directory any
// user may read (the run-as case runs it as nobody).
var probeBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "escapeprobe-bin-")
	if err == nil {
		err = os.Chmod(dir, 0o755)
	}
	if err == nil {
		probeBin, err = Build(context.Background(), dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

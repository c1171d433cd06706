package e2e_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/palyra-go/palyra/internal/buildinfo"
	"github.com/palyra-go/palyra/sdk/examples/examplebuild"
)

// sidecarPath is the palyra-sidecar binary; fetchWasm and counterWasm the
// http-fetch and kv-counter example modules, built once by TestMain.
var sidecarPath, fetchWasm, counterWasm string

// logs collects every log line of every host of the run, to be scanned for
// secret values at the end (TestMain fails the run if one is found).
var logs = &lockedBuffer{}

// secretsSeen are the secret values the tests stored in vaults.
var secretsSeen sync.Map

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "palyra-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := func() int {
		sidecarPath = filepath.Join(dir, "palyra-sidecar")
		build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-ldflags="+buildinfo.SidecarLDFlags, "-o", sidecarPath, "github.com/palyra-go/palyra/cmd/palyra-sidecar")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building palyra-sidecar:", err)
			return 1
		}
		for name, dst := range map[string]*string{"http-fetch": &fetchWasm, "kv-counter": &counterWasm} {
			if *dst, err = examplebuild.Build(context.Background(), name, dir); err != nil {
				fmt.Fprintf(os.Stderr, "building the %s example: %v\n", name, err)
				return 1
			}
		}
		code := m.Run()
		// No secret value in any log line of the whole run.
		all := logs.String()
		secretsSeen.Range(func(k, _ any) bool {
			if bytes.Contains([]byte(all), []byte(k.(string))) {
				fmt.Fprintf(os.Stderr, "FAIL: a secret value appears in the logs of the run\n")
				code = 1
			}
			return true
		})
		return code
	}()
	os.RemoveAll(dir)
	if code != 0 {
		os.Exit(code)
	}
	if err := goleak.Find(); err != nil {
		fmt.Fprintln(os.Stderr, "goleak:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

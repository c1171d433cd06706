package host

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/palyra-go/palyra/host/statedir"
)

// PrecompileTimeout bounds one run of `palyra-sidecar precompile`.
const PrecompileTimeout = 2 * time.Minute

// DefaultCacheDir is the precompiled-module cache of a state directory,
// <state>/cache/modules (statedir.Layout.ModuleCache).
func DefaultCacheDir(stateDir string) string {
	return statedir.At(stateDir).ModuleCache()
}

// PrecompileHook returns the install.Config.Precompile hook that compiles
// each staged module with the sidecar binary into cacheDir (created 0700),
// so that the first call of a new skill loads it from the cache.
func PrecompileHook(sidecarPath, cacheDir string) (func(ctx context.Context, modulePath, sha string) error, error) {
	if err := os.MkdirAll(cacheDir, 0o700); err != nil {
		return nil, fmt.Errorf("host: cache dir: %w", err)
	}
	return func(ctx context.Context, modulePath, sha string) error {
		return Precompile(ctx, sidecarPath, modulePath, cacheDir, sha)
	}, nil
}

// Precompile runs `sidecarPath precompile --wasm modulePath --cache-dir
// cacheDir --sha256 sha` as a child process (killed with the host, bounded
// by PrecompileTimeout), so that compiling an untrusted module happens
// outside the host process. It is the install hook the Host sets when it
// knows a sidecar binary.
func Precompile(ctx context.Context, sidecarPath, modulePath, cacheDir, sha string) error {
	ctx, cancel := context.WithTimeout(ctx, PrecompileTimeout)
	defer cancel()
	args := []string{"precompile", "--wasm", modulePath, "--cache-dir", cacheDir}
	if sha != "" {
		args = append(args, "--sha256", sha)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, sidecarPath, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	// Pdeathsig fires when the forking OS thread exits; a fresh goroutine
	// is never on a thread Go ends (see supervisor.start).
	done := make(chan error, 1)
	go func() { done <- cmd.Run() }()
	runErr := <-done
	var res struct {
		CacheStatus string `json:"cache_status"`
		ErrorCode   string `json:"error_code"`
		Error       string `json:"error"`
	}
	jerr := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &res)
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("palyra-sidecar precompile: %w", ctx.Err())
	case runErr != nil && jerr == nil && res.Error != "":
		return fmt.Errorf("%s: %s", res.ErrorCode, res.Error)
	case runErr != nil:
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 256 {
			msg = msg[:256]
		}
		return fmt.Errorf("palyra-sidecar precompile: %v: %s", runErr, msg)
	case jerr != nil:
		return fmt.Errorf("palyra-sidecar precompile: bad output: %v", jerr)
	}
	return nil
}

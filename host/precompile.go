package host

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/palyra-go/palyra/host/statedir"
	"github.com/palyra-go/palyra/host/supervisor"
)

// PrecompileTimeout bounds one run of `palyra-sidecar precompile`.
const PrecompileTimeout = supervisor.DefaultPrecompileTimeout

// DefaultCacheDir is the precompiled-module cache of a state directory,
// <state>/cache/modules (statedir.Layout.ModuleCache).
func DefaultCacheDir(stateDir string) string {
	return statedir.At(stateDir).ModuleCache()
}

// PrecompileHook returns the install.Config.Precompile hook that compiles
// each staged module with the sidecar binary into cacheDir (created 0700),
// so that the first call of a new skill loads it from the cache. It is for
// an installer without a Host; a Host precompiles through its own
// supervisor.
func PrecompileHook(sidecarPath, cacheDir string) (func(ctx context.Context, modulePath, sha string) error, error) {
	if err := os.MkdirAll(cacheDir, 0o700); err != nil {
		return nil, fmt.Errorf("host: cache dir: %w", err)
	}
	return func(ctx context.Context, modulePath, sha string) error {
		return Precompile(ctx, sidecarPath, modulePath, cacheDir, sha)
	}, nil
}

// Precompile compiles modulePath into cacheDir with the sidecar binary
// through a supervisor of its own that lives for this call only (see
// supervisor.Supervisor.Precompile: the child gets the launcher's
// environment allowlist, process group and Pdeathsig, and is bounded by
// PrecompileTimeout), so that compiling an untrusted module happens
// outside the host process.
func Precompile(ctx context.Context, sidecarPath, modulePath, cacheDir, sha string) error {
	sup, err := supervisor.New(supervisor.Config{SidecarPath: sidecarPath, CacheDir: cacheDir, IdleTimeout: -1, HealthInterval: -1})
	if err != nil {
		return err
	}
	err = sup.Precompile(ctx, modulePath, sha)
	return errors.Join(err, sup.Close(context.Background()))
}

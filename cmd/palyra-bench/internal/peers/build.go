package peers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/palyra-go/palyra/sdk/examples/examplebuild"
)

// extismGuestName is the file name (without .wasm) of the built guest.
const extismGuestName = "extismguest"

// BuildExtismGuest compiles the Extism guest (the extismguest directory next
// to this package's sources) into outDir/extismguest.wasm and returns that
// path, with examplebuild.BuildWasip1 (a wasip1 reactor; temp file and
// rename). ctx bounds the go command.
func BuildExtismGuest(ctx context.Context, outDir string) (wasmPath string, err error) {
	src, err := extismGuestDir()
	if err != nil {
		return "", err
	}
	final, err := filepath.Abs(filepath.Join(outDir, extismGuestName+".wasm"))
	if err != nil {
		return "", fmt.Errorf("peers: build %s: %w", extismGuestName, err)
	}
	if err := examplebuild.BuildWasip1(ctx, src, final); err != nil {
		return "", fmt.Errorf("peers: %w", err)
	}
	return final, nil
}

// extismGuestRel is the guest's source directory in the repository.
const extismGuestRel = "cmd/palyra-bench/internal/peers/extismguest"

// extismGuestDir finds the guest's sources from this file's path, or, in a
// binary built with -trimpath, from the repository root examplebuild finds.
func extismGuestDir() (string, error) {
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		dir := filepath.Join(filepath.Dir(file), extismGuestName)
		if isDir(dir) {
			return dir, nil
		}
	}
	root, err := examplebuild.RepoRoot()
	if err != nil {
		return "", fmt.Errorf("peers: find the sources of %s: %w", extismGuestName, err)
	}
	dir := filepath.Join(root, filepath.FromSlash(extismGuestRel))
	if !isDir(dir) {
		return "", fmt.Errorf("peers: find the sources of %s: %s is not a directory", extismGuestName, dir)
	}
	return dir, nil
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

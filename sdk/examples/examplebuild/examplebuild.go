// Package examplebuild builds the example skills of sdk/examples into
// WebAssembly modules, for tests of the runtime, the CLI and the SDK that
// need a real Go guest.
//
// Build runs the Go toolchain that runs the caller:
//
//	GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o <outDir>/<name>.wasm ./sdk/examples/<name>
//
// from the repository root. MustBuild does the same for tests, once per
// process, into a per-user cache keyed by the sources, so repeated test runs
// reuse the module:
//
//	wasm := examplebuild.MustBuild(t, "echo")
//	manifest := filepath.Join(examplebuild.MustDir(t, "echo"), "skill.toml")
//
// The package needs the repository's source tree: it finds it from this
// file's own path, or else from `go env GOMOD` in the working directory.
package examplebuild

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

// ModulePath is the Go module the examples belong to.
const ModulePath = "github.com/palyra-go/palyra"

// names are the examples, one directory of sdk/examples each.
var names = []string{"echo", "event-log", "http-fetch", "kv-counter", "report"}

// ErrUnknownExample: the name is not one of Names.
var ErrUnknownExample = errors.New("examplebuild: unknown example")

// Names returns the names of the examples, sorted.
func Names() []string { return slices.Clone(names) }

// RepoRoot returns the root of the repository (the directory of the go.mod
// of ModulePath).
func RepoRoot() (string, error) {
	rootOnce.Do(func() { root, rootErr = findRoot() })
	return root, rootErr
}

var (
	rootOnce sync.Once
	root     string
	rootErr  error
)

func findRoot() (string, error) {
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		dir := filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
		if isModuleRoot(dir) {
			return dir, nil
		}
	}
	// Built with -trimpath, or moved: ask the go command about the working
	// directory, which tests run inside the repository.
	out, err := exec.Command(GoCommand(), "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("examplebuild: find the repository root: go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("examplebuild: find the repository root: not inside module %s", ModulePath)
	}
	if dir := filepath.Dir(gomod); isModuleRoot(dir) {
		return dir, nil
	}
	return "", fmt.Errorf("examplebuild: find the repository root: %s is not module %s", gomod, ModulePath)
}

func isModuleRoot(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" && strings.Trim(f[1], `"`) == ModulePath {
			return true
		}
	}
	return false
}

// Dir returns the source directory of the example name, which also holds its
// skill.toml, sbom.cdx.json and provenance.json.
func Dir(name string) (string, error) {
	if !slices.Contains(names, name) {
		return "", fmt.Errorf("%w: %q (have %s)", ErrUnknownExample, name, strings.Join(names, ", "))
	}
	r, err := RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(r, "sdk", "examples", name), nil
}

// MustDir is Dir for tests: it fails tb on error.
func MustDir(tb testing.TB, name string) string {
	tb.Helper()
	d, err := Dir(name)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// GoCommand returns the go command of the toolchain running this process
// (runtime.GOROOT()/bin/go), or "go" from PATH when that does not exist.
func GoCommand() string {
	exe := "go"
	if runtime.GOOS == "windows" {
		exe = "go.exe"
	}
	if p := filepath.Join(runtime.GOROOT(), "bin", exe); fileExists(p) {
		return p
	}
	return "go"
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// maxBuildOutput bounds the compiler output quoted in an error.
const maxBuildOutput = 8 << 10

// Build compiles the example name into outDir/<name>.wasm and returns that
// path. It writes to a temporary file in outDir and renames it into place,
// so a concurrent reader never sees a partial module. ctx bounds the go
// command; cancelling it kills the build.
func Build(ctx context.Context, name, outDir string) (wasmPath string, err error) {
	src, err := Dir(name)
	if err != nil {
		return "", err
	}
	final, err := filepath.Abs(filepath.Join(outDir, name+".wasm"))
	if err != nil {
		return "", fmt.Errorf("examplebuild: %s: %w", name, err)
	}
	if err := BuildWasip1(ctx, src, final); err != nil {
		return "", err
	}
	return final, nil
}

// BuildWasip1 compiles the Go package in pkgDir into the reactor module
// outPath, creating its directory:
//
//	GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 go build -trimpath -buildmode=c-shared [-tags TAGS] -o outPath .
//
// with the Go toolchain that runs the caller. It writes a temporary file
// beside outPath and renames it into place, so a concurrent reader never
// sees a partial module; the error quotes the compiler's output. ctx bounds
// the go command.
func BuildWasip1(ctx context.Context, pkgDir, outPath string, tags ...string) error {
	dir := filepath.Dir(outPath)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("examplebuild: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(outPath)+"-*")
	if err != nil {
		return fmt.Errorf("examplebuild: %w", err)
	}
	tmpPath := tmp.Name()
	tmp.Close()
	defer os.Remove(tmpPath) // a no-op once renamed

	args := []string{"build", "-trimpath", "-buildmode=c-shared"}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	cmd := exec.CommandContext(ctx, GoCommand(), append(args, "-o", tmpPath, ".")...)
	cmd.Dir = pkgDir
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		msg := out.String()
		if len(msg) > maxBuildOutput {
			msg = msg[:maxBuildOutput] + "…"
		}
		return fmt.Errorf("examplebuild: go build %s: %w\n%s", pkgDir, err, msg)
	}
	if err := os.Rename(tmpPath, outPath); err != nil {
		return fmt.Errorf("examplebuild: %w", err)
	}
	return nil
}

// built holds MustBuild's result per example for this process.
var built sync.Map // name → *buildOnce

type buildOnce struct {
	once sync.Once
	path string
	err  error
}

// MustBuild returns the path of the built module of example name, failing
// tb if it cannot be built. The first call in a process builds into
// <user cache dir>/palyra-go/examples/<key>/<name>.wasm, where key hashes
// the Go version and every source file the module depends on (the example's
// own files, the SDK under sdk/go, go.mod and go.sum); a module already
// there is reused. Later calls in the process return the same path. The
// file is shared: callers must not modify it. Entries are never pruned;
// the <user cache dir>/palyra-go/examples directory can be deleted at any
// time.
func MustBuild(tb testing.TB, name string) string {
	tb.Helper()
	v, _ := built.LoadOrStore(name, &buildOnce{})
	b := v.(*buildOnce)
	b.once.Do(func() { b.path, b.err = cachedBuild(tb.Context(), name) })
	if b.err != nil {
		tb.Fatalf("build example %s: %v", name, b.err)
	}
	return b.path
}

func cachedBuild(ctx context.Context, name string) (string, error) {
	key, err := SourceKey(name)
	if err != nil {
		return "", err
	}
	base, err := os.UserCacheDir()
	if err != nil || base == "" {
		base = filepath.Join(os.TempDir(), fmt.Sprintf("palyra-go-cache-%d", os.Getuid()))
	}
	dir := filepath.Join(base, "palyra-go", "examples", key[:32])
	p := filepath.Join(dir, name+".wasm")
	if isWasm(p) {
		return p, nil
	}
	return Build(ctx, name, dir)
}

// isWasm reports whether p is a file that starts with the wasm magic.
func isWasm(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	var head [8]byte
	_, err = io.ReadFull(f, head[:])
	return err == nil && bytes.Equal(head[:], []byte{0, 'a', 's', 'm', 1, 0, 0, 0})
}

// SourceKey returns the hex SHA-256 over what the module of example name is
// built from: the Go version and GOROOT, go.mod, go.sum, the example's
// files and every non-test Go file under sdk/go. It changes whenever a
// rebuild could change the module.
func SourceKey(name string) (string, error) {
	src, err := Dir(name)
	if err != nil {
		return "", err
	}
	r, _ := RepoRoot()
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", runtime.Version(), runtime.GOROOT(), name)
	files := []string{filepath.Join(r, "go.mod"), filepath.Join(r, "go.sum")}
	collect := func(dir string, recursive bool) error {
		return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if p != dir && !recursive {
					return filepath.SkipDir
				}
				return nil
			}
			if strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
				files = append(files, p)
			}
			return nil
		})
	}
	if err := collect(src, false); err != nil {
		return "", fmt.Errorf("examplebuild: hash %s: %w", name, err)
	}
	if err := collect(filepath.Join(r, "sdk", "go"), true); err != nil {
		return "", fmt.Errorf("examplebuild: hash %s: %w", name, err)
	}
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("examplebuild: hash %s: %w", name, err)
		}
		rel, _ := filepath.Rel(r, f)
		fmt.Fprintf(h, "%s\x00%d\x00", filepath.ToSlash(rel), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

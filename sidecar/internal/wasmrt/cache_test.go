package wasmrt_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/palyra-go/palyra/sidecar/internal/wasmrt"
)

func metaPath(info wasmrt.CacheInfo) string {
	return strings.TrimSuffix(info.Path, ".cwasm") + ".meta"
}

// loadCached loads wasm with a new engine on dir and checks the answer
// fixture still runs.
func loadCached(t *testing.T, dir string, wasm []byte) wasmrt.CacheInfo {
	t.Helper()
	e := newEngine(t, wasmrt.Config{CacheDir: dir})
	m := load(t, e, wasm, wasmrt.ModuleConfig{Entrypoint: "answer"})
	if got := exitCodeOf(t, mustInvoke(t, m, wasmrt.Invocation{})); got != 42 {
		t.Fatalf("exit code %d", got)
	}
	info := m.Cache()
	if info.WriteErr != nil {
		t.Fatalf("cache write: %v", info.WriteErr)
	}
	_ = m.Close()
	_ = e.Close()
	return info
}

func TestCacheMissThenHit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	wasm := fixture(t, "answer")
	info := loadCached(t, dir, wasm)
	if info.Status != wasmrt.CacheMiss {
		t.Fatalf("first load: %v", info.Status)
	}
	info = loadCached(t, dir, wasm)
	if info.Status != wasmrt.CacheHit {
		t.Fatalf("second load: %v (%s)", info.Status, info.Reason)
	}
	for path, want := range map[string]os.FileMode{
		dir:                             0o700 | os.ModeDir,
		filepath.Join(dir, "cache.key"): 0o600,
		info.Path:                       0o400,
		metaPath(info):                  0o600,
	} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want {
			t.Errorf("%s: mode %v, want %v", filepath.Base(path), fi.Mode(), want)
		}
	}
	var meta map[string]any
	b, _ := os.ReadFile(metaPath(info))
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(wasm)
	if meta["module_sha256"] != hex.EncodeToString(sum[:]) {
		t.Fatalf("meta %v", meta)
	}
}

// TestCacheRejects corrupts an entry in each way the cache must detect: it
// is rejected, removed, recompiled and stored again (the next load hits).
func TestCacheRejects(t *testing.T) {
	wasm := fixture(t, "answer")
	cases := []struct {
		name   string
		mess   func(t *testing.T, dir string, info wasmrt.CacheInfo)
		reason string
	}{
		{"tampered code", func(t *testing.T, _ string, info wasmrt.CacheInfo) {
			b := readFile(t, info.Path)
			b[len(b)/2] ^= 0xff
			writeFile(t, info.Path, b)
		}, "tampered"},
		{"truncated code", func(t *testing.T, _ string, info wasmrt.CacheInfo) {
			b := readFile(t, info.Path)
			writeFile(t, info.Path, b[:len(b)/2])
		}, "truncated"},
		{"code replaced with a consistent size and sha256", func(t *testing.T, _ string, info wasmrt.CacheInfo) {
			// An attacker without the key can fix the size but not the MAC.
			b := readFile(t, info.Path)
			b[100] ^= 1
			writeFile(t, info.Path, b)
			editMeta(t, info, func(m map[string]any) {
				s := sha256.Sum256(b)
				m["mac"] = hex.EncodeToString(s[:16]) // a MAC's size
			})
		}, "tampered"},
		{"nonce replaced", func(t *testing.T, _ string, info wasmrt.CacheInfo) {
			editMeta(t, info, func(m map[string]any) { m["nonce"] = strings.Repeat("00", 12) })
		}, "tampered"},
		{"nonce invalid", func(t *testing.T, _ string, info wasmrt.CacheInfo) {
			editMeta(t, info, func(m map[string]any) { m["nonce"] = "00" })
		}, "invalid nonce"},
		{"stale fingerprint", func(t *testing.T, _ string, info wasmrt.CacheInfo) {
			editMeta(t, info, func(m map[string]any) { m["fingerprint"] = "0000" })
		}, "stale"},
		{"stale format", func(t *testing.T, _ string, info wasmrt.CacheInfo) {
			editMeta(t, info, func(m map[string]any) { m["format"] = 0 })
		}, "stale"},
		{"entry of another module", func(t *testing.T, _ string, info wasmrt.CacheInfo) {
			editMeta(t, info, func(m map[string]any) { m["module_sha256"] = strings.Repeat("ab", 32) })
		}, "another module"},
		{"meta not JSON", func(t *testing.T, _ string, info wasmrt.CacheInfo) {
			writeFile(t, metaPath(info), []byte("{"))
		}, "not valid JSON"},
		{"meta missing", func(t *testing.T, _ string, info wasmrt.CacheInfo) {
			if err := os.Remove(metaPath(info)); err != nil {
				t.Fatal(err)
			}
		}, "without metadata"},
		{"code missing", func(t *testing.T, _ string, info wasmrt.CacheInfo) {
			if err := os.Remove(info.Path); err != nil {
				t.Fatal(err)
			}
		}, "unreadable"},
		{"code is a symlink", func(t *testing.T, dir string, info wasmrt.CacheInfo) {
			b := readFile(t, info.Path)
			other := filepath.Join(dir, "elsewhere")
			writeFile(t, other, b)
			if err := os.Remove(info.Path); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(other, info.Path); err != nil {
				t.Fatal(err)
			}
		}, "unreadable"},
		{"key replaced", func(t *testing.T, dir string, _ wasmrt.CacheInfo) {
			writeFile(t, filepath.Join(dir, "cache.key"), []byte(strings.Repeat("k", 32)))
		}, "tampered"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "cache")
			info := loadCached(t, dir, wasm)
			tc.mess(t, dir, info)
			got := loadCached(t, dir, wasm)
			if got.Status != wasmrt.CacheRejected || !strings.Contains(got.Reason, tc.reason) {
				t.Fatalf("status %v reason %q, want rejected with %q", got.Status, got.Reason, tc.reason)
			}
			if again := loadCached(t, dir, wasm); again.Status != wasmrt.CacheHit {
				t.Fatalf("after recompiling: %v (%s)", again.Status, again.Reason)
			}
		})
	}
}

func TestCacheKeyTruncated(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	wasm := fixture(t, "answer")
	loadCached(t, dir, wasm)
	writeFile(t, filepath.Join(dir, "cache.key"), []byte("short"))
	got := loadCached(t, dir, wasm)
	if got.Status != wasmrt.CacheRejected {
		t.Fatalf("status %v (%s)", got.Status, got.Reason)
	}
	if b := readFile(t, filepath.Join(dir, "cache.key")); len(b) != 32 {
		t.Fatalf("key of %d bytes", len(b))
	}
}

func TestPrecompile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	cfg := wasmrt.Config{CacheDir: dir}
	wasm := fixture(t, "answer")
	info, err := wasmrt.Precompile(cfg, wasm)
	if err != nil || info.Status != wasmrt.CacheMiss {
		t.Fatalf("Precompile: %v %v", info.Status, err)
	}
	if info, err := wasmrt.Precompile(cfg, wasm); err != nil || info.Status != wasmrt.CacheHit {
		t.Fatalf("second Precompile: %v %v", info.Status, err)
	}
	if got := loadCached(t, dir, wasm); got.Status != wasmrt.CacheHit {
		t.Fatalf("Load after Precompile: %v (%s)", got.Status, got.Reason)
	}
	// A different compilation setting is a different key, not a rejection.
	e := newEngine(t, wasmrt.Config{CacheDir: dir, MaxWasmStack: 256 << 10})
	m := load(t, e, wasm, wasmrt.ModuleConfig{Entrypoint: "answer"})
	if m.Cache().Status != wasmrt.CacheMiss || m.Cache().Path == info.Path {
		t.Fatalf("other config: %v %s", m.Cache().Status, m.Cache().Path)
	}
	if _, err := wasmrt.Precompile(wasmrt.Config{}, wasm); !errors.Is(err, wasmrt.ErrInvalidConfig) {
		t.Fatalf("Precompile without CacheDir: %v", err)
	}
	if _, err := wasmrt.Precompile(cfg, []byte("junk")); !errors.Is(err, wasmrt.ErrInvalidModule) {
		t.Fatalf("Precompile of junk: %v", err)
	}
}

func TestCacheConcurrentLoads(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	wasm := fixture(t, "answer")
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, err := wasmrt.NewEngine(wasmrt.Config{CacheDir: dir})
			if err != nil {
				t.Error(err)
				return
			}
			defer e.Close()
			m, err := e.Load(wasm, wasmrt.ModuleConfig{Entrypoint: "answer"})
			if err != nil {
				t.Error(err)
				return
			}
			defer m.Close()
			if _, err := m.Invoke(t.Context(), wasmrt.Invocation{}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if got := loadCached(t, dir, wasm); got.Status != wasmrt.CacheHit {
		t.Fatalf("after concurrent loads: %v (%s)", got.Status, got.Reason)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// writeFile replaces path, whatever its mode.
func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	_ = os.Remove(path)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func editMeta(t *testing.T, info wasmrt.CacheInfo, f func(map[string]any)) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(readFile(t, metaPath(info)), &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, metaPath(info), b)
}

// TestLoadSHA256 checks that LoadSHA256 reads the module only to compile
// it: never on a cache hit, once on a miss or without a cache; that bytes
// not matching the sha256 fail with ErrInvalidModule; and that an error of
// read is returned as is.
func TestLoadSHA256(t *testing.T) {
	answer, echo := fixture(t, "answer"), fixture(t, "echo")
	readErr := errors.New("module unreadable")
	warm := filepath.Join(t.TempDir(), "warm")
	if _, err := wasmrt.Precompile(wasmrt.Config{CacheDir: warm}, answer); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		cacheDir  string
		bytes     []byte // what read returns
		err       error  // what read returns
		wantReads int
		wantErr   error
		status    wasmrt.CacheStatus
	}{
		{"cache hit: not read", warm, nil, readErr, 0, nil, wasmrt.CacheHit},
		{"cache miss: read once", filepath.Join(t.TempDir(), "cold"), answer, nil, 1, nil, wasmrt.CacheMiss},
		{"no cache: read once", "", answer, nil, 1, nil, wasmrt.CacheDisabled},
		{"other bytes", "", echo, nil, 1, wasmrt.ErrInvalidModule, 0},
		{"other bytes, cache miss", filepath.Join(t.TempDir(), "cold2"), echo, nil, 1, wasmrt.ErrInvalidModule, 0},
		{"read error", "", nil, readErr, 1, readErr, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEngine(t, wasmrt.Config{CacheDir: tc.cacheDir})
			reads := 0
			m, err := e.LoadSHA256(sha256.Sum256(answer), func() ([]byte, error) {
				reads++
				return tc.bytes, tc.err
			}, wasmrt.ModuleConfig{Entrypoint: "answer"})
			if reads != tc.wantReads {
				t.Errorf("read called %d times, want %d", reads, tc.wantReads)
			}
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if m.Cache().Status != tc.status {
				t.Errorf("cache %v, want %v", m.Cache().Status, tc.status)
			}
			if got := exitCodeOf(t, mustInvoke(t, m, wasmrt.Invocation{})); got != 42 {
				t.Fatalf("exit code %d", got)
			}
		})
	}
}

// bigAnswer is the answer fixture's logic with a 3.5 MiB data segment, so
// that its compiled module is several MiB.
func bigAnswer(t *testing.T) []byte {
	t.Helper()
	var data strings.Builder
	for i := range 7 << 19 {
		fmt.Fprintf(&data, `\%02x`, byte(i*7))
	}
	wasm, err := wasmrt.Wat2Wasm(`(module (memory 64)
		(data (i32.const 0) "` + data.String() + `")
		(func (export "answer") (result i32) i32.const 42))`)
	if err != nil {
		t.Fatal(err)
	}
	return wasm
}

// TestCacheRejectsAcrossChunks corrupts an entry of several MiB (its first
// and last bytes, a byte inside the third MiB, two MiB swapped: every byte
// kept, their order not) and checks each is rejected as tampered.
func TestCacheRejectsAcrossChunks(t *testing.T) {
	wasm := bigAnswer(t)
	const chunk = 1 << 20
	for _, tc := range []struct {
		name string
		mess func(b []byte)
	}{
		{"first byte", func(b []byte) { b[0] ^= 1 }},
		{"last byte", func(b []byte) { b[len(b)-1] ^= 1 }},
		{"inside the third chunk", func(b []byte) { b[2*chunk+12345] ^= 0x80 }},
		{"chunks swapped", func(b []byte) {
			first := append([]byte(nil), b[:chunk]...)
			copy(b[:chunk], b[chunk:2*chunk])
			copy(b[chunk:2*chunk], first)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "cache")
			info := loadCached(t, dir, wasm)
			b := readFile(t, info.Path)
			if len(b) < 3*chunk+1 {
				t.Fatalf("compiled module of %d bytes spans fewer than 4 chunks", len(b))
			}
			if again := loadCached(t, dir, wasm); again.Status != wasmrt.CacheHit {
				t.Fatalf("intact entry: %v (%s)", again.Status, again.Reason)
			}
			tc.mess(b)
			writeFile(t, info.Path, b)
			got := loadCached(t, dir, wasm)
			if got.Status != wasmrt.CacheRejected || !strings.Contains(got.Reason, "tampered") {
				t.Fatalf("status %v reason %q, want rejected as tampered", got.Status, got.Reason)
			}
		})
	}
}

package wasmrt

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"io"
	"io/fs"
	"os"
	"path/filepath"
	goruntime "runtime"
	"runtime/debug"
	"strconv"

	"github.com/bytecodealliance/wasmtime-go/v25"
	"github.com/palyra-go/palyra/internal/textutil"
	"golang.org/x/sys/cpu"
)

// The precompiled-module cache.
//
// An entry is two files in Config.CacheDir, named by
// sha256(module sha256 || engine fingerprint):
//
//	<key>.cwasm  the serialized module, exactly as wasmtime wrote it (mode 0400)
//	<key>.meta   JSON: format, module sha256, fingerprint, size, a random
//	             96-bit nonce, and a MAC of the .cwasm bytes: AES-256-GMAC
//	             (the tag of AES-GCM with the .cwasm as additional data and
//	             no plaintext) under a key that is the HMAC-SHA256, under
//	             the cache key, of all the other fields (so they are bound
//	             to the MAC too)
//
// GMAC rather than HMAC-SHA256 for speed: a Go guest's .cwasm is about
// 14 MB, and HMAC-SHA256 over it was most of its sidecar's load time
// (GMAC runs about 5× faster here). Each entry has its own random nonce, so
// no nonce is used twice under one key.
//
// The HMAC key is 32 random bytes in <dir>/cache.key (mode 0600), made by
// the first engine that uses the directory. Deserializing is only safe on
// bytes this host produced (it maps machine code), so before an entry is
// used its meta must name this module and this fingerprint, the .cwasm must
// have the recorded size and its bytes must match the HMAC; the file that
// was verified is the one wasmtime maps (through /proc/self/fd when
// available, so a rename between the check and the load changes nothing).
// An entry that fails any check, or that wasmtime refuses, is removed and
// the module compiled and stored again.
//
// Files are written atomically: temp file, fsync, rename, fsync of the
// directory. Concurrent writers (two sidecars) are harmless: each rename
// installs a complete entry; a reader that sees a .meta from one writer and
// a .cwasm from the other rejects the pair and recompiles.

const (
	cacheFormat     = 2
	cacheKeyFile    = "cache.key"
	maxMetaBytes    = 4 << 10
	maxCwasmBytes   = 1 << 30
	cacheMACContext = "palyra-cwasm-v1"
)

// CacheStatus says how a module's compiled code was obtained.
type CacheStatus int

// Cache statuses.
const (
	// CacheDisabled: the engine has no CacheDir; the module was compiled.
	CacheDisabled CacheStatus = iota
	// CacheHit: a verified entry was loaded.
	CacheHit
	// CacheMiss: there was no entry; the module was compiled and stored.
	CacheMiss
	// CacheRejected: an entry existed but failed verification or
	// deserialization; it was removed, and the module compiled and stored.
	CacheRejected
)

// String returns "disabled", "hit", "miss" or "rejected".
func (s CacheStatus) String() string {
	switch s {
	case CacheHit:
		return "hit"
	case CacheMiss:
		return "miss"
	case CacheRejected:
		return "rejected"
	}
	return "disabled"
}

// CacheInfo reports the cache's part in loading a module.
type CacheInfo struct {
	Status CacheStatus
	// Path is the entry's .cwasm file (empty when the cache is disabled).
	Path string
	// Reason says why an entry was rejected.
	Reason string
	// WriteErr is set when storing the compiled module failed; the module
	// is still usable, the next load compiles again.
	WriteErr error
}

type cacheMeta struct {
	Format       int    `json:"format"`
	ModuleSHA256 string `json:"module_sha256"`
	Fingerprint  string `json:"fingerprint"`
	Size         int64  `json:"size"`
	Nonce        string `json:"nonce"`
	MAC          string `json:"mac"`
}

// wasmtimeVersion names the wasmtime-go module version linked in.
func wasmtimeVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == wasmtimeModulePath {
				if d.Replace != nil {
					d = d.Replace
				}
				return d.Path + "@" + d.Version + " " + d.Sum
			}
		}
	}
	return wasmtimeModulePath + "@unknown"
}

// fingerprint identifies everything, besides the module bytes, that
// compiled code depends on: the wasmtime version, the target and its CPU
// features, and the engine settings that change code generation.
func fingerprint(c Config) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\nwasmtime=%s\ngoos=%s goarch=%s\ncpu=%+v %+v\n", cacheMACContext,
		wasmtimeVersion(), goruntime.GOOS, goruntime.GOARCH, cpu.X86, cpu.ARM64)
	fmt.Fprintf(h, "fuel=1 epoch=1 strategy=cranelift opt=speed threads=0 max_wasm_stack=%d\n", c.MaxWasmStack)
	if c.memoryPooled() {
		// Dynamic memories without guard regions: explicit bounds checks.
		fmt.Fprintf(h, "memory=pool static_max=0 dynamic_guard=0 reserved_for_growth=0\n")
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Fingerprint returns the engine's compilation fingerprint, part of every
// cache key.
func (e *Engine) Fingerprint() string { return e.fingerprint }

type moduleCache struct {
	dir string
	fp  string
}

func (c *moduleCache) paths(sum [32]byte) (cwasm, meta string) {
	h := sha256.New()
	h.Write(sum[:])
	h.Write([]byte(c.fp))
	base := filepath.Join(c.dir, hex.EncodeToString(h.Sum(nil)))
	return base + ".cwasm", base + ".meta"
}

// compile returns the compiled module, from the cache when it has a valid
// entry.
//
// read returns the module's bytes; it is called only when the module is
// compiled (no cache, or no valid entry for sum), and its bytes must hash
// to sum (checked here again: a miss compiles, which costs far more).
func (e *Engine) compile(sum [32]byte, read func() ([]byte, error)) (*wasmtime.Module, CacheInfo, error) {
	readChecked := func() ([]byte, error) {
		wasm, err := read()
		if err != nil {
			return nil, err
		}
		if sha256.Sum256(wasm) != sum {
			return nil, fmt.Errorf("%w: the module's bytes do not match its sha256", ErrInvalidModule)
		}
		return wasm, nil
	}
	if e.cfg.CacheDir == "" {
		wasm, err := readChecked()
		if err != nil {
			return nil, CacheInfo{Status: CacheDisabled}, err
		}
		m, err := e.compileFresh(wasm)
		return m, CacheInfo{Status: CacheDisabled}, err
	}
	c := &moduleCache{dir: e.cfg.CacheDir, fp: e.fingerprint}
	cwasm, meta := c.paths(sum)
	info := CacheInfo{Status: CacheMiss, Path: cwasm}
	m, reason := c.load(e.wt, sum, cwasm, meta)
	if m != nil {
		info.Status = CacheHit
		return m, info, nil
	}
	if reason != "" {
		info.Status, info.Reason = CacheRejected, reason
		removeEntry(cwasm, meta)
	}
	wasm, err := readChecked()
	if err != nil {
		return nil, info, err
	}
	m, err = e.compileFresh(wasm)
	if err != nil {
		return nil, info, err
	}
	info.WriteErr = c.store(m, sum, cwasm, meta)
	return m, info, nil
}

func (e *Engine) compileFresh(wasm []byte) (*wasmtime.Module, error) {
	m, err := wasmtime.NewModule(e.wt, wasm)
	if err != nil {
		return nil, fmt.Errorf("%w: %q", ErrInvalidModule, textutil.TruncateValid(err.Error(), maxDetailBytes))
	}
	return m, nil
}

func removeEntry(cwasm, meta string) {
	_ = os.Remove(meta)
	_ = os.Remove(cwasm)
}

// load returns the verified module, or nil and why the entry was rejected
// ("" when there is no entry).
func (c *moduleCache) load(engine *wasmtime.Engine, sum [32]byte, cwasm, metaPath string) (*wasmtime.Module, string) {
	mb, err := readCapped(metaPath, maxMetaBytes)
	if errors.Is(err, fs.ErrNotExist) {
		if _, err := os.Lstat(cwasm); err == nil {
			return nil, "compiled module without metadata"
		}
		return nil, ""
	}
	if err != nil {
		return nil, "metadata unreadable: " + err.Error()
	}
	var meta cacheMeta
	if err := json.Unmarshal(mb, &meta); err != nil {
		return nil, "metadata is not valid JSON"
	}
	switch {
	case meta.Format != cacheFormat:
		return nil, "stale entry: format " + strconv.Itoa(meta.Format)
	case meta.ModuleSHA256 != hex.EncodeToString(sum[:]):
		return nil, "entry belongs to another module"
	case meta.Fingerprint != c.fp:
		return nil, "stale entry: made by another engine configuration or wasmtime version"
	case meta.Size <= 0 || meta.Size > maxCwasmBytes:
		return nil, "metadata records an invalid size"
	}
	want, err := hex.DecodeString(meta.MAC)
	if err != nil || len(want) != gcmTagSize {
		return nil, "metadata has an invalid MAC"
	}
	if nonce, err := hex.DecodeString(meta.Nonce); err != nil || len(nonce) != gcmNonceSize {
		return nil, "metadata has an invalid nonce"
	}
	key, err := c.macKey()
	if err != nil {
		return nil, "cache key unavailable: " + err.Error()
	}
	f, err := openNoFollow(cwasm)
	if err != nil {
		return nil, "compiled module unreadable: " + err.Error()
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, "compiled module is not a regular file"
	}
	if fi.Size() != meta.Size {
		return nil, fmt.Sprintf("compiled module is %d bytes, metadata says %d (truncated or replaced)", fi.Size(), meta.Size)
	}
	got, err := macOfFile(key, &meta, f)
	if err != nil {
		return nil, "compiled module could not be read in full: " + err.Error()
	}
	if !hmac.Equal(got, want) {
		return nil, "compiled module does not match its MAC (tampered)"
	}
	m, err := wasmtime.NewModuleDeserializeFile(engine, verifiedPath(f, cwasm))
	if err != nil {
		return nil, "wasmtime refused the compiled module: " + textutil.TruncateValid(err.Error(), 512)
	}
	return m, ""
}

// verifiedPath names the open file f so that wasmtime maps the very inode
// that was verified.
func verifiedPath(f *os.File, path string) string {
	p := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return path
}

const (
	gcmNonceSize = 12
	gcmTagSize   = 16
)

// macOf returns the entry's MAC of code, the .cwasm bytes: the AES-256-GMAC
// tag of code under the nonce meta.Nonce and a key derived from key and
// every other field of meta.
func macOf(key []byte, meta *cacheMeta, code []byte) ([]byte, error) {
	nonce, err := hex.DecodeString(meta.Nonce)
	if err != nil || len(nonce) != gcmNonceSize {
		return nil, fmt.Errorf("runtime: invalid cache nonce")
	}
	kdf := hmac.New(sha256.New, key)
	fmt.Fprintf(kdf, "%s\x00%d\x00%s\x00%s\x00%d\x00%s\x00", cacheMACContext, meta.Format, meta.ModuleSHA256,
		meta.Fingerprint, meta.Size, meta.Nonce)
	block, err := aes.NewCipher(kdf.Sum(nil))
	if err != nil {
		return nil, fmt.Errorf("runtime: cache MAC: %w", err)
	}
	gcm, err := cipher.NewGCMWithNonceSize(block, gcmNonceSize)
	if err != nil {
		return nil, fmt.Errorf("runtime: cache MAC: %w", err)
	}
	return gcm.Seal(nil, nonce, nil, code), nil
}

// macOfFile is macOf of the meta.Size bytes of f, which must have no byte
// past them (wasmtime maps the whole file).
func macOfFile(key []byte, meta *cacheMeta, f *os.File) (mac []byte, err error) {
	code, unmap, err := mapFile(f, meta.Size)
	if err != nil {
		return nil, err
	}
	defer unmap()
	// A file truncated under the mapping faults: an error, not a crash.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			mac, err = nil, fmt.Errorf("runtime: compiled module changed while verified: %v", p)
		}
	}()
	if mac, err = macOf(key, meta, code); err != nil {
		return nil, err
	}
	// fstat, not a read past the end: the sidecar's seccomp filter has no
	// pread.
	if fi, err := f.Stat(); err != nil || fi.Size() != meta.Size {
		return nil, fmt.Errorf("runtime: compiled module is no longer %d bytes", meta.Size)
	}
	return mac, nil
}

// store writes the entry: the .cwasm first, then the .meta that makes it
// valid.
func (c *moduleCache) store(m *wasmtime.Module, sum [32]byte, cwasm, metaPath string) error {
	key, err := c.macKey()
	if err != nil {
		return err
	}
	b, err := m.Serialize()
	if err != nil {
		return fmt.Errorf("runtime: serialize module: %w", err)
	}
	meta := cacheMeta{Format: cacheFormat, ModuleSHA256: hex.EncodeToString(sum[:]), Fingerprint: c.fp, Size: int64(len(b))}
	nonce := make([]byte, gcmNonceSize)
	if _, err := rand.Read(nonce); err != nil {
		return fmt.Errorf("runtime: cache nonce: %w", err)
	}
	meta.Nonce = hex.EncodeToString(nonce)
	mac, err := macOf(key, &meta, b)
	if err != nil {
		return err
	}
	meta.MAC = hex.EncodeToString(mac)
	mb, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	if err := writeAtomic(c.dir, cwasm, b, 0o400); err != nil {
		return err
	}
	return writeAtomic(c.dir, metaPath, mb, 0o600)
}

// macKey returns the directory's HMAC key, creating the directory and the
// key when needed. It is read at every use, so that a replaced key takes
// effect at once. A key file of the wrong size is replaced (every entry made
// with the old key then fails verification and is recompiled).
func (c *moduleCache) macKey() ([]byte, error) { return loadOrCreateKey(c.dir) }

func loadOrCreateKey(dir string) ([]byte, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("runtime: cache dir: %w", err)
	}
	path := filepath.Join(dir, cacheKeyFile)
	for range 3 {
		b, err := readCapped(path, 64)
		if err == nil && len(b) == 32 {
			return b, nil
		}
		if err == nil || !errors.Is(err, fs.ErrNotExist) {
			_ = os.Remove(path)
		}
		key := make([]byte, 32)
		fillRandom(key)
		tmp, err := writeTemp(dir, key, 0o600)
		if err != nil {
			return nil, err
		}
		// Link fails when another process created the key first; then
		// the loop reads theirs.
		err = os.Link(tmp, path)
		_ = os.Remove(tmp)
		if err == nil {
			syncDir(dir)
			return key, nil
		}
	}
	return nil, errors.New("runtime: could not create the cache key")
}

func readCapped(path string, max int64) ([]byte, error) {
	f, err := openNoFollow(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s is over %d bytes", filepath.Base(path), max)
	}
	return b, nil
}

func writeTemp(dir string, data []byte, mode os.FileMode) (string, error) {
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return "", fmt.Errorf("runtime: cache write: %w", err)
	}
	name := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = f.Chmod(mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(name)
		return "", fmt.Errorf("runtime: cache write: %w", err)
	}
	return name, nil
}

func writeAtomic(dir, path string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("runtime: cache dir: %w", err)
	}
	tmp, err := writeTemp(dir, data, mode)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("runtime: cache write: %w", err)
	}
	syncDir(dir)
	return nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

// Precompile compiles wasm with e's configuration and stores it in the
// engine's cache, so that a later Load (in this or another process with the
// same Config) deserializes it instead of compiling. An existing valid entry
// is kept. It fails when the engine has no CacheDir, when wasm does not
// compile, or when the entry could not be written.
func (e *Engine) Precompile(wasm []byte) (CacheInfo, error) {
	if e.isClosed() {
		return CacheInfo{}, fmt.Errorf("%w: engine", ErrClosed)
	}
	if e.cfg.CacheDir == "" {
		return CacheInfo{}, fmt.Errorf("%w: Precompile needs a CacheDir", ErrInvalidConfig)
	}
	m, info, err := e.compile(sha256.Sum256(wasm), func() ([]byte, error) { return wasm, nil })
	if err != nil {
		return info, err
	}
	m.Close()
	return info, info.WriteErr
}

// Precompile is Engine.Precompile with a temporary engine, for a process
// (such as the sidecar run at install time) that only compiles. cfg must
// equal the Config of the engines that will load the module, before
// ForModule: Precompile applies cfg.ForModule itself.
func Precompile(cfg Config, wasm []byte) (CacheInfo, error) {
	e, err := NewEngine(cfg.ForModule(int64(len(wasm))))
	if err != nil {
		return CacheInfo{}, err
	}
	defer e.Close()
	return e.Precompile(wasm)
}

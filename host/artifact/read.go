package artifact

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/klauspost/compress/flate"

	"github.com/palyra-go/palyra/host/internal/skillpath"
)

// Limits on untrusted artifacts. They are Palyra's, and apply both when an
// artifact is read and when one is built.
const (
	// MaxArtifactBytes caps the artifact file and the running total of
	// uncompressed entry bytes.
	MaxArtifactBytes = 64 << 20
	// MaxEntryBytes caps one entry's uncompressed size.
	MaxEntryBytes = 16 << 20
	// MaxEntries caps the number of entries, directory entries included.
	MaxEntries = 256
)

// Zip-bomb guard (not in Palyra; see "Differences from Palyra" in the
// package documentation).
const (
	// MaxCompressionRatio caps how far one Deflate entry may inflate:
	// an entry whose output exceeds CompressionRatioGrace bytes and
	// MaxCompressionRatio times its compressed size is rejected with
	// ErrCompressionRatio as soon as that happens, while it is being read.
	//
	// Deflate itself cannot exceed about 1032:1, and only near-constant data
	// (megabytes of one repeated byte) comes close, so real modules and
	// assets never trip it. Build applies the same rule, so every artifact
	// Build makes can be read back.
	MaxCompressionRatio = 1000
	// CompressionRatioGrace is the output an entry may produce before its
	// ratio is judged. Entries this small are cheap whatever their ratio,
	// and are judged by the size limits alone.
	CompressionRatioGrace = 1 << 20
)

// maxDirectoryRecords bounds the central directory headers archive/zip may
// parse before Read gives up (see dirGuard). It is generous so that stray
// signature bytes in a legitimate archive never trip it; archives with
// more than MaxEntries (but at most this many) records are rejected with
// an exact count once parsed.
const maxDirectoryRecords = 4 * MaxEntries

// Well-known entry paths, all at the archive root.
const (
	ManifestPath   = "skill.toml"
	SBOMPath       = "sbom.cdx.json"
	ProvenancePath = "provenance.json"
	SignaturePath  = "signature.json"
	// Extension is the file name extension of artifacts.
	Extension = ".palyra-skill"
)

// Archive is a decoded artifact: its entries by normalized path. Nothing
// about it has been verified beyond the container rules (limits, names,
// compression); use Inspect or Verify for that. An Archive is immutable
// and safe for concurrent use; the slices it returns must not be modified.
type Archive struct {
	entries map[string][]byte
	names   []string // sorted byte-wise
}

// Names returns the entry paths, normalized and sorted byte-wise. The
// result must not be modified.
func (a *Archive) Names() []string { return a.names }

// Entry returns the content of the entry at the normalized path name. The
// result must not be modified.
func (a *Archive) Entry(name string) ([]byte, bool) {
	b, ok := a.entries[name]
	return b, ok
}

// ReadFile reads the artifact at path; see Read. The file is read into
// memory once (at most MaxArtifactBytes+1 bytes), so what is verified is
// exactly what the caller later installs from the returned entries.
func ReadFile(path string) (*Archive, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("artifact: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxArtifactBytes+1))
	if err != nil {
		return nil, fmt.Errorf("artifact: %w", err)
	}
	if len(data) > MaxArtifactBytes {
		return nil, limitErr(ErrArtifactTooLarge, "", MaxArtifactBytes, artifactSize(f, len(data)))
	}
	return ReadBytes(data)
}

// artifactSize reports the file's size for an error message, or n when
// the size is unknown.
func artifactSize(f *os.File, n int) int64 {
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > int64(n) {
		return fi.Size()
	}
	return int64(n)
}

// ReadBytes decodes the artifact in data; see Read.
func ReadBytes(data []byte) (*Archive, error) {
	return Read(bytes.NewReader(data), int64(len(data)))
}

// Read decodes the artifact of the given size read through r: step 1 of
// the verification order. It enforces, on the bytes actually read and
// never on header claims alone:
//
//   - size ≤ MaxArtifactBytes, at most MaxEntries entries (directory
//     entries count, and are then skipped);
//   - each entry ≤ MaxEntryBytes, their running total ≤ MaxArtifactBytes,
//     and the MaxCompressionRatio guard;
//   - only Stored and Deflate, no encryption, only regular files;
//   - names that pass the artifact path rule and stay distinct after
//     normalization;
//   - every entry read to its end, so a CRC mismatch is caught.
//
// The first failure is returned; it wraps one of the package's sentinels.
func Read(r io.ReaderAt, size int64) (*Archive, error) {
	if size < 0 {
		return nil, &Error{Err: ErrInvalidZip, Detail: "negative size"}
	}
	if size > MaxArtifactBytes {
		return nil, limitErr(ErrArtifactTooLarge, "", MaxArtifactBytes, size)
	}
	guard := &dirGuard{r: r, size: size, armed: true}
	zr, err := zip.NewReader(guard, size)
	guard.armed = false
	switch {
	case errors.Is(err, errDirectoryTooLarge):
		return nil, &Error{Err: ErrTooManyEntries, Detail: "central directory records", Limit: MaxEntries, Actual: int64(len(guard.seen))}
	case errors.Is(err, zip.ErrInsecurePath):
		// GODEBUG=zipinsecurepath=0 flags names such as "a\b"; the path rule
		// below judges every name itself, as Palyra does.
	case err != nil:
		return nil, &Error{Err: ErrInvalidZip, Cause: err}
	}
	if n := len(zr.File); n > MaxEntries {
		return nil, limitErr(ErrTooManyEntries, "", MaxEntries, int64(n))
	}
	// klauspost/compress's inflater: the same RFC 1951 decoding as
	// compress/flate's, faster; inflating was half of an install's CPU
	// (BenchmarkVerify4MiB, BenchmarkInstall4MiB in host/install).
	zr.RegisterDecompressor(zip.Deflate, newInflater)
	a := &Archive{entries: make(map[string][]byte, len(zr.File))}
	// after[i] is the uncompressed size the entries from i on declare:
	// with the bytes already read, the size an artifact over the total
	// limit would reach, for the error to name (not the limit itself).
	after := make([]int64, len(zr.File)+1)
	for i := len(zr.File) - 1; i >= 0; i-- {
		after[i] = after[i+1]
		if f := zr.File[i]; !isDirName(f.Name) {
			after[i] = min(after[i], math.MaxInt64/2) + min(clampInt64(f.UncompressedSize64), math.MaxInt64/2)
		}
	}
	var total int64
	for i, f := range zr.File {
		if err := checkHeader(f); err != nil {
			return nil, err
		}
		if isDirName(f.Name) {
			continue
		}
		if err := checkRegular(f); err != nil {
			return nil, err
		}
		name, err := entryName(f)
		if err != nil {
			return nil, err
		}
		if _, dup := a.entries[name]; dup {
			return nil, &Error{Err: ErrDuplicateEntry, Path: name}
		}
		data, err := readEntry(f, name, total, after[i])
		if err != nil {
			return nil, err
		}
		total += int64(len(data))
		a.entries[name] = data
		a.names = append(a.names, name)
	}
	sort.Strings(a.names)
	return a, nil
}

// isDirName reports whether a zip name denotes a directory, as Rust's zip
// crate decides it (a trailing '/' or '\').
func isDirName(name string) bool {
	return strings.HasSuffix(name, "/") || strings.HasSuffix(name, `\`)
}

// checkHeader rejects encrypted entries and compression methods other than
// Stored and Deflate, for every entry (directories included), before any
// byte of it is read.
func checkHeader(f *zip.File) error {
	if f.Flags&0x1 != 0 {
		return &Error{Err: ErrEncryptedEntry, Path: f.Name}
	}
	if f.Method != zip.Store && f.Method != zip.Deflate {
		return &Error{Err: ErrUnsupportedCompression, Path: f.Name, Detail: fmt.Sprintf("method %d", f.Method)}
	}
	return nil
}

// Creator systems (high byte of "version made by") whose external
// attributes carry a Unix mode in their upper 16 bits.
const (
	creatorUnix  = 3
	creatorMacOS = 19
)

// checkRegular rejects entries whose recorded mode is not a regular file:
// symlinks, devices, FIFOs, sockets, and directories not named with a
// trailing '/'. An entry with no recorded file type counts as regular.
func checkRegular(f *zip.File) error {
	var kind string
	switch f.CreatorVersion >> 8 {
	case creatorUnix, creatorMacOS:
		const sIFMT, sIFREG = 0o170000, 0o100000
		switch t := (f.ExternalAttrs >> 16) & sIFMT; t {
		case 0, sIFREG:
		case 0o120000:
			kind = "symlink"
		case 0o040000:
			kind = "directory"
		case 0o020000, 0o060000:
			kind = "device"
		case 0o010000:
			kind = "fifo"
		case 0o140000:
			kind = "socket"
		default:
			kind = fmt.Sprintf("file type %#o", t)
		}
	default:
		if f.ExternalAttrs&0x10 != 0 { // MS-DOS directory attribute
			kind = "directory"
		}
	}
	if kind != "" {
		return &Error{Err: ErrNonRegularEntry, Path: f.Name, Detail: kind}
	}
	return nil
}

// entryName validates a zip name and returns its normalized path. Names
// must be UTF-8; a non-ASCII name must carry the UTF-8 flag, because
// Palyra's reader decodes unflagged names as CP437 and would see another
// name.
func entryName(f *zip.File) (string, error) {
	if !utf8.ValidString(f.Name) {
		return "", &Error{Err: ErrInvalidPath, Path: f.Name, Detail: "name is not UTF-8"}
	}
	if f.Flags&0x800 == 0 && !isASCII(f.Name) {
		return "", &Error{Err: ErrInvalidPath, Path: f.Name, Detail: "non-ASCII name without the UTF-8 flag"}
	}
	name, err := skillpath.Normalize(f.Name)
	if err != nil {
		return "", fmt.Errorf("artifact: zip entry: %w", err)
	}
	return name, nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// readEntry inflates one entry to its end. total is the uncompressed bytes
// already read from earlier entries. The declared size is only a hint for
// early rejection and preallocation; the limits are enforced on the bytes
// read (archive/zip also fails when they differ from the declared size).
// declaredRest is the uncompressed size this entry and the ones after it
// declare, named by the error when the total is already spent.
func readEntry(f *zip.File, name string, total, declaredRest int64) ([]byte, error) {
	remaining := MaxArtifactBytes - total
	declared := f.UncompressedSize64
	if declared > MaxEntryBytes {
		return nil, limitErr(ErrEntryTooLarge, name, MaxEntryBytes, clampInt64(declared))
	}
	if remaining <= 0 { // as Palyra: no entry, even an empty one, once the total is spent
		e := limitErr(ErrArtifactTooLarge, name, MaxArtifactBytes, total+declaredRest)
		e.Detail = fmt.Sprintf("the entries before this one already hold %d bytes uncompressed", total)
		return nil, e
	}
	if int64(declared) > remaining {
		return nil, limitErr(ErrArtifactTooLarge, name, MaxArtifactBytes, total+int64(declared))
	}
	limit := min(int64(MaxEntryBytes), remaining)
	rc, err := f.Open()
	if err != nil {
		return nil, &Error{Err: ErrInvalidZip, Path: name, Cause: err}
	}
	defer rc.Close()

	// Read at most limit+1 bytes: landing on limit+1 proves the entry is
	// over whichever limit was binding.
	lr := io.LimitReader(rc, limit+1)
	// Preallocate what the entry can really produce: no more than its
	// declared size, and no more than its compressed size allows (Stored
	// copies it; Deflate cannot exceed about 1032:1).
	compressed := min(clampInt64(f.CompressedSize64), MaxArtifactBytes)
	hint := clampInt64(declared)
	if f.Method == zip.Store {
		hint = min(hint, compressed)
	} else {
		hint = min(hint, compressed*1040)
	}
	buf := make([]byte, 0, hint+1)
	ratioCap := int64(-1)
	if f.Method == zip.Deflate {
		ratioCap = max(CompressionRatioGrace, MaxCompressionRatio*max(compressed, 1))
	}
	for {
		if len(buf) == cap(buf) {
			grow := max(int64(cap(buf)), 32<<10)
			grow = min(grow, limit+1-int64(len(buf)))
			buf = slices.Grow(buf, int(grow))
		}
		n, rerr := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if got := int64(len(buf)); got > limit {
			if limit < MaxEntryBytes {
				return nil, limitErr(ErrArtifactTooLarge, name, MaxArtifactBytes, total+got)
			}
			return nil, limitErr(ErrEntryTooLarge, name, MaxEntryBytes, got)
		}
		if ratioCap >= 0 && int64(len(buf)) > ratioCap {
			return nil, &Error{
				Err: ErrCompressionRatio, Path: name,
				Detail: fmt.Sprintf("%d bytes inflated from %d", len(buf), f.CompressedSize64),
				Limit:  MaxCompressionRatio,
				Actual: int64(len(buf)) / max(compressed, 1),
			}
		}
		if rerr == io.EOF {
			// archive/zip skips the CRC check when the recorded CRC is 0;
			// Palyra's reader does not, so check it here too.
			if crc32.ChecksumIEEE(buf) != f.CRC32 {
				return nil, &Error{Err: ErrInvalidZip, Path: name, Detail: "crc-32 mismatch", Cause: zip.ErrChecksum}
			}
			return buf, nil
		}
		if rerr != nil {
			detail := ""
			if errors.Is(rerr, zip.ErrChecksum) {
				detail = "crc-32 mismatch"
			}
			return nil, &Error{Err: ErrInvalidZip, Path: name, Detail: detail, Cause: rerr}
		}
	}
}

func clampInt64(u uint64) int64 {
	if u > 1<<63-1 {
		return 1<<63 - 1
	}
	return int64(u)
}

// errDirectoryTooLarge aborts zip.NewReader; see dirGuard.
var errDirectoryTooLarge = errors.New("artifact: central directory too large")

// dirGuard bounds the work and memory zip.NewReader spends on the central
// directory. archive/zip keeps parsing directory records until one fails
// to parse, whatever the end record claims, and allocates a *zip.File for
// each; a 64 MiB file could hold over a million. While armed, dirGuard
// notes every offset at which it serves the central-directory header
// signature "PK\x01\x02" (with a 3-byte look-ahead so none is missed at a
// read boundary). Every record archive/zip parses starts with one, at a
// distinct offset, so once more than maxDirectoryRecords distinct offsets
// have been served the archive has too many entries and the read fails.
// A dirGuard is used by one Read call at a time.
type dirGuard struct {
	r     io.ReaderAt
	size  int64
	armed bool
	seen  map[int64]struct{}
}

var directorySignature = []byte("PK\x01\x02")

func (g *dirGuard) ReadAt(p []byte, off int64) (int, error) {
	n, err := g.r.ReadAt(p, off)
	if !g.armed || n <= 0 {
		return n, err
	}
	if g.seen == nil {
		g.seen = make(map[int64]struct{})
	}
	// Signatures wholly inside p[:n].
	for i := 0; ; {
		j := bytes.Index(p[i:n], directorySignature)
		if j < 0 {
			break
		}
		g.seen[off+int64(i+j)] = struct{}{}
		i += j + 1
	}
	// Signatures starting in the last 3 bytes of p[:n] and running past it.
	if end := off + int64(n); end < g.size {
		var window [6]byte
		head := p[max(0, n-3):n]
		k := copy(window[:], head)
		m, _ := g.r.ReadAt(window[k:k+3], end)
		w := window[:k+m]
		for i := 0; i < len(head); i++ {
			if bytes.HasPrefix(w[i:], directorySignature) {
				g.seen[end-int64(len(head))+int64(i)] = struct{}{}
			}
		}
	}
	if len(g.seen) > maxDirectoryRecords {
		return 0, errDirectoryTooLarge
	}
	return n, err
}

var _ io.ReaderAt = (*dirGuard)(nil)

// inflaters keeps klauspost/compress inflaters for reuse across entries
// and artifacts, as archive/zip does with its own: a new one allocates its
// 32 KiB window and its Huffman tables, about 40 KiB, for every entry, and
// an artifact has half a dozen (BenchmarkVerifySmall).
var inflaters sync.Pool

// inflater is one entry's inflater; Close returns it to inflaters, once.
type inflater struct {
	rc io.ReadCloser // nil once closed
}

// newInflater is the zip.Decompressor Read registers: an inflater of r
// taken from inflaters, or a new one.
func newInflater(r io.Reader) io.ReadCloser {
	if rc, ok := inflaters.Get().(io.ReadCloser); ok {
		if err := rc.(flate.Resetter).Reset(r, nil); err == nil {
			return &inflater{rc: rc}
		}
	}
	return &inflater{rc: flate.NewReader(r)}
}

func (f *inflater) Read(p []byte) (int, error) {
	if f.rc == nil {
		return 0, errInflaterClosed
	}
	return f.rc.Read(p)
}

// Close closes the inflater and returns it to inflaters; a second Close
// does nothing, so that one inflater never serves two entries at once.
func (f *inflater) Close() error {
	if f.rc == nil {
		return nil
	}
	err := f.rc.Close()
	inflaters.Put(f.rc)
	f.rc = nil
	return err
}

var errInflaterClosed = errors.New("artifact: read of a closed inflater")

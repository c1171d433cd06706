package artifact

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func u32(v uint32) *uint32 { return &v }

// TestReadContainer covers step 1: container rules and limits, each on an
// archive written in code.
func TestReadContainer(t *testing.T) {
	t.Parallel()
	small := []byte("hello")
	mib := bytes.Repeat([]byte{0}, 1<<20)
	manyFiles := func(n int) []rawEntry {
		var es []rawEntry
		for i := 0; i < n; i++ {
			es = append(es, rawEntry{name: fmt.Sprintf("assets/f%04d", i), data: small})
		}
		return es
	}
	tests := []struct {
		name    string
		data    func(t *testing.T) []byte
		want    error
		path    string // want Error.Path, when set
		limit   int64  // want Error.Limit, when set
		actual  int64  // want Error.Actual, when set
		atLeast bool   // Actual is a lower bound
		msg     string // the error text holds it, when set
	}{
		{name: "not a zip", data: func(*testing.T) []byte { return []byte("this is not a zip file at all, sorry") }, want: ErrInvalidZip},
		{name: "empty", data: func(*testing.T) []byte { return nil }, want: ErrInvalidZip},
		{name: "truncated", data: func(t *testing.T) []byte {
			b := buildGood(t).Bytes
			return b[:len(b)-10]
		}, want: ErrInvalidZip},
		{name: "symlink", data: func(t *testing.T) []byte {
			return rawZip(t, []rawEntry{{name: "assets/link", data: []byte("/etc/passwd"), attrs: (0o120000 | 0o777) << 16}})
		}, want: ErrNonRegularEntry, path: "assets/link"},
		{name: "fifo", data: func(t *testing.T) []byte {
			return rawZip(t, []rawEntry{{name: "assets/p", attrs: (0o010000 | 0o644) << 16}})
		}, want: ErrNonRegularEntry},
		{name: "char device", data: func(t *testing.T) []byte {
			return rawZip(t, []rawEntry{{name: "assets/tty", attrs: (0o020000 | 0o644) << 16}})
		}, want: ErrNonRegularEntry},
		{name: "unix directory mode without slash", data: func(t *testing.T) []byte {
			return rawZip(t, []rawEntry{{name: "assets/d", attrs: (0o040000 | 0o755) << 16}})
		}, want: ErrNonRegularEntry},
		{name: "dos directory attribute without slash", data: func(t *testing.T) []byte {
			return rawZip(t, []rawEntry{{name: "assets/d", creator: 11, attrs: 0x10}})
		}, want: ErrNonRegularEntry},
		{name: "encrypted flag", data: func(t *testing.T) []byte {
			return rawZip(t, []rawEntry{{name: "assets/x", data: small, flags: 0x1}})
		}, want: ErrEncryptedEntry, path: "assets/x"},
		{name: "method 99", data: func(t *testing.T) []byte {
			return rawZip(t, []rawEntry{{name: "assets/x", data: small, method: 99}})
		}, want: ErrUnsupportedCompression},
		{name: "method bzip2 on a directory", data: func(t *testing.T) []byte {
			return rawZip(t, []rawEntry{{name: "assets/", method: 12}})
		}, want: ErrUnsupportedCompression},
		{name: "crc mismatch", data: func(t *testing.T) []byte {
			return rawZip(t, []rawEntry{{name: "assets/x", data: small, method: zip.Deflate, crc: u32(0xdeadbeef)}})
		}, want: zip.ErrChecksum},
		{name: "crc recorded as zero", data: func(t *testing.T) []byte {
			return rawZip(t, []rawEntry{{name: "assets/x", data: small, method: zip.Deflate, crc: u32(0)}})
		}, want: zip.ErrChecksum, path: "assets/x"},
		{name: "crc mismatch stored", data: func(t *testing.T) []byte {
			return rawZip(t, []rawEntry{{name: "assets/x", data: small, crc: u32(1)}})
		}, want: ErrInvalidZip, path: "assets/x"},
		{name: "corrupt deflate stream", data: func(t *testing.T) []byte {
			b := rawZip(t, []rawEntry{{name: "assets/x", data: bytes.Repeat([]byte("abcdefgh"), 512), method: zip.Deflate}})
			i := bytes.Index(b, []byte("assets/x")) + len("assets/x") + 2
			b[i] ^= 0xff
			return b
		}, want: ErrInvalidZip},
		{name: "bad local header signature", data: func(t *testing.T) []byte {
			b := rawZip(t, []rawEntry{{name: "assets/x", data: small}})
			b[0] = 'Q'
			return b
		}, want: ErrInvalidZip},
		{name: "dotdot name", data: func(t *testing.T) []byte {
			return rawZip(t, []rawEntry{{name: "../evil", data: small}})
		}, want: ErrInvalidPath},
		{name: "absolute name", data: func(t *testing.T) []byte {
			return rawZip(t, []rawEntry{{name: "/etc/passwd", data: small}})
		}, want: ErrInvalidPath},
		{name: "drive name", data: func(t *testing.T) []byte {
			return rawZip(t, []rawEntry{{name: `c:\x`, data: small}})
		}, want: ErrInvalidPath},
		{name: "empty segment", data: func(t *testing.T) []byte {
			return rawZip(t, []rawEntry{{name: "a//b", data: small}})
		}, want: ErrInvalidPath},
		{name: "dot segment", data: func(t *testing.T) []byte {
			return rawZip(t, []rawEntry{{name: "a/./b", data: small}})
		}, want: ErrInvalidPath},
		{name: "empty name", data: func(t *testing.T) []byte {
			return rawZip(t, []rawEntry{{name: "", data: small}})
		}, want: ErrInvalidPath},
		{name: "name not utf-8", data: func(t *testing.T) []byte {
			return rawZip(t, []rawEntry{{name: "assets/\xff\xfe", data: small}})
		}, want: ErrInvalidPath},
		{name: "non-ascii name without utf-8 flag", data: func(t *testing.T) []byte {
			return rawZip(t, []rawEntry{{name: "assets/ž", data: small}})
		}, want: ErrInvalidPath},
		{name: "duplicate name", data: func(t *testing.T) []byte {
			return rawZip(t, []rawEntry{{name: "assets/x", data: small}, {name: "assets/x", data: small}})
		}, want: ErrDuplicateEntry, path: "assets/x"},
		{name: "duplicate after backslash normalization", data: func(t *testing.T) []byte {
			return rawZip(t, []rawEntry{{name: "assets/a/b", data: small}, {name: `assets\a\b`, data: small}})
		}, want: ErrDuplicateEntry, path: "assets/a/b"},
		{name: "duplicate after trim", data: func(t *testing.T) []byte {
			return rawZip(t, []rawEntry{{name: "assets/x", data: small}, {name: " assets/x ", data: small}})
		}, want: ErrDuplicateEntry},
		{name: "oversized entry", data: func(t *testing.T) []byte {
			return rawZip(t, []rawEntry{{name: "modules/big.wasm", data: make([]byte, MaxEntryBytes+1), method: zip.Deflate}})
		}, want: ErrEntryTooLarge, path: "modules/big.wasm", limit: MaxEntryBytes, actual: MaxEntryBytes + 1},
		{name: "257 entries", data: func(t *testing.T) []byte {
			return rawZip(t, manyFiles(MaxEntries+1))
		}, want: ErrTooManyEntries, limit: MaxEntries, actual: MaxEntries + 1},
		{name: "directories count toward the entry limit", data: func(t *testing.T) []byte {
			es := manyFiles(MaxEntries - 6)
			for i := 0; i < 7; i++ {
				es = append(es, rawEntry{name: fmt.Sprintf("assets/d%d/", i), dir: true, attrs: (0o040000 | 0o755) << 16})
			}
			return rawZip(t, es)
		}, want: ErrTooManyEntries, limit: MaxEntries, actual: MaxEntries + 1},
		{name: "huge central directory stops early", data: func(t *testing.T) []byte {
			return rawZip(t, manyFiles(5000))
		}, want: ErrTooManyEntries, limit: MaxEntries, actual: maxDirectoryRecords + 1, atLeast: true},
		{name: "65 x 1 MiB zero assets", data: func(t *testing.T) []byte {
			var es []rawEntry
			for i := 0; i < 65; i++ {
				es = append(es, rawEntry{name: fmt.Sprintf("assets/zero%02d.bin", i), data: mib, method: zip.Deflate})
			}
			return rawZip(t, es)
		}, want: ErrArtifactTooLarge, path: "assets/zero64.bin", limit: MaxArtifactBytes, actual: 65 << 20,
			// the size the artifact declares, not the limit (Palyra reports the total so far)
			msg: ": 68157440 (limit 67108864)"},
		{name: "empty entry once the total is spent", data: func(t *testing.T) []byte {
			var es []rawEntry
			for i := 0; i < 64; i++ {
				es = append(es, rawEntry{name: fmt.Sprintf("assets/zero%02d.bin", i), data: mib, method: zip.Deflate})
			}
			es = append(es, rawEntry{name: "assets/empty.bin", method: zip.Deflate})
			return rawZip(t, es)
		}, want: ErrArtifactTooLarge, path: "assets/empty.bin", limit: MaxArtifactBytes, actual: MaxArtifactBytes,
			msg: "the entries before this one already hold 67108864 bytes uncompressed"},
		{name: "declared size above the remaining total", data: func(t *testing.T) []byte {
			var es []rawEntry
			for i := 0; i < 63; i++ {
				es = append(es, rawEntry{name: fmt.Sprintf("assets/zero%02d.bin", i), data: mib, method: zip.Deflate})
			}
			es = append(es, rawEntry{name: "assets/last.bin", data: make([]byte, 1<<20+1), method: zip.Deflate})
			return rawZip(t, es)
		}, want: ErrArtifactTooLarge, path: "assets/last.bin", limit: MaxArtifactBytes, actual: MaxArtifactBytes + 1},
		{name: "zip bomb ratio", data: func(t *testing.T) []byte {
			return rawZip(t, []rawEntry{{name: "assets/bomb.bin", data: make([]byte, 8<<20), method: zip.Deflate}})
		}, want: ErrCompressionRatio, path: "assets/bomb.bin", limit: MaxCompressionRatio},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ReadBytes(tt.data(t))
			if err == nil {
				t.Fatalf("ReadBytes: err = nil, want %v", tt.want)
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("ReadBytes: err = %v, want %v", err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "artifact: ") {
				t.Errorf("error %q lacks the artifact: prefix", err)
			}
			if tt.msg != "" && !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not say %q", err, tt.msg)
			}
			var ae *Error
			if tt.path == "" && tt.limit == 0 {
				return
			}
			if !errors.As(err, &ae) {
				t.Fatalf("err %v is not an *Error", err)
			}
			if tt.path != "" && ae.Path != tt.path {
				t.Errorf("Path = %q, want %q", ae.Path, tt.path)
			}
			if tt.limit != 0 && ae.Limit != tt.limit {
				t.Errorf("Limit = %d, want %d", ae.Limit, tt.limit)
			}
			if tt.actual != 0 {
				if tt.atLeast && ae.Actual < tt.actual || !tt.atLeast && ae.Actual != tt.actual {
					t.Errorf("Actual = %d, want %d (at least: %v)", ae.Actual, tt.actual, tt.atLeast)
				}
			}
		})
	}
}

// TestReadAccepts covers archives that must decode.
func TestReadAccepts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		data  func(t *testing.T) []byte
		names []string
	}{
		{name: "directory entries are skipped", data: func(t *testing.T) []byte {
			return rawZip(t, []rawEntry{
				{name: "assets/", dir: true, attrs: (0o040000 | 0o755) << 16},
				{name: `assets\sub\`, dir: true},
				{name: "assets/x", data: []byte("x")},
			})
		}, names: []string{"assets/x"}},
		{name: "stored and deflate", data: func(t *testing.T) []byte {
			return rawZip(t, []rawEntry{{name: "a", data: []byte("stored")}, {name: "b", data: []byte("deflated"), method: zip.Deflate}})
		}, names: []string{"a", "b"}},
		{name: "one 1 MiB zero entry is within the ratio grace", data: func(t *testing.T) []byte {
			return rawZip(t, []rawEntry{{name: "assets/zero.bin", data: make([]byte, CompressionRatioGrace), method: zip.Deflate}})
		}, names: []string{"assets/zero.bin"}},
		{name: "non-ascii name with the utf-8 flag", data: func(t *testing.T) []byte {
			return rawZip(t, []rawEntry{{name: "assets/ž.txt", data: []byte("x"), flags: flagUTF8}})
		}, names: []string{"assets/ž.txt"}},
		{name: "names are normalized", data: func(t *testing.T) []byte {
			return rawZip(t, []rawEntry{{name: `assets\a\b.txt`, data: []byte("x")}, {name: " c ", data: nil}})
		}, names: []string{"assets/a/b.txt", "c"}},
		{name: "dos creator regular file", data: func(t *testing.T) []byte {
			return rawZip(t, []rawEntry{{name: "a", data: []byte("x"), creator: 11, attrs: 0x20}})
		}, names: []string{"a"}},
		{name: "exactly 256 entries", data: func(t *testing.T) []byte {
			var es []rawEntry
			for i := 0; i < MaxEntries; i++ {
				es = append(es, rawEntry{name: fmt.Sprintf("f%03d", i)})
			}
			return rawZip(t, es)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a, err := ReadBytes(tt.data(t))
			if err != nil {
				t.Fatalf("ReadBytes: %v", err)
			}
			if tt.names != nil && strings.Join(a.Names(), ",") != strings.Join(tt.names, ",") {
				t.Fatalf("Names() = %q, want %q", a.Names(), tt.names)
			}
		})
	}
}

// hugeReaderAt claims a size it never serves.
type hugeReaderAt struct{}

func (hugeReaderAt) ReadAt(p []byte, off int64) (int, error) { return 0, io.EOF }

func TestReadTooLargeFile(t *testing.T) {
	t.Parallel()
	_, err := Read(hugeReaderAt{}, MaxArtifactBytes+1)
	wantErr(t, err, ErrArtifactTooLarge)
	var ae *Error
	if !errors.As(err, &ae) || ae.Actual != MaxArtifactBytes+1 || ae.Limit != MaxArtifactBytes {
		t.Fatalf("err = %#v, want Limit %d Actual %d", err, MaxArtifactBytes, MaxArtifactBytes+1)
	}
	if _, err := Read(hugeReaderAt{}, -1); !errors.Is(err, ErrInvalidZip) {
		t.Fatalf("Read(size -1) = %v, want ErrInvalidZip", err)
	}
}

func TestReadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good"+Extension)
	if err := os.WriteFile(good, buildGood(t).Bytes, 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := ReadFile(good)
	if err != nil {
		t.Fatalf("ReadFile: %v", err)
	}
	if _, ok := a.Entry(SignaturePath); !ok {
		t.Fatalf("ReadFile: no %s among %q", SignaturePath, a.Names())
	}
	big := filepath.Join(dir, "big"+Extension)
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxArtifactBytes + 7); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = ReadFile(big)
	wantErr(t, err, ErrArtifactTooLarge)
	var ae *Error
	if !errors.As(err, &ae) || ae.Actual != MaxArtifactBytes+7 {
		t.Fatalf("ReadFile(big) = %v, want Actual %d", err, MaxArtifactBytes+7)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("ReadFile(missing) = %v, want os.ErrNotExist", err)
	}
}

// TestDirGuardBoundary checks that a signature split across two ReadAt
// calls is still counted.
func TestDirGuardBoundary(t *testing.T) {
	t.Parallel()
	data := []byte("xxxPK\x01\x02yyPK\x01\x02")
	for split := 0; split <= len(data); split++ {
		g := &dirGuard{r: bytes.NewReader(data), size: int64(len(data)), armed: true}
		g.ReadAt(make([]byte, split), 0)
		g.ReadAt(make([]byte, len(data)-split), int64(split))
		if len(g.seen) != 2 {
			t.Errorf("split at %d: saw %d signatures, want 2", split, len(g.seen))
		}
	}
}

package artifact

import (
	"archive/zip"
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/manifest"
)

func TestBuildDeterministic(t *testing.T) {
	t.Parallel()
	a := buildGood(t)
	in := sampleInput()
	in.Modules = append(in.Modules, File{Path: "z/second.wasm", Data: emptyModule})
	in.Assets = append(in.Assets, File{Path: "b.txt", Data: []byte("b")}, File{Path: "a.txt", Data: []byte("a")})
	b1, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	// Same files, other input order.
	in.Modules[0], in.Modules[1] = in.Modules[1], in.Modules[0]
	in.Assets[0], in.Assets[2] = in.Assets[2], in.Assets[0]
	b2, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b1.Bytes, b2.Bytes) {
		t.Fatal("Build is not deterministic across input order")
	}
	for i := 0; i < 3; i++ {
		again := buildGood(t)
		if !bytes.Equal(a.Bytes, again.Bytes) {
			t.Fatalf("run %d: Build gave different bytes", i)
		}
	}
	// The signing time is the only free field; it is not covered by the
	// payload hash.
	in2 := sampleInput()
	in2.SignedAt = testSignAt.Add(time.Hour)
	c, err := Build(in2)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a.Bytes, c.Bytes) || a.PayloadSHA256 != c.PayloadSHA256 {
		t.Fatalf("changing SignedAt: bytes equal %v, payload %s vs %s", bytes.Equal(a.Bytes, c.Bytes), a.PayloadSHA256, c.PayloadSHA256)
	}
}

// TestBuildContainer checks what Palyra's reader relies on, and the fixed
// metadata that makes the bytes reproducible.
func TestBuildContainer(t *testing.T) {
	t.Parallel()
	built := buildGood(t)
	zr, err := zip.NewReader(bytes.NewReader(built.Bytes), int64(len(built.Bytes)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		if f.Method != zip.Deflate {
			t.Errorf("%s: method %d, want Deflate", f.Name, f.Method)
		}
		if f.Method != zip.Store && f.Method != zip.Deflate {
			t.Errorf("%s: Palyra reads only Stored and Deflate", f.Name)
		}
		if f.Flags&0x8 != 0 || f.Flags&0x1 != 0 {
			t.Errorf("%s: flags %#x (data descriptor or encryption)", f.Name, f.Flags)
		}
		if len(f.Extra) != 0 {
			t.Errorf("%s: extra field %x", f.Name, f.Extra)
		}
		if f.ModifiedDate != dosDate1980 || f.ModifiedTime != 0 {
			t.Errorf("%s: mtime %#x %#x, want 1980-01-01 00:00", f.Name, f.ModifiedDate, f.ModifiedTime)
		}
		if f.Mode() != 0o644 {
			t.Errorf("%s: mode %v, want 0644", f.Name, f.Mode())
		}
		if f.CreatorVersion>>8 != creatorUnix {
			t.Errorf("%s: creator %d, want Unix", f.Name, f.CreatorVersion>>8)
		}
		if strings.HasPrefix(f.Name, "/") || strings.HasPrefix(f.Name, "./") || strings.HasPrefix(f.Name, "_palyra/") {
			t.Errorf("%s: not a root-relative name", f.Name)
		}
	}
	want := []string{"assets/prompt.txt", "modules/module.wasm", ProvenancePath, SBOMPath, SignaturePath, ManifestPath}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("entries %q, want %q (byte-sorted)", names, want)
	}
	if !sort.StringsAreSorted(names) {
		t.Errorf("entries not sorted: %q", names)
	}
	if !bytes.HasPrefix(built.Entries[SignaturePath], []byte("{\n  \"algorithm\": \"ed25519-sha256\",\n  \"publisher\": \"acme\",\n  \"key_id\": ")) ||
		bytes.HasSuffix(built.Entries[SignaturePath], []byte("\n")) {
		t.Errorf("signature.json is not Palyra's pretty JSON:\n%s", built.Entries[SignaturePath])
	}
}

func TestBuildIntegrityList(t *testing.T) {
	t.Parallel()
	built := buildGood(t)
	m, err := manifest.Parse(built.Entries[ManifestPath])
	if err != nil {
		t.Fatalf("manifest.Parse(built skill.toml): %v", err)
	}
	var got []string
	for _, f := range m.Integrity.Files {
		got = append(got, f.Path+"="+f.SHA256)
	}
	var want []string
	for _, name := range sortedNames(built.Entries) {
		if name != ManifestPath && name != SignaturePath {
			want = append(want, name+"="+sha256Hex(built.Entries[name]))
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("integrity.files:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A list in the input is replaced.
	in := sampleInput()
	in.Manifest = append(bytes.Clone(in.Manifest), []byte("\n[[integrity.files]]\npath = \"bogus\"\nsha256 = \""+strings.Repeat("0", 64)+"\"\n")...)
	b2, err := Build(in)
	if err != nil {
		t.Fatalf("Build with an integrity list: %v", err)
	}
	if b2.PayloadSHA256 != built.PayloadSHA256 {
		t.Errorf("a given integrity list changed the payload")
	}
}

func TestBuildErrors(t *testing.T) {
	t.Parallel()
	big := make([]byte, 14<<20) // the total is checked before anything is compressed
	tests := []struct {
		name string
		edit func(in *BuildInput)
		want error
		code string
	}{
		{name: "module not .wasm", edit: func(in *BuildInput) { in.Modules[0].Path = "module.wat" }, want: manifest.ErrValidation},
		{name: "no module", edit: func(in *BuildInput) { in.Modules = nil }, want: manifest.ErrValidation},
		{name: "module path escapes", edit: func(in *BuildInput) { in.Modules[0].Path = "../module.wasm" }, want: ErrInvalidPath},
		{name: "asset path absolute", edit: func(in *BuildInput) { in.Assets[0].Path = "/etc/passwd" }, want: ErrInvalidPath},
		{name: "duplicate after normalization", edit: func(in *BuildInput) {
			in.Modules = []File{{Path: `a\b.wasm`, Data: emptyModule}, {Path: "a/b.wasm", Data: emptyModule}}
		}, want: ErrDuplicateEntry},
		{name: "entry too large", edit: func(in *BuildInput) {
			in.Assets = []File{{Path: "big.bin", Data: make([]byte, MaxEntryBytes+1)}}
		}, want: ErrEntryTooLarge},
		{name: "256 modules plus the other entries", edit: func(in *BuildInput) {
			in.Modules = nil
			for i := 0; i < 256; i++ {
				in.Modules = append(in.Modules, File{Path: fmt.Sprintf("m%03d.wasm", i), Data: emptyModule})
			}
		}, want: ErrTooManyEntries},
		{name: "5 x 14 MiB modules", edit: func(in *BuildInput) {
			in.Modules = nil
			for i := 0; i < 5; i++ {
				in.Modules = append(in.Modules, File{Path: fmt.Sprintf("m%d.wasm", i), Data: big})
			}
		}, want: ErrArtifactTooLarge},
		{name: "2 MiB of zeros", edit: func(in *BuildInput) {
			in.Assets = []File{{Path: "zero.bin", Data: make([]byte, 2<<20)}}
		}, want: ErrCompressionRatio},
		{name: "bad sbom", edit: func(in *BuildInput) { in.SBOM = []byte(`{"bomFormat":"SPDX"}`) }, want: ErrInvalidSBOM},
		{name: "bad provenance", edit: func(in *BuildInput) { in.Provenance = []byte(`{}`) }, want: ErrInvalidProvenance},
		{name: "bad manifest", edit: func(in *BuildInput) { in.Manifest = []byte("nope = [") }, want: manifest.ErrParse},
		{name: "manifest for a newer runtime", edit: func(in *BuildInput) {
			in.Manifest = bytes.Replace(in.Manifest, []byte(`min_palyra_version = "0.1.0"`), []byte(`min_palyra_version = "9.0.0"`), 1)
		}, want: manifest.ErrUnsupportedRuntimeVersion},
		{name: "no signing key", edit: func(in *BuildInput) { in.SigningKey = nil }, want: ErrInvalidSigningKey},
		{name: "inconsistent signing key", edit: func(in *BuildInput) {
			k := bytes.Clone(seedKey(5))
			copy(k[32:], seedKey(9)[32:])
			in.SigningKey = k
		}, want: ErrInvalidSigningKey},
		{name: "no signing time", edit: func(in *BuildInput) { in.SignedAt = time.Time{} }, want: ErrInvalidBuildInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := sampleInput()
			tt.edit(&in)
			_, err := Build(in)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Build: err = %v (code %s), want %v", err, errcode.Of(err), tt.want)
			}
			if !strings.HasPrefix(err.Error(), "artifact: ") {
				t.Errorf("error %q lacks the artifact: prefix", err)
			}
		})
	}
}

func TestParseSigningKey(t *testing.T) {
	t.Parallel()
	seed := bytes.Repeat([]byte{1}, 32)
	seed[0] = ' ' // raw bytes that start with white space stay raw
	b64 := base64.StdEncoding.EncodeToString(seed)
	tests := []struct {
		name   string
		in     []byte
		ok     bool
		actual int64
	}{
		{name: "raw", in: seed, ok: true},
		{name: "raw plus newline", in: append(bytes.Repeat([]byte{'k'}, 32), '\n'), ok: true},
		{name: "hex", in: []byte(hex.EncodeToString(seed)), ok: true},
		{name: "hex upper case with white space", in: []byte("  " + strings.ToUpper(hex.EncodeToString(seed)) + "\r\n"), ok: true},
		{name: "base64", in: []byte(b64 + "\n"), ok: true},
		{name: "base64 unpadded", in: []byte(strings.TrimRight(b64, "=")), actual: 43},
		{name: "base64 url-safe", in: []byte(base64.URLEncoding.EncodeToString(bytes.Repeat([]byte{0xfb}, 32))), actual: 44},
		{name: "31 bytes", in: make([]byte, 31), actual: 31},
		{name: "33 bytes", in: bytes.Repeat([]byte{7}, 33), actual: 33},
		{name: "hex of 31 bytes", in: []byte(hex.EncodeToString(make([]byte, 31))), actual: 62},
		{name: "empty", in: nil, actual: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			key, err := ParseSigningKey(tt.in)
			if tt.ok {
				if err != nil {
					t.Fatalf("ParseSigningKey: %v", err)
				}
				if len(key) != ed25519.PrivateKeySize {
					t.Fatalf("key length %d", len(key))
				}
				return
			}
			wantErr(t, err, ErrInvalidSigningKey)
			var ae *Error
			if !errors.As(err, &ae) || ae.Actual != tt.actual {
				t.Fatalf("err = %v, want Actual %d", err, tt.actual)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("got %d bytes", tt.actual)) {
				t.Errorf("error %q does not name the length", err)
			}
		})
	}
	// The parsed key is the seed.
	key, err := ParseSigningKey([]byte(hex.EncodeToString(seed)))
	if err != nil || !bytes.Equal(key.Seed(), seed) {
		t.Fatalf("hex key seed = %x, %v", key.Seed(), err)
	}
}

func TestEntryPaths(t *testing.T) {
	t.Parallel()
	abs := filepath.Join(string(filepath.Separator)+"build", "out", "module.wasm")
	if runtime.GOOS == "windows" {
		abs = `C:\build\out\module.wasm`
	}
	tests := []struct {
		arg, module, asset string
		moduleErr          error
	}{
		{arg: "crates/x/module.wasm", module: "modules/crates/x/module.wasm", asset: "assets/crates/x/module.wasm"},
		{arg: abs, module: "modules/module.wasm", asset: "assets/module.wasm"},
		{arg: `dir\m.wasm`, module: "modules/dir/m.wasm", asset: "assets/dir/m.wasm"},
		{arg: "prompt.txt", moduleErr: manifest.ErrValidation, asset: "assets/prompt.txt"},
		{arg: "../m.wasm", moduleErr: ErrInvalidPath},
		{arg: "./m.wasm", moduleErr: ErrInvalidPath},
	}
	for _, tt := range tests {
		got, err := ModuleEntryPath(tt.arg)
		if tt.moduleErr != nil {
			if !errors.Is(err, tt.moduleErr) {
				t.Errorf("ModuleEntryPath(%q) = %q, %v; want %v", tt.arg, got, err, tt.moduleErr)
			}
		} else if err != nil || got != tt.module {
			t.Errorf("ModuleEntryPath(%q) = %q, %v; want %q", tt.arg, got, err, tt.module)
		}
		if tt.asset == "" {
			continue
		}
		if got, err := AssetEntryPath(tt.arg); err != nil || got != tt.asset {
			t.Errorf("AssetEntryPath(%q) = %q, %v; want %q", tt.arg, got, err, tt.asset)
		}
	}
}

func TestPayloadSHA256IgnoresSignature(t *testing.T) {
	t.Parallel()
	e := map[string][]byte{"a.txt": []byte("hi")}
	h := PayloadSHA256(e)
	e[SignaturePath] = []byte("anything")
	if PayloadSHA256(e) != h {
		t.Fatal("signature.json changed the payload hash")
	}
	if h != "425a4fef84813a1ea319379b98c6e399d420b018249b79e3aa638fa037ca7915" {
		t.Fatalf("framing example: %s", h)
	}
}

// The skill.toml Build writes keeps the author's key order in the tool
// schemas (the order a form shows their fields in), and the same bytes on
// every build.
func TestBuildKeepsSchemaKeyOrder(t *testing.T) {
	t.Parallel()
	in := sampleInput()
	in.Manifest = []byte(strings.Replace(sampleManifest, `input_schema = { type = "object" }`,
		`input_schema = { type = "object", properties = { zeta = { type = "string" }, alpha = { type = "object", properties = { y = {}, x = {} } } } }`, 1))
	var first []byte
	for range 2 {
		b, err := Build(in)
		if err != nil {
			t.Fatal(err)
		}
		toml := entriesOf(t, b.Bytes)[ManifestPath]
		orders, err := manifest.InputPropertyOrders(toml)
		if err != nil {
			t.Fatal(err)
		}
		want := manifest.PropertyOrders{"acme.echo": {"": {"zeta", "alpha"}, "/properties/alpha": {"y", "x"}}}
		if !reflect.DeepEqual(orders, want) {
			t.Fatalf("orders %v, want %v\n%s", orders, want, toml)
		}
		if first != nil && !bytes.Equal(first, b.Bytes) {
			t.Fatal("two builds differ")
		}
		first = b.Bytes
	}
}

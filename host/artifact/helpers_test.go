package artifact

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"maps"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/errcode"
)

// sampleManifest is the small v2 manifest of Palyra's tests (no warnings
// expected).
const sampleManifest = `manifest_version = 2
skill_id = "acme.echo_http"
name = "Echo"
version = "1.0.0"
publisher = "acme"

[[entrypoints.tools]]
id = "acme.echo"
name = "echo"
description = "Echo payload"
input_schema = { type = "object" }
output_schema = { type = "object" }

[capabilities]
http_egress_allowlist = ["api.example.com"]

[capabilities.filesystem]
write_roots = ["skills/cache"]

[compat]
required_protocol_major = 1
min_palyra_version = "0.1.0"

[operator]
display_name = "Echo"
`

// legacyManifest is a manifest_version = 1 manifest without operator metadata.
const legacyManifest = `manifest_version = 1
skill_id = "acme.legacy"
name = "Legacy"
version = "1.0.0"
publisher = "acme"

[[entrypoints.tools]]
id = "acme.legacy_run"
name = "run"
description = "Run"
input_schema = { type = "object" }
output_schema = { type = "object" }

[compat]
min_protocol_major = 1
min_runtime_version = "0.1.0"
`

var (
	// emptyModule is the smallest valid core wasm module.
	emptyModule = []byte("\x00asm\x01\x00\x00\x00")
	sampleSBOM  = []byte(`{"bomFormat":"CycloneDX","specVersion":"1.6","version":1,"components":[]}`)
	sampleProv  = []byte(`{"builder":{"id":"palyra-go-test"},"subject":[{"name":"modules/module.wasm"}]}`)
	testSignAt  = time.UnixMilli(1730000000000)
)

// seedKey returns the Ed25519 key with a seed of 32 bytes b.
func seedKey(b byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{b}, ed25519.SeedSize))
}

func sampleInput() BuildInput {
	return BuildInput{
		Manifest:   []byte(sampleManifest),
		Modules:    []File{{Path: "module.wasm", Data: emptyModule}},
		Assets:     []File{{Path: "prompt.txt", Data: []byte("Say hello.\n")}},
		SBOM:       sampleSBOM,
		Provenance: sampleProv,
		SigningKey: seedKey(5),
		SignedAt:   testSignAt,
	}
}

// buildGood builds the sample artifact or fails the test.
func buildGood(t testing.TB) *Built {
	t.Helper()
	b, err := Build(sampleInput())
	if err != nil {
		t.Fatalf("Build(sample): %v", err)
	}
	return b
}

// entriesOf reads data and returns a copy of its entry map.
func entriesOf(t testing.TB, data []byte) map[string][]byte {
	t.Helper()
	a, err := ReadBytes(data)
	if err != nil {
		t.Fatalf("ReadBytes: %v", err)
	}
	return maps.Clone(a.entries)
}

// messWith returns good with its entries changed by corrupt and rezipped
// with the deterministic writer; signature.json is kept as it was unless
// corrupt changes it.
func messWith(t testing.TB, good []byte, corrupt func(e map[string][]byte)) []byte {
	t.Helper()
	e := entriesOf(t, good)
	corrupt(e)
	out, err := writeZip(e)
	if err != nil {
		t.Fatalf("writeZip: %v", err)
	}
	return out
}

// resign recomputes signature.json for e with key, keeping the publisher
// of the old signature document.
func resign(t testing.TB, e map[string][]byte, key ed25519.PrivateKey) {
	t.Helper()
	old, err := parseSignature(e[SignaturePath])
	if err != nil {
		t.Fatalf("parseSignature: %v", err)
	}
	sig := signPayload(key, old.Publisher, PayloadSHA256(e), old.SignedAtUnixMS)
	b, err := sig.marshal()
	if err != nil {
		t.Fatal(err)
	}
	e[SignaturePath] = b
}

// editSignature rewrites signature.json through edit (on a generic map, so
// fields can be removed or added).
func editSignature(t testing.TB, e map[string][]byte, edit func(s *Signature)) {
	t.Helper()
	s, err := parseSignature(e[SignaturePath])
	if err != nil {
		t.Fatalf("parseSignature: %v", err)
	}
	edit(&s)
	b, err := s.marshal()
	if err != nil {
		t.Fatal(err)
	}
	e[SignaturePath] = b
}

// rawEntry describes one entry for rawZip, which writes exactly what it
// is told: any name, method, flags, mode and CRC.
type rawEntry struct {
	name    string
	data    []byte // uncompressed content
	method  uint16 // zip.Store or zip.Deflate (others are written stored)
	flags   uint16
	attrs   uint32 // external attributes; 0 means regular 0644
	creator uint16 // creator system; 0 means Unix
	crc     *uint32
	dir     bool // write as a directory entry (no data)
}

func rawZip(t testing.TB, entries []rawEntry) []byte {
	t.Helper()
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	for _, re := range entries {
		body := re.data
		if re.method == zip.Deflate {
			var c bytes.Buffer
			fw, _ := flate.NewWriter(&c, flate.BestCompression)
			fw.Write(re.data)
			fw.Close()
			body = c.Bytes()
		}
		creator := re.creator
		if creator == 0 {
			creator = creatorUnix
		}
		attrs := re.attrs
		if attrs == 0 {
			attrs = unixMode0644
		}
		fh := &zip.FileHeader{
			Name:               re.name,
			CreatorVersion:     creator<<8 | zipVersion20,
			ReaderVersion:      zipVersion20,
			Method:             re.method,
			Flags:              re.flags,
			ModifiedDate:       dosDate1980,
			CRC32:              crc32.ChecksumIEEE(re.data),
			CompressedSize64:   uint64(len(body)),
			UncompressedSize64: uint64(len(re.data)),
			ExternalAttrs:      attrs,
		}
		if re.crc != nil {
			fh.CRC32 = *re.crc
		}
		w, err := zw.CreateRaw(fh)
		if err != nil {
			t.Fatalf("CreateRaw(%q): %v", re.name, err)
		}
		if _, err := w.Write(body); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// rawFromEntries lists e as deflated rawEntry values in path order.
func rawFromEntries(e map[string][]byte) []rawEntry {
	var out []rawEntry
	for _, name := range sortedNames(e) {
		out = append(out, rawEntry{name: name, data: e[name], method: zip.Deflate})
	}
	return out
}

// Errors of the test trust decider, one per refusal of Palyra's trust
// decision. They stand for host/trust's sentinels, which this package's
// tests cannot import (trust imports artifact), under codes of their own:
// every code has one sentinel.
var (
	errUntrusted     = errcode.New("test_untrusted_publisher", "untrusted publisher (test decider)")
	errTrustedKey    = errcode.New("test_trusted_publisher_key_mismatch", "trusted publisher key mismatch (test decider)")
	errTOFUKeyChange = errcode.New("test_tofu_key_mismatch", "tofu key mismatch (test decider)")
)

// testStore implements Palyra's trust decision over two maps, as Palyra's
// SkillTrustStore does.
type testStore struct {
	trusted map[string][]string // publisher → hex keys
	tofu    map[string]string   // publisher → hex key
}

func newTestStore() *testStore {
	return &testStore{trusted: map[string][]string{}, tofu: map[string]string{}}
}

func (s *testStore) Decide(ctx context.Context, publisher string, key ed25519.PublicKey, allowTOFU bool) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	observed := hex.EncodeToString(key)
	if keys, ok := s.trusted[publisher]; ok {
		for _, k := range keys {
			if k == observed {
				return "allowlisted", nil
			}
		}
		return "", errTrustedKey
	}
	if pinned, ok := s.tofu[publisher]; ok {
		if pinned == observed {
			return "tofu_pinned", nil
		}
		return "", errTOFUKeyChange
	}
	if allowTOFU {
		s.tofu[publisher] = observed
		return "tofu_newly_pinned", nil
	}
	return "", errUntrusted
}

var _ TrustDecider = (*testStore)(nil)

// wantErr fails the test unless err wraps want (errors.Is) and carries
// want's code.
func wantErr(t testing.TB, err, want error) {
	t.Helper()
	if err == nil {
		t.Fatalf("err = nil, want %v", want)
	}
	if !errors.Is(err, want) {
		t.Fatalf("err = %v (code %s), want errors.Is %v", err, errcode.Of(err), want)
	}
	if got, w := errcode.Of(err), errcode.Of(want); got != w {
		t.Fatalf("errcode.Of(%v) = %s, want %s", err, got, w)
	}
}

package artifact

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"crypto/ed25519"
	"fmt"
	"hash/crc32"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/palyra-go/palyra/host/internal/skillpath"
	"github.com/palyra-go/palyra/host/manifest"
)

// File is one module or asset given to Build. Path is relative to the
// entry's folder, as in Palyra's builder: a module "x/m.wasm" becomes the
// entry "modules/x/m.wasm". For a path given on a command line, use
// CLIPath first.
type File struct {
	Path string
	Data []byte
}

// BuildInput is everything an artifact is made of.
type BuildInput struct {
	// Manifest is skill.toml as written by the author. Build re-serializes
	// it with integrity.files filled in; any list given is replaced.
	Manifest []byte
	// Modules are the wasm modules (at least one; paths end in ".wasm").
	Modules []File
	// Assets are any other files, stored under assets/.
	Assets []File
	// SBOM is sbom.cdx.json (CycloneDX JSON). When nil and Generate is
	// set, Build generates it; when given, it is used as given.
	SBOM []byte
	// Provenance is provenance.json. When nil and Generate is set, Build
	// generates it; when given, it is used as given.
	Provenance []byte
	// Generate, when set, lets Build generate the SBOM and provenance the
	// input leaves nil (see Generate). Without it both are required.
	Generate *Generate
	// SigningKey signs the payload; see ParseSigningKey.
	SigningKey ed25519.PrivateKey
	// SignedAt is recorded as signed_at_unix_ms. It is required, and is
	// the only input-independent field: fix it to get identical bytes.
	SignedAt time.Time
}

// Built is a signed artifact and what went into it.
type Built struct {
	// Bytes is the .palyra-skill file.
	Bytes []byte
	// Manifest is the manifest as written to skill.toml.
	Manifest *manifest.Manifest
	// Signature is the content of signature.json.
	Signature Signature
	// PayloadSHA256 is the signed payload hash.
	PayloadSHA256 string
	// Entries holds every entry by path, signature.json included. Module,
	// asset, SBOM and provenance contents share the input's slices.
	Entries map[string][]byte
	// Generated names the entries Build generated (SBOMPath and/or
	// ProvenancePath, in that order); empty when all were given.
	Generated []string
}

// Build validates in, fills the manifest's integrity list, signs the
// payload and writes a deterministic ZIP: Deflate for every entry,
// entries in byte-wise path order, modification time 1980-01-01 00:00,
// Unix mode 0644, no extra fields and no data descriptors. The same input
// gives the same bytes on every run (with the same Go release, whose
// Deflate encoder fixes the compressed bytes).
//
// With in.Generate set, an SBOM or provenance left nil is generated from
// what is built (see Generate; Built.Generated names them): a CycloneDX 1.6
// SBOM listing the skill, each module and asset with its SHA-256 (and the
// Go modules linked into a module built by Go), and an
// in-toto Statement v1 with a SLSA Provenance v1 predicate whose subjects
// are the modules. Both pass Inspect's checks, Palyra's included.
//
// Errors follow Palyra's builder: manifest parse/validation/compat
// errors (every manifest problem at once: see manifest.Parse),
// ErrInvalidBuildInput for an incomplete Generate, ErrInvalidSBOM, ErrInvalidProvenance, manifest.ErrValidation
// for a module path without ".wasm" or no module at all, ErrInvalidPath,
// ErrDuplicateEntry, ErrEntryTooLarge, ErrTooManyEntries (skill.toml and
// signature.json count), ErrArtifactTooLarge, and ErrCompressionRatio for
// an entry Read would refuse.
func Build(in BuildInput) (*Built, error) {
	if len(in.SigningKey) != ed25519.PrivateKeySize {
		return nil, &Error{Err: ErrInvalidSigningKey, Detail: fmt.Sprintf("want a %d-byte ed25519.PrivateKey, got %d bytes", ed25519.PrivateKeySize, len(in.SigningKey)), Actual: int64(len(in.SigningKey))}
	}
	if !bytes.Equal(ed25519.NewKeyFromSeed(in.SigningKey.Seed())[ed25519.SeedSize:], in.SigningKey[ed25519.SeedSize:]) {
		return nil, &Error{Err: ErrInvalidSigningKey, Detail: "the public half of the key does not match its seed"}
	}
	if in.SignedAt.IsZero() {
		return nil, &Error{Err: ErrInvalidBuildInput, Detail: "SignedAt is not set"}
	}
	m, err := parseManifest(in.Manifest)
	if err != nil {
		return nil, err
	}
	if err := manifest.CheckCompat(m); err != nil {
		return nil, fmt.Errorf("artifact: compat: %w", err)
	}
	genSBOM := in.SBOM == nil && in.Generate != nil
	genProv := in.Provenance == nil && in.Generate != nil
	if genSBOM || genProv {
		if err := in.Generate.check(); err != nil {
			return nil, err
		}
	}
	if !genSBOM {
		if err := validateSBOM(in.SBOM); err != nil {
			return nil, err
		}
	}
	if !genProv {
		if err := validateProvenance(in.Provenance); err != nil {
			return nil, err
		}
	}

	entries := make(map[string][]byte, len(in.Modules)+len(in.Assets)+4)
	for _, f := range in.Modules {
		name, err := moduleEntry(f.Path)
		if err != nil {
			return nil, err
		}
		if err := addEntry(entries, name, f.Data); err != nil {
			return nil, err
		}
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("artifact: artifact must include at least one module: %w", manifest.ErrValidation)
	}
	for _, f := range in.Assets {
		name, err := assetEntry(f.Path)
		if err != nil {
			return nil, err
		}
		if err := addEntry(entries, name, f.Data); err != nil {
			return nil, err
		}
	}
	sbom, prov := in.SBOM, in.Provenance
	var generated []string
	if genSBOM || genProv {
		files, at := describe(entries), in.Generate.Now()
		if genSBOM {
			if sbom, err = generateSBOM(m, files, in.Generate, at); err != nil {
				return nil, err
			}
			generated = append(generated, SBOMPath)
		}
		if genProv {
			if prov, err = generateProvenance(m, in.Manifest, files, in.Generate, at); err != nil {
				return nil, err
			}
			generated = append(generated, ProvenancePath)
		}
	}
	if err := addEntry(entries, SBOMPath, sbom); err != nil {
		return nil, err
	}
	if err := addEntry(entries, ProvenancePath, prov); err != nil {
		return nil, err
	}
	// Cheap early limit checks, before hashing and signing; the final
	// checks below count skill.toml and signature.json too.
	if n := len(entries) + 2; n > MaxEntries {
		return nil, limitErr(ErrTooManyEntries, "", MaxEntries, int64(n))
	}
	if t := totalSize(entries); t > MaxArtifactBytes {
		return nil, limitErr(ErrArtifactTooLarge, "", MaxArtifactBytes, t)
	}

	names := sortedNames(entries)
	files := make([]manifest.IntegrityFile, 0, len(names))
	for _, name := range names {
		files = append(files, manifest.IntegrityFile{Path: name, SHA256: sha256Hex(entries[name])})
	}
	m.Integrity.Files = files
	// The schemas keep the author's key order (the order of a form's fields).
	toml, err := manifest.MarshalOrdered(m, in.Manifest)
	if err != nil {
		return nil, fmt.Errorf("artifact: serialize %s: %w", ManifestPath, err)
	}
	if err := addEntry(entries, ManifestPath, toml); err != nil {
		return nil, err
	}

	payload := PayloadSHA256(entries)
	sig := signPayload(in.SigningKey, m.Publisher, payload, in.SignedAt.UnixMilli())
	sigJSON, err := sig.marshal()
	if err != nil {
		return nil, fmt.Errorf("artifact: serialize %s: %w", SignaturePath, err)
	}
	if err := addEntry(entries, SignaturePath, sigJSON); err != nil {
		return nil, err
	}
	if n := len(entries); n > MaxEntries {
		return nil, limitErr(ErrTooManyEntries, "", MaxEntries, int64(n))
	}
	if t := totalSize(entries); t > MaxArtifactBytes {
		return nil, limitErr(ErrArtifactTooLarge, "", MaxArtifactBytes, t)
	}
	zipBytes, err := writeZip(entries)
	if err != nil {
		return nil, err
	}
	if len(zipBytes) > MaxArtifactBytes {
		return nil, limitErr(ErrArtifactTooLarge, "", MaxArtifactBytes, int64(len(zipBytes)))
	}
	return &Built{
		Bytes:         zipBytes,
		Manifest:      m,
		Signature:     sig,
		PayloadSHA256: payload,
		Entries:       entries,
		Generated:     generated,
	}, nil
}

// addEntry adds one payload entry, as Palyra's insert_entry: size limit,
// path rule, no duplicate.
func addEntry(entries map[string][]byte, path string, data []byte) error {
	if len(data) > MaxEntryBytes {
		return limitErr(ErrEntryTooLarge, path, MaxEntryBytes, int64(len(data)))
	}
	name, err := skillpath.Normalize(path)
	if err != nil {
		return fmt.Errorf("artifact: %w", err)
	}
	if _, dup := entries[name]; dup {
		return &Error{Err: ErrDuplicateEntry, Path: name}
	}
	entries[name] = data
	return nil
}

func totalSize(entries map[string][]byte) int64 {
	var t int64
	for _, b := range entries {
		t += int64(len(b))
	}
	return t
}

func sortedNames(entries map[string][]byte) []string {
	names := make([]string, 0, len(entries))
	for name := range entries {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// CLIPath maps a --module or --asset argument to the path Build expects,
// as Palyra's CLI does: a relative path is kept whole
// ("crates/x/module.wasm"), an absolute path is cut to its file name.
func CLIPath(arg string) string {
	if filepath.IsAbs(arg) {
		return filepath.Base(arg)
	}
	return arg
}

// ModuleEntryPath returns the entry a --module argument becomes:
// "modules/" + the normalized CLIPath(arg). The path must end in ".wasm"
// (manifest.ErrValidation) and pass the artifact path rule
// (ErrInvalidPath).
func ModuleEntryPath(arg string) (string, error) {
	return moduleEntry(CLIPath(arg))
}

// AssetEntryPath returns the entry an --asset argument becomes:
// "assets/" + the normalized CLIPath(arg).
func AssetEntryPath(arg string) (string, error) {
	return assetEntry(CLIPath(arg))
}

func moduleEntry(path string) (string, error) {
	if !strings.HasSuffix(path, ".wasm") {
		return "", fmt.Errorf("artifact: module path %q must end with .wasm: %w", path, manifest.ErrValidation)
	}
	p, err := skillpath.Normalize(path)
	if err != nil {
		return "", fmt.Errorf("artifact: module: %w", err)
	}
	return "modules/" + p, nil
}

func assetEntry(path string) (string, error) {
	p, err := skillpath.Normalize(path)
	if err != nil {
		return "", fmt.Errorf("artifact: asset: %w", err)
	}
	return "assets/" + p, nil
}

// Fixed ZIP metadata of every entry Build writes.
const (
	zipVersion20 = 20                       // "version needed to extract" 2.0 (Deflate)
	dosDate1980  = 1<<5 | 1                 // 1980-01-01 in MS-DOS date format
	unixMode0644 = (0o100000 | 0o644) << 16 // regular file, rw-r--r--
	flagUTF8     = 0x800
)

// writeZip writes entries as a deterministic ZIP. Each entry is
// compressed up front and written with CreateRaw, so the local header
// carries CRC and sizes (no data descriptor) and no extra field is added.
func writeZip(entries map[string][]byte) ([]byte, error) {
	var out bytes.Buffer
	out.Grow(int(totalSize(entries)/2) + 4096)
	zw := zip.NewWriter(&out)
	var comp bytes.Buffer
	fw, err := flate.NewWriter(&comp, flate.DefaultCompression)
	if err != nil {
		return nil, fmt.Errorf("artifact: deflate: %w", err)
	}
	for _, name := range sortedNames(entries) {
		data := entries[name]
		comp.Reset()
		comp.Grow(len(data) + len(data)/64 + 1024) // Deflate's worst case, so no regrowth
		fw.Reset(&comp)
		if _, err := fw.Write(data); err != nil {
			return nil, fmt.Errorf("artifact: deflate %q: %w", name, err)
		}
		if err := fw.Close(); err != nil {
			return nil, fmt.Errorf("artifact: deflate %q: %w", name, err)
		}
		if n := int64(len(data)); n > CompressionRatioGrace && n > MaxCompressionRatio*int64(comp.Len()) {
			return nil, &Error{Err: ErrCompressionRatio, Path: name, Detail: fmt.Sprintf("%d bytes deflate to %d", n, comp.Len()), Limit: MaxCompressionRatio, Actual: n / int64(comp.Len())}
		}
		fh := &zip.FileHeader{
			Name:               name,
			CreatorVersion:     creatorUnix<<8 | zipVersion20,
			ReaderVersion:      zipVersion20,
			Method:             zip.Deflate,
			ModifiedTime:       0,
			ModifiedDate:       dosDate1980,
			CRC32:              crc32.ChecksumIEEE(data),
			CompressedSize64:   uint64(comp.Len()),
			UncompressedSize64: uint64(len(data)),
			ExternalAttrs:      unixMode0644,
		}
		if !isASCII(name) {
			fh.Flags |= flagUTF8
		}
		w, err := zw.CreateRaw(fh)
		if err != nil {
			return nil, fmt.Errorf("artifact: zip %q: %w", name, err)
		}
		if _, err := w.Write(comp.Bytes()); err != nil {
			return nil, fmt.Errorf("artifact: zip %q: %w", name, err)
		}
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("artifact: zip: %w", err)
	}
	return out.Bytes(), nil
}

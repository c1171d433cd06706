package registry

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/manifest"
)

// Palyra's limits on a registry index (facts §3.7).
const (
	// MaxIndexPageBytes bounds one index page (2 MiB), checked before
	// parsing.
	MaxIndexPageBytes = 2 << 20
	// MaxEntries bounds the entries of an index, all pages together.
	MaxEntries = 10_000
	// MaxPages bounds the pages of an index.
	MaxPages = 20
	// MaxArtifactDownloadBytes bounds one artifact download (64 MiB).
	MaxArtifactDownloadBytes = 64 << 20
	// Timeout bounds each registry request when the caller gives none.
	Timeout = 20 * time.Second
)

// SchemaVersion is the only schema_version of the document and the index.
const SchemaVersion = 1

// Document is index.json: the index and its signature.
type Document struct {
	SchemaVersion uint32    `json:"schema_version"`
	Index         Index     `json:"index"`
	Signature     Signature `json:"signature"`
}

// Index is the signed part of a Document. Field order is Palyra's and is
// the order of the canonical payload.
type Index struct {
	SchemaVersion     uint32  `json:"schema_version"`
	GeneratedAtUnixMS int64   `json:"generated_at_unix_ms"`
	Entries           []Entry `json:"entries"`
	// NextPage is the URL of the next page (relative to this page's URL),
	// nil on the last page.
	NextPage *string `json:"next_page,omitempty"`
}

// Entry is one published skill version.
type Entry struct {
	SkillID   string `json:"skill_id"`
	Version   string `json:"version"`
	Publisher string `json:"publisher"`
	// Artifact is the artifact's URL or path, relative to the index page
	// (or the registry directory).
	Artifact string `json:"artifact"`
	// ArtifactSHA256 is the lowercase hex SHA-256 of the artifact file.
	ArtifactSHA256 string `json:"artifact_sha256"`
	// ArtifactBytes is the artifact's size, when the index gives it.
	ArtifactBytes *uint64 `json:"artifact_bytes,omitempty"`
}

// Signature is the index's signature document: the same fields and rules
// as an artifact's signature.json, over the index's payload hash.
type Signature = artifact.Signature

// Payload returns the canonical bytes whose SHA-256 hex is signed: idx as
// compact JSON the way serde_json writes Palyra's struct (fields in
// declaration order, absent options left out, strings escaped only where
// serde escapes them: '"', '\\' and control characters; no HTML escaping,
// U+2028/U+2029 written raw), with no trailing newline.
func Payload(idx *Index) []byte {
	var b bytes.Buffer
	b.WriteString(`{"schema_version":`)
	b.WriteString(strconv.FormatUint(uint64(idx.SchemaVersion), 10))
	b.WriteString(`,"generated_at_unix_ms":`)
	b.WriteString(strconv.FormatInt(idx.GeneratedAtUnixMS, 10))
	b.WriteString(`,"entries":[`)
	for i, e := range idx.Entries {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"skill_id":`)
		writeString(&b, e.SkillID)
		b.WriteString(`,"version":`)
		writeString(&b, e.Version)
		b.WriteString(`,"publisher":`)
		writeString(&b, e.Publisher)
		b.WriteString(`,"artifact":`)
		writeString(&b, e.Artifact)
		b.WriteString(`,"artifact_sha256":`)
		writeString(&b, e.ArtifactSHA256)
		if e.ArtifactBytes != nil {
			b.WriteString(`,"artifact_bytes":`)
			b.WriteString(strconv.FormatUint(*e.ArtifactBytes, 10))
		}
		b.WriteByte('}')
	}
	b.WriteByte(']')
	if idx.NextPage != nil {
		b.WriteString(`,"next_page":`)
		writeString(&b, *idx.NextPage)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// writeString writes s as serde_json's compact formatter does: the short
// escapes \" \\ \b \f \n \r \t, \u00XX (lowercase hex) for the other
// control characters, every other character as is.
func writeString(b *bytes.Buffer, s string) {
	const hexDigits = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte(hexDigits[c>>4])
				b.WriteByte(hexDigits[c&0xf])
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
}

// PayloadSHA256 returns the lowercase hex SHA-256 of Payload(idx).
func PayloadSHA256(idx *Index) string {
	sum := sha256.Sum256(Payload(idx))
	return hex.EncodeToString(sum[:])
}

// Sign signs idx with key for publisher: Ed25519 over the ASCII hex of
// PayloadSHA256(idx), recorded the way an artifact's signature.json is.
func Sign(idx *Index, key ed25519.PrivateKey, publisher string, signedAt time.Time) Signature {
	payload := PayloadSHA256(idx)
	pub := key.Public().(ed25519.PublicKey)
	return Signature{
		Algorithm:       artifact.Algorithm,
		Publisher:       publisher,
		KeyID:           artifact.KeyID(pub),
		PublicKeyBase64: base64.StdEncoding.EncodeToString(pub),
		PayloadSHA256:   payload,
		SignatureBase64: base64.StdEncoding.EncodeToString(ed25519.Sign(key, []byte(payload))),
		SignedAtUnixMS:  signedAt.UnixMilli(),
	}
}

// Marshal renders doc as Palyra writes index.json: pretty JSON with two
// spaces, no HTML escaping, no trailing newline.
func Marshal(doc *Document) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("registry: encode index: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// TrustFunc judges the key that signed an index with the trust store's
// rules (allowlist, trust on first use) and returns the decision
// (allowlisted, tofu_pinned, tofu_newly_pinned) or the refusal. It has
// source.TrustFunc's semantics.
type TrustFunc func(ctx context.Context, publisher string, key ed25519.PublicKey, allowTOFU bool) (string, error)

// Verified is an index page whose signature checked out and whose key the
// trust callback accepted.
type Verified struct {
	// Document is the parsed page.
	Document *Document
	// PublicKey is the key that signed it.
	PublicKey ed25519.PublicKey
	// TrustDecision is the trust callback's decision.
	TrustDecision string
}

// Verify checks doc's signature the way an artifact's is checked (the
// payload hash recomputed from the parsed index equals payload_sha256, then
// algorithm, public key, key_id, signature encoding and Ed25519 over the
// hex), then judges the publisher's key with trust.
func Verify(ctx context.Context, doc *Document, trust TrustFunc, allowTOFU bool) (*Verified, error) {
	if trust == nil {
		return nil, fmt.Errorf("registry: verify index: %w", ErrTrustRequired)
	}
	pub, err := checkSignature(doc)
	if err != nil {
		return nil, err
	}
	s := &doc.Signature
	decision, err := trust(ctx, s.Publisher, pub, allowTOFU)
	if err != nil {
		return nil, fmt.Errorf("registry: index key %s of publisher %q: %w", s.KeyID, s.Publisher, err)
	}
	return &Verified{Document: doc, PublicKey: pub, TrustDecision: decision}, nil
}

// checkSignature runs Verify's checks but the trust decision.
func checkSignature(doc *Document) (ed25519.PublicKey, error) {
	s := &doc.Signature
	fail := func(detail string) error {
		return fmt.Errorf("registry: index signature: %s: %w", detail, ErrSignatureInvalid)
	}
	if got := PayloadSHA256(&doc.Index); s.PayloadSHA256 != got {
		return nil, fail("payload_sha256 does not match the index (recomputed " + got + ")")
	}
	if s.Algorithm != artifact.Algorithm {
		return nil, fail("algorithm is not " + artifact.Algorithm)
	}
	if strings.TrimSpace(s.Publisher) == "" {
		return nil, fail("publisher is empty")
	}
	pub, err := s.PublicKey()
	if err != nil {
		return nil, fail("public_key_base64 is not 32 bytes of standard base64")
	}
	if s.KeyID != artifact.KeyID(pub) {
		return nil, fail("key_id does not match the public key")
	}
	sig, ok := decodeStdBase64(s.SignatureBase64)
	if !ok || len(sig) != ed25519.SignatureSize {
		return nil, fail("signature_base64 is not 64 bytes of standard base64")
	}
	if !ed25519.Verify(pub, []byte(s.PayloadSHA256), sig) {
		return nil, fail("ed25519 signature does not verify")
	}
	return pub, nil
}

// decodeStdBase64 decodes standard base64 with canonical padding and no
// line breaks, as Rust's base64 STANDARD engine does.
func decodeStdBase64(s string) ([]byte, bool) {
	if strings.ContainsAny(s, "\r\n") {
		return nil, false
	}
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	return b, err == nil
}

// Parse decodes an index page strictly: at most MaxIndexPageBytes (checked
// first), valid UTF-8, one JSON object and nothing after it, every field of
// the document, index, entries and signature known, present once (the
// optional ones may be absent or null) and of its type, schema_version 1,
// at most MaxEntries entries, each passing the entry checks, no duplicate
// (skill_id, version). It does not verify the signature (Verify does).
func Parse(data []byte) (*Document, error) {
	if len(data) > MaxIndexPageBytes {
		return nil, fmt.Errorf("registry: index page is %d bytes, over the limit MaxIndexPageBytes = %d: %w", len(data), MaxIndexPageBytes, ErrPageTooLarge)
	}
	if !utf8.Valid(data) {
		return nil, invalid("not valid UTF-8")
	}
	top, err := object(data, "document", []string{"schema_version", "index", "signature"}, nil)
	if err != nil {
		return nil, err
	}
	doc := &Document{}
	if doc.SchemaVersion, err = schemaVersion(top["schema_version"], "schema_version"); err != nil {
		return nil, err
	}
	if err := parseIndex(top["index"], &doc.Index); err != nil {
		return nil, err
	}
	if doc.Signature, err = parseSignature(top["signature"]); err != nil {
		return nil, err
	}
	if err := CheckEntries(doc.Index.Entries); err != nil {
		return nil, err
	}
	return doc, nil
}

func parseIndex(raw json.RawMessage, idx *Index) error {
	f, err := object(raw, "index", []string{"schema_version", "generated_at_unix_ms", "entries"}, []string{"next_page"})
	if err != nil {
		return err
	}
	if idx.SchemaVersion, err = schemaVersion(f["schema_version"], "index.schema_version"); err != nil {
		return err
	}
	if idx.GeneratedAtUnixMS, err = strconv.ParseInt(string(f["generated_at_unix_ms"]), 10, 64); err != nil {
		return invalid("index.generated_at_unix_ms is not an integer that fits in 64 bits")
	}
	if np, ok := f["next_page"]; ok && !isNull(np) {
		s, err := jsonString(np)
		if err != nil {
			return invalid("index.next_page is not a string")
		}
		idx.NextPage = &s
	}
	items, err := array(f["entries"], "index.entries")
	if err != nil {
		return err
	}
	if len(items) > MaxEntries {
		return fmt.Errorf("registry: index has %d entries, over the limit MaxEntries = %d: %w", len(items), MaxEntries, ErrTooManyEntries)
	}
	idx.Entries = make([]Entry, 0, len(items))
	for i, item := range items {
		e, err := parseEntry(item, i)
		if err != nil {
			return err
		}
		idx.Entries = append(idx.Entries, e)
	}
	return nil
}

var entryFields = []string{"skill_id", "version", "publisher", "artifact", "artifact_sha256"}

func parseEntry(raw json.RawMessage, i int) (Entry, error) {
	where := fmt.Sprintf("index.entries[%d]", i)
	f, err := object(raw, where, entryFields, []string{"artifact_bytes"})
	if err != nil {
		return Entry{}, err
	}
	var e Entry
	for _, p := range []struct {
		name string
		dst  *string
	}{{"skill_id", &e.SkillID}, {"version", &e.Version}, {"publisher", &e.Publisher}, {"artifact", &e.Artifact}, {"artifact_sha256", &e.ArtifactSHA256}} {
		if *p.dst, err = jsonString(f[p.name]); err != nil {
			return Entry{}, invalid(where + "." + p.name + " is not a string")
		}
	}
	if ab, ok := f["artifact_bytes"]; ok && !isNull(ab) {
		n, err := strconv.ParseUint(string(ab), 10, 64)
		if err != nil {
			return Entry{}, invalid(where + ".artifact_bytes is not an unsigned 64-bit integer")
		}
		e.ArtifactBytes = &n
	}
	return e, nil
}

// CheckEntries applies the entry checks to entries, in order, then refuses
// more than MaxEntries and a duplicate (skill_id, version).
func CheckEntries(entries []Entry) error {
	if len(entries) > MaxEntries {
		return fmt.Errorf("registry: index has %d entries, over the limit MaxEntries = %d: %w", len(entries), MaxEntries, ErrTooManyEntries)
	}
	seen := make(map[[2]string]bool, len(entries))
	for i := range entries {
		if err := CheckEntry(&entries[i]); err != nil {
			return fmt.Errorf("registry: index entry %d: %w", i, err)
		}
		k := entryKey(&entries[i])
		if seen[k] {
			return fmt.Errorf("registry: index entry %d: %s %s listed twice: %w", i, entries[i].SkillID, entries[i].Version, ErrDuplicateEntry)
		}
		seen[k] = true
	}
	return nil
}

// entryKey is the identity of an entry: its skill id and its version in
// canonical form (so "1.0.0" and "01.0.0" are one version).
func entryKey(e *Entry) [2]string {
	v, err := manifest.ParseVersion(e.Version)
	if err != nil {
		return [2]string{e.SkillID, e.Version}
	}
	return [2]string{e.SkillID, v.String()}
}

// CheckEntry applies the entry checks of facts §3.7 to e.
func CheckEntry(e *Entry) error {
	for _, f := range []struct{ name, v string }{{"skill_id", e.SkillID}, {"publisher", e.Publisher}, {"artifact", e.Artifact}} {
		if strings.TrimSpace(f.v) == "" {
			return fmt.Errorf("%s is empty: %w", f.name, ErrInvalidEntry)
		}
	}
	if _, err := manifest.ParseVersion(e.Version); err != nil {
		return fmt.Errorf("%s: version %q is not MAJOR.MINOR.PATCH: %w", e.SkillID, e.Version, ErrInvalidEntry)
	}
	if len(e.ArtifactSHA256) != 64 {
		return fmt.Errorf("%s %s: artifact_sha256 is %d characters, want 64 hex: %w", e.SkillID, e.Version, len(e.ArtifactSHA256), ErrInvalidEntry)
	}
	if _, err := hex.DecodeString(e.ArtifactSHA256); err != nil {
		return fmt.Errorf("%s %s: artifact_sha256 is not hex: %w", e.SkillID, e.Version, ErrInvalidEntry)
	}
	return nil
}

var signatureFields = []string{"algorithm", "publisher", "key_id", "public_key_base64", "payload_sha256", "signature_base64", "signed_at_unix_ms"}

func parseSignature(raw json.RawMessage) (Signature, error) {
	f, err := object(raw, "signature", signatureFields, nil)
	if err != nil {
		return Signature{}, err
	}
	var s Signature
	for _, p := range []struct {
		name string
		dst  *string
	}{{"algorithm", &s.Algorithm}, {"publisher", &s.Publisher}, {"key_id", &s.KeyID}, {"public_key_base64", &s.PublicKeyBase64}, {"payload_sha256", &s.PayloadSHA256}, {"signature_base64", &s.SignatureBase64}} {
		if *p.dst, err = jsonString(f[p.name]); err != nil {
			return Signature{}, invalid("signature." + p.name + " is not a string")
		}
	}
	if s.SignedAtUnixMS, err = strconv.ParseInt(string(f["signed_at_unix_ms"]), 10, 64); err != nil {
		return Signature{}, invalid("signature.signed_at_unix_ms is not an integer that fits in 64 bits")
	}
	return s, nil
}

func invalid(detail string) error {
	return fmt.Errorf("registry: index: %s: %w", detail, ErrInvalidIndex)
}

func schemaVersion(raw json.RawMessage, name string) (uint32, error) {
	n, err := strconv.ParseUint(string(raw), 10, 32)
	if err != nil {
		return 0, invalid(name + " is not an unsigned 32-bit integer")
	}
	if n != SchemaVersion {
		return 0, invalid(fmt.Sprintf("%s is %d, want %d", name, n, SchemaVersion))
	}
	return uint32(n), nil
}

func isNull(raw json.RawMessage) bool { return string(raw) == "null" }

// object decodes data as one JSON object and nothing after it whose keys
// are all in required or optional, each at most once, every required one
// present (serde's rules for a struct with deny_unknown_fields). Values are
// returned raw.
func object(data []byte, what string, required, optional []string) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil {
		return nil, invalid(what + " is not JSON")
	} else if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, invalid(what + " is not a JSON object")
	}
	known := make(map[string]bool, len(required)+len(optional))
	for _, k := range required {
		known[k] = true
	}
	for _, k := range optional {
		known[k] = true
	}
	out := make(map[string]json.RawMessage, len(known))
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, invalid(what + " is not JSON")
		}
		key, _ := tok.(string)
		if !known[key] {
			return nil, invalid(what + " has an unknown field " + strconv.Quote(key))
		}
		if _, dup := out[key]; dup {
			return nil, invalid(what + " has the field " + strconv.Quote(key) + " twice")
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, invalid(what + " is not JSON")
		}
		out[key] = raw
	}
	if _, err := dec.Token(); err != nil {
		return nil, invalid(what + " is not JSON")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, invalid("trailing data after " + what)
	}
	for _, k := range required {
		if _, ok := out[k]; !ok {
			return nil, invalid(what + " lacks the field " + strconv.Quote(k))
		}
	}
	return out, nil
}

// array decodes raw as a JSON array.
func array(raw json.RawMessage, what string) ([]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil {
		return nil, invalid(what + " is not JSON")
	} else if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, invalid(what + " is not an array")
	}
	var items []json.RawMessage
	for dec.More() {
		var item json.RawMessage
		if err := dec.Decode(&item); err != nil {
			return nil, invalid(what + " is not JSON")
		}
		items = append(items, item)
	}
	return items, nil
}

// jsonString decodes raw as a JSON string; null and other types fail.
func jsonString(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", errors.New("want a string")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", err
	}
	return s, nil
}

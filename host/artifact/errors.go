package artifact

import (
	"strconv"
	"strings"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/internal/skillpath"
)

// The sentinels of the package. Every error returned by this package wraps
// one of them (or a sentinel of host/manifest), so callers branch with
// errors.Is and report errcode.Of(err); doc.go lists every code.
var (
	// ErrPayloadHashMismatch: the payload hash recomputed from the entries
	// differs from signature.json's payload_sha256 (a changed, added or
	// removed entry).
	ErrPayloadHashMismatch = errcode.New("payload_hash_mismatch", "payload hash mismatch")
	// ErrSignatureVerification: signature.json is internally inconsistent
	// (algorithm, public key, key_id, signature encoding), the Ed25519
	// signature does not verify, or its publisher is not the manifest's.
	ErrSignatureVerification = errcode.New("signature_verification_failed", "signature verification failed")
	// ErrInvalidPath: an entry name or an integrity path breaks the artifact
	// path rule. It is skillpath.ErrInvalid, so the code is shared.
	ErrInvalidPath = skillpath.ErrInvalid
	// ErrDuplicateEntry: two entries have the same name after normalization.
	ErrDuplicateEntry = errcode.New("duplicate_artifact_entry", "duplicate entry")
	// ErrArtifactTooLarge: the artifact file, or the running total of its
	// uncompressed entries, is above MaxArtifactBytes.
	ErrArtifactTooLarge = errcode.New("artifact_too_large", "artifact too large")
	// ErrEntryTooLarge: one entry is above MaxEntryBytes.
	ErrEntryTooLarge = errcode.New("artifact_entry_too_large", "entry too large")
	// ErrTooManyEntries: the archive holds more than MaxEntries entries.
	ErrTooManyEntries = errcode.New("too_many_entries", "too many entries")
	// ErrMissingEntry: a required entry is absent; Error.Path names it
	// ("modules/*.wasm" when there is no module).
	ErrMissingEntry = errcode.New("missing_artifact_entry", "missing entry")
	// ErrInvalidSBOM: sbom.cdx.json is not a CycloneDX JSON object.
	ErrInvalidSBOM = errcode.New("invalid_sbom", "invalid sbom")
	// ErrInvalidProvenance: provenance.json lacks a builder object or a
	// non-empty subject array.
	ErrInvalidProvenance = errcode.New("invalid_provenance", "invalid provenance")
	// ErrInvalidSignatureDocument: signature.json is not a strict
	// signature document (bad JSON, unknown, duplicate or missing field,
	// wrong type).
	ErrInvalidSignatureDocument = errcode.New("invalid_signature_document", "invalid signature document")
	// ErrInvalidZip: the bytes are not a ZIP archive, or an entry is corrupt
	// (bad deflate stream, CRC mismatch, size differing from its header).
	ErrInvalidZip = errcode.New("invalid_zip", "invalid zip")
	// ErrUnsupportedCompression: an entry uses a method other than Stored
	// (0) or Deflate (8).
	ErrUnsupportedCompression = errcode.New("unsupported_compression", "unsupported compression method")
	// ErrEncryptedEntry: an entry has the encryption flag set.
	ErrEncryptedEntry = errcode.New("encrypted_entry", "encrypted entry")
	// ErrNonRegularEntry: an entry is a symlink, device, FIFO, socket, or a
	// directory whose name does not end in '/'.
	ErrNonRegularEntry = errcode.New("non_regular_entry", "non-regular entry")
	// ErrCompressionRatio: an entry inflates beyond MaxCompressionRatio.
	ErrCompressionRatio = errcode.New("compression_ratio_exceeded", "compression ratio exceeded")
	// ErrInvalidSigningKey: a signing key is not 32 bytes in any accepted
	// form; Error.Actual is the length seen.
	ErrInvalidSigningKey = errcode.New("invalid_signing_key", "invalid signing key")
	// ErrTrustRequired: Verify was called without a TrustDecider, or the
	// decider returned no decision. Verification fails closed.
	ErrTrustRequired = errcode.New("trust_decider_required", "trust decider required")
	// ErrInvalidBuildInput: a BuildInput field is missing (no signing time,
	// or a Generate without BuilderVersion or Now).
	ErrInvalidBuildInput = errcode.New("invalid_build_input", "invalid build input")
)

// Error is a failure tied to an entry or a limit. It wraps Err, one of the
// package's sentinels (or manifest.ErrValidation for an integrity mismatch),
// and, when set, the underlying cause; use errors.As to read the fields.
type Error struct {
	// Err is the sentinel.
	Err error
	// Path is the entry concerned ("" when the error is about the whole
	// artifact): the normalized name where one exists, else the raw name.
	Path string
	// Limit and Actual are set by limit errors: the limit that was broken
	// and the size (bytes, entries, ratio) seen. For ErrTooManyEntries
	// detected while the central directory is still being parsed, Actual
	// is a lower bound. ErrInvalidSigningKey sets only Actual, the length
	// of the key seen.
	Limit, Actual int64
	// Detail says what is wrong, lower case, no trailing period.
	Detail string
	// Cause is the underlying error, or nil.
	Cause error
}

// Error formats the error as "artifact: <sentinel> "<path>": <detail>".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("artifact: ")
	b.WriteString(e.Err.Error())
	if e.Path != "" {
		b.WriteString(" ")
		b.WriteString(strconv.Quote(e.Path))
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	if e.Limit != 0 {
		b.WriteString(": ")
		b.WriteString(strconv.FormatInt(e.Actual, 10))
		b.WriteString(" (limit ")
		b.WriteString(strconv.FormatInt(e.Limit, 10))
		b.WriteString(")")
	}
	if e.Cause != nil {
		b.WriteString(": ")
		b.WriteString(e.Cause.Error())
	}
	return b.String()
}

// Unwrap returns Err and, when set, Cause. Err comes first so that
// errcode.Of reports the package's code, not the cause's.
func (e *Error) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Err, e.Cause}
	}
	return []error{e.Err}
}

func limitErr(sentinel error, path string, limit, actual int64) *Error {
	return &Error{Err: sentinel, Path: path, Limit: limit, Actual: actual}
}

// Package artifact builds, reads, inspects and verifies .palyra-skill
// artifacts: the signed ZIP files that carry a skill's manifest, wasm
// modules, assets, SBOM and provenance.
//
// An artifact moves through four stages, and this package owns the first
// two:
//
//   - package: [Build] turns a manifest, modules, assets, an SBOM, a
//     provenance document and an Ed25519 key into a deterministic, signed
//     artifact; with [Generate] it writes the SBOM (CycloneDX 1.6) and the
//     provenance (in-toto Statement v1, SLSA Provenance v1) itself when
//     they are not given;
//   - verify: [Read] decodes the ZIP under hard limits, [Inspect] checks
//     structure, payload hash, signature, publisher and integrity list,
//     and [Verify] adds the publisher trust decision (a [TrustDecider],
//     host/trust in production) and returns Palyra's verification report;
//   - audit: the static security audit runs on a verified artifact;
//   - install: the installer writes the verified entries (never re-reading
//     the file, so what was verified is what gets installed).
//
// The format is Palyra's, byte for byte where it matters: an artifact
// built by Palyra verifies here and one built here verifies in Palyra. The
// signature covers the entry contents, not the ZIP container:
// payload_sha256 is SHA-256 over "palyra.skill.payload.v1" and every entry
// but signature.json, length-prefixed, in byte-wise path order
// ([PayloadSHA256]); the Ed25519 signature is over the ASCII hex of that
// hash; signature.json records it with the key and [KeyID].
//
// # Verification order
//
// [Read] is step 1 (container rules and limits). [Archive.Inspect] runs
// steps 2–11 in Palyra's order: skill.toml, sbom.cdx.json,
// provenance.json, a modules/*.wasm entry, signature.json, payload hash,
// signature, publisher, integrity list, compatibility. [Verify] adds step
// 12, the trust decision ([Inspection.Verify] does it for an artifact
// already inspected). The first failure is returned; which error wins
// when an artifact has several faults is part of the contract.
//
// # Limits
//
// [MaxArtifactBytes] (64 MiB: file size and total uncompressed bytes),
// [MaxEntryBytes] (16 MiB per entry) and [MaxEntries] (256 entries,
// directory entries included) are Palyra's and hold for reading and
// building. They are enforced on bytes actually inflated, never on header
// claims alone. Only Stored and Deflate are read; encrypted entries,
// symlinks and other non-regular entries are refused.
//
// # Differences from Palyra
//
// This package refuses a few archives Palyra would accept, none of which a
// correct builder writes:
//
//   - a Deflate entry that inflates past [CompressionRatioGrace] (1 MiB)
//     and past [MaxCompressionRatio] (1000) times its compressed size,
//     i.e. megabytes of near-constant data (Build refuses to write one);
//   - symlink, device, FIFO and socket entries, and encrypted entries
//     (Palyra fails on the latter too, with a generic zip error);
//   - non-ASCII entry names without the ZIP UTF-8 flag (Palyra would read
//     them as CP437 and see another name);
//   - an archive whose central directory holds more than 1024 records
//     (Palyra counts them first, then refuses more than 256; this package
//     stops parsing early so a hostile directory cannot cost memory).
//
// # Error codes
//
// Every error wraps a sentinel with a stable code (host/errcode); limit and
// entry errors are *[Error] values carrying Path, Limit and Actual.
//
//	payload_hash_mismatch          ErrPayloadHashMismatch: recomputed hash ≠ payload_sha256
//	signature_verification_failed  ErrSignatureVerification: algorithm, key, key_id, encoding, Ed25519 or publisher
//	invalid_artifact_path          ErrInvalidPath (skillpath.ErrInvalid): entry or integrity path breaks the path rule
//	duplicate_artifact_entry       ErrDuplicateEntry: two entries equal after normalization
//	artifact_too_large             ErrArtifactTooLarge: file or total uncompressed bytes > MaxArtifactBytes
//	artifact_entry_too_large       ErrEntryTooLarge: one entry > MaxEntryBytes
//	too_many_entries               ErrTooManyEntries: more than MaxEntries entries
//	missing_artifact_entry         ErrMissingEntry: a required entry is absent (Path names it)
//	invalid_sbom                   ErrInvalidSBOM: sbom.cdx.json is not a CycloneDX object
//	invalid_provenance             ErrInvalidProvenance: provenance.json lacks builder or subject
//	invalid_signature_document     ErrInvalidSignatureDocument: signature.json is not a strict signature document
//	invalid_zip                    ErrInvalidZip: not a ZIP, corrupt entry, CRC mismatch
//	unsupported_compression        ErrUnsupportedCompression: method other than Stored or Deflate
//	encrypted_entry                ErrEncryptedEntry: entry with the encryption flag
//	non_regular_entry              ErrNonRegularEntry: symlink, device, FIFO, socket, unmarked directory
//	compression_ratio_exceeded     ErrCompressionRatio: entry inflates beyond MaxCompressionRatio
//	invalid_signing_key            ErrInvalidSigningKey: key not 32 bytes in any accepted form
//	trust_decider_required         ErrTrustRequired: Verify without a TrustDecider, or no decision returned
//	invalid_build_input            ErrInvalidBuildInput: BuildInput lacks SignedAt, or Generate is incomplete
//
// Errors of host/manifest pass through with their codes: manifest_parse,
// manifest_validation (also an integrity-list mismatch, a module path
// without ".wasm", or no module at build), and the compat codes
// unsupported_protocol_major, unsupported_runtime_version and
// runtime_version_above_supported_maximum. Errors of the TrustDecider pass
// through wrapped.
//
// # Concurrency
//
// All functions are safe for concurrent use. An [Archive] and an
// [Inspection] are immutable; the byte slices they expose must not be
// modified. Verify calls the TrustDecider once per call.
package artifact

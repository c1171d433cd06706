// Package registry reads and writes Palyra's signed registry index
// (facts §3.7): the index.json a publisher builds over a directory of
// .palyra-skill files ([Build]), serves over HTTPS or leaves in a local
// directory, and that installers read ([Client.Index], [ReadDir]) to find a
// skill version and download its artifact ([Client.Artifact]).
//
// # Format
//
// A [Document] is {schema_version: 1, index, signature}. The signature is
// the artifact signature document of package artifact over the index: its
// payload_sha256 is the SHA-256 hex of [Payload], the index re-serialized as
// compact JSON the way serde_json writes it (fields in the order of the
// [Index] and [Entry] types, artifact_bytes and next_page left out when
// absent, no HTML escaping and no other escaping than serde's), and the
// Ed25519 signature is over the ASCII bytes of that hex string. The key_id
// rule is the artifact's ([artifact.KeyID]). The index's signing key is
// judged by the caller's trust callback, which applies the trust store's
// allowlist and trust-on-first-use rules (as for artifacts).
//
// # Limits
//
// The limits are Palyra's: [MaxIndexPageBytes] per page (checked before
// parsing), [MaxEntries] over all pages, [MaxPages] pages, a page seen twice
// is a loop, [MaxArtifactDownloadBytes] per artifact (reading stops past
// it), and [Timeout] per request. A registry URL is https only; next_page
// and artifact URLs are resolved against the page that names them and must
// stay on the index's origin (scheme, host and port). A local registry's
// artifacts must stay inside its directory (no "..", no absolute path, no
// symlink out of it).
//
// Entry checks, in this order per entry: non-empty skill_id, publisher and
// artifact, a MAJOR.MINOR.PATCH version (host/manifest's rule, the one
// artifact manifests use), an artifact_sha256 of 64 hex characters; then no
// two entries with the same (skill_id, version), across pages too.
//
// # Error codes
//
//	registry_index_invalid            ErrInvalidIndex: not a strict index document (unknown or duplicate field, wrong type, schema_version not 1)
//	registry_entry_invalid            ErrInvalidEntry: an entry fails a check (empty field, version, artifact_sha256)
//	registry_duplicate_entry          ErrDuplicateEntry: two entries for one (skill_id, version)
//	registry_signature_invalid        ErrSignatureInvalid: payload hash, algorithm, key, key_id or Ed25519 signature
//	registry_trust_required           ErrTrustRequired: Verify without a trust callback
//	registry_insecure_url             ErrInsecureURL: a registry URL that is not https
//	registry_cross_origin             ErrCrossOrigin: next_page, an artifact URL or a redirect off the index's origin
//	registry_page_too_large           ErrPageTooLarge: an index page over MaxIndexPageBytes
//	registry_too_many_entries         ErrTooManyEntries: more than MaxEntries entries
//	registry_too_many_pages           ErrTooManyPages: more than MaxPages pages
//	registry_page_loop                ErrPageLoop: next_page names a page already read
//	registry_artifact_too_large       ErrArtifactTooLarge: a download over MaxArtifactDownloadBytes
//	registry_artifact_sha256_mismatch ErrSHA256Mismatch: the artifact's sha256 is not the entry's
//	registry_unsafe_path              ErrUnsafePath: a local artifact path leaving the registry directory
//	registry_fetch_failed             ErrFetch: a request failed or answered other than 200
//	registry_build_failed             ErrBuild: a file of the directory failed inspection, or the directory cannot be scanned
//
// Errors of the trust callback (untrusted_publisher, tofu_key_mismatch,
// trusted_publisher_key_mismatch) pass through wrapped, with their codes.
package registry

package registry

import "github.com/palyra-go/palyra/host/errcode"

// Sentinels of this package; see the package doc for when each applies.
var (
	// ErrInvalidIndex is a document that is not a strict index document.
	ErrInvalidIndex = errcode.New("registry_index_invalid", "invalid registry index")
	// ErrInvalidEntry is an index entry that fails a check.
	ErrInvalidEntry = errcode.New("registry_entry_invalid", "invalid registry index entry")
	// ErrDuplicateEntry is a second entry for one (skill_id, version).
	ErrDuplicateEntry = errcode.New("registry_duplicate_entry", "duplicate registry index entry")
	// ErrSignatureInvalid is an index whose signature does not verify.
	ErrSignatureInvalid = errcode.New("registry_signature_invalid", "registry index signature does not verify")
	// ErrTrustRequired is a Verify without a trust callback.
	ErrTrustRequired = errcode.New("registry_trust_required", "registry index needs a trust decision")
	// ErrInsecureURL is a registry URL whose scheme is not https.
	ErrInsecureURL = errcode.New("registry_insecure_url", "registry URL is not https")
	// ErrCrossOrigin is a URL off the index's origin.
	ErrCrossOrigin = errcode.New("registry_cross_origin", "registry URL leaves the index origin")
	// ErrPageTooLarge is an index page over MaxIndexPageBytes.
	ErrPageTooLarge = errcode.New("registry_page_too_large", "registry index page too large")
	// ErrTooManyEntries is an index over MaxEntries entries.
	ErrTooManyEntries = errcode.New("registry_too_many_entries", "too many registry index entries")
	// ErrTooManyPages is an index over MaxPages pages.
	ErrTooManyPages = errcode.New("registry_too_many_pages", "too many registry index pages")
	// ErrPageLoop is a next_page naming a page already read.
	ErrPageLoop = errcode.New("registry_page_loop", "registry index pages loop")
	// ErrArtifactTooLarge is an artifact over MaxArtifactDownloadBytes.
	ErrArtifactTooLarge = errcode.New("registry_artifact_too_large", "registry artifact too large")
	// ErrSHA256Mismatch is an artifact whose sha256 is not the entry's.
	ErrSHA256Mismatch = errcode.New("registry_artifact_sha256_mismatch", "registry artifact sha256 does not match the index")
	// ErrUnsafePath is a local artifact path leaving the registry directory.
	ErrUnsafePath = errcode.New("registry_unsafe_path", "registry artifact path leaves the registry directory")
	// ErrFetch is a registry request that failed or was not answered 200.
	ErrFetch = errcode.New("registry_fetch_failed", "registry request failed")
	// ErrBuild is a registry directory that cannot be indexed.
	ErrBuild = errcode.New("registry_build_failed", "registry index build failed")
)

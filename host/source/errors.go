package source

import "github.com/palyra-go/palyra/host/errcode"

// Sentinels of this package. Registry and OCI failures carry the codes of
// packages registry and oci.
var (
	// ErrInvalidRef is a Ref or a recorded source that names no fetchable
	// artifact (none or two of OCI, RegistryURL and RegistryDir; an index
	// without a skill id; a malformed reference).
	ErrInvalidRef = errcode.New("invalid_source", "invalid source reference")
	// ErrNotPublished is a skill or version the source does not have.
	ErrNotPublished = errcode.New("not_published", "skill version not published at the source")
	// ErrIdentityMismatch is an artifact whose manifest names another skill
	// id, version or publisher than the source said.
	ErrIdentityMismatch = errcode.New("registry_identity_mismatch", "artifact identity does not match the source")
	// ErrNoSource is an installed skill with no registry source recorded
	// (installed from a file), which outdated and update cannot follow.
	ErrNoSource = errcode.New("no_source", "skill has no registry source")
)

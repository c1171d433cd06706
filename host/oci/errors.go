package oci

import "github.com/palyra-go/palyra/host/errcode"

// Sentinels of this package; see the package doc for their codes.
var (
	// ErrInvalidReference is a malformed oci:// reference.
	ErrInvalidReference = errcode.New("oci_invalid_reference", "invalid oci reference")
	// ErrPlainHTTPRefused is plain HTTP asked for a registry that is not on
	// a loopback address.
	ErrPlainHTTPRefused = errcode.New("oci_plain_http_refused", "plain http refused for a non-loopback registry")
	// ErrDigestMismatch is a manifest or layer whose bytes do not hash to
	// the digest that named them.
	ErrDigestMismatch = errcode.New("oci_digest_mismatch", "oci content does not match its digest")
	// ErrManifestTooLarge is a manifest above MaxManifestBytes.
	ErrManifestTooLarge = errcode.New("oci_manifest_too_large", "oci manifest too large")
	// ErrLayerTooLarge is a layer above artifact.MaxArtifactBytes.
	ErrLayerTooLarge = errcode.New("oci_layer_too_large", "oci layer too large")
	// ErrNotASkill is a manifest that is not one layer of the skill media
	// type.
	ErrNotASkill = errcode.New("oci_not_a_skill", "oci manifest is not a palyra skill")
	// ErrNotFound is a repository, tag or digest the registry does not have.
	ErrNotFound = errcode.New("oci_not_found", "oci reference not found")
	// ErrUnauthorized is a registry refusing the credentials given (or
	// their absence).
	ErrUnauthorized = errcode.New("oci_unauthorized", "oci registry refused the credentials")
	// ErrRegistry is any other registry failure.
	ErrRegistry = errcode.New("oci_registry_error", "oci registry request failed")
)
